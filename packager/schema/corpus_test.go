package schema

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusDir is ../shared/corpus/resource-schemas relative to this package.
var corpusDir = filepath.Join("..", "..", "..", "shared", "corpus", "resource-schemas")

func needCorpus(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skip("corpus not available: ", corpusDir)
	}
}

// TestPublishedSchemas validates every published AWS schema: all must pass.
func TestPublishedSchemas(t *testing.T) {
	needCorpus(t)
	files, err := filepath.Glob(filepath.Join(corpusDir, "corpus", "aws-cloudformation-schema", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1665 {
		t.Fatalf("found %d published schemas, want 1665", len(files))
	}
	v, err := DefaultValidator()
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, r := range v.ValidateFiles(files, 0) {
		if !r.Valid {
			bad++
			if bad <= 20 {
				t.Errorf("%s: %v", filepath.Base(r.File), r.Errors)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d published schemas invalid", bad, len(files))
	}
}

// TestIndexVerdicts reproduces every valid/invalid verdict in index.tsv.
func TestIndexVerdicts(t *testing.T) {
	needCorpus(t)
	f, err := os.Open(filepath.Join(corpusDir, "index.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := DefaultValidator()
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	sc.Scan() // header
	checked := 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		file, verdict := cols[0], cols[1]
		var want bool
		switch {
		case verdict == "valid" || verdict == "valid (hook)":
			want = true
		case verdict == "invalid" || verdict == "invalid (semantic)":
			want = false
		default:
			continue // meta-schemas, shared definitions, model documents
		}
		checked++
		path := filepath.Join(corpusDir, filepath.FromSlash(file))
		r := v.ValidateFile(path)
		if beyondSpec(cols[2]) {
			// cloudformation-resource-schema's checks beyond the spec and
			// cloudformation-cli: a warning by default, its verdict in
			// strict mode.
			if !r.Valid || len(r.Warnings) == 0 {
				t.Errorf("%s: valid=%v warnings=%v, want valid with a warning by default (%s)", file, r.Valid, r.Warnings, cols[2])
			}
			r = v.Strict().ValidateFile(path)
		}
		if r.Valid != want {
			t.Errorf("%s: valid=%v, index says %s (%s); errors: %v", file, r.Valid, verdict, cols[2], r.Errors)
		}
	}
	t.Logf("%d verdicts checked", checked)
	if checked != 101 {
		t.Errorf("checked %d verdicts, want 101 (55 valid, 8 valid hooks, 33 invalid, 5 invalid semantic)", checked)
	}
}

// beyondSpec reports whether an index.tsv reason is one of the checks of
// cloudformation-resource-schema that neither the specification nor
// cloudformation-cli makes, warnings unless strict (issue 19 item 16).
func beyondSpec(reason string) bool {
	return strings.Contains(reason, "tagUpdatable true but no update handler") ||
		strings.Contains(reason, "both deprecated taggable and tagging present")
}

// BenchmarkValidateCorpus validates all 1,665 published schemas, in
// parallel, per iteration (the meta-schema is compiled once, outside).
func BenchmarkValidateCorpus(b *testing.B) {
	needCorpus(b)
	files, err := filepath.Glob(filepath.Join(corpusDir, "corpus", "aws-cloudformation-schema", "*.json"))
	if err != nil || len(files) == 0 {
		b.Fatalf("no corpus files: %v", err)
	}
	v, err := DefaultValidator()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, r := range v.ValidateFiles(files, 0) {
			if !r.Valid {
				b.Fatalf("%s invalid: %v", r.File, r.Errors)
			}
		}
	}
}

// TestCheckCommunityTemplates checks the community modules' consumer
// templates against the published schemas: only the ::MODULE types, which
// are not resource types, are unknown.
func TestCheckCommunityTemplates(t *testing.T) {
	needCorpus(t)
	if testing.Short() {
		t.Skip("loads 1,665 schemas")
	}
	c, err := LoadCatalog(filepath.Join(corpusDir, "corpus", "aws-cloudformation-schema"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Types()); n != 1665 {
		t.Fatalf("%d types, want 1665", n)
	}
	files, _ := filepath.Glob(filepath.Join(corpusDir, "..", "registry-modules", "community-registry-extensions", "modules", "*", "test", "*.y*ml"))
	if len(files) == 0 {
		t.Skip("registry-modules corpus not available")
	}
	modules := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		found, err := c.CheckTemplate(f, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, fd := range found {
			if strings.HasPrefix(fd.Message, "unknown resource type AwsCommunity::") && strings.Contains(fd.Message, "::MODULE") {
				modules++
				continue
			}
			t.Errorf("unexpected finding: %s", fd)
		}
	}
	if modules != 4 {
		t.Errorf("%d unknown module types, want 4", modules)
	}
}
