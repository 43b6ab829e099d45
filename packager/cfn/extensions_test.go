package cfn

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/packager/cfn/internal/ynode"
	"github.com/klauspost/compress/zip"
	"github.com/rogpeppe/go-internal/txtar"
	yaml "go.yaml.in/yaml/v3"
)

var updateExt = flag.Bool("update-ext", false, "rewrite the want files of testdata/ext")

var extSentinels = map[string]error{
	"ErrInvalid":     ErrInvalid,
	"ErrOutsideRoot": ErrOutsideRoot,
	"ErrTooLarge":    ErrTooLarge,
}

// TestExtensions runs the golden cases of Fn::Flatten, module hashes and
// sources in testdata/ext, in the format
// of packager/testdata/expand: a comment of "key: value" lines (error: the
// sentinel the case fails with), the files, and "want" (the packaged YAML,
// or the error message with the case folder removed).
func TestExtensions(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "ext", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			hdr := map[string]string{}
			for _, line := range strings.Split(string(ar.Comment), "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok {
					hdr[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
			dir := t.TempDir()
			var want *txtar.File
			for i := range ar.Files {
				f := &ar.Files[i]
				if f.Name == "want" {
					want = f
					continue
				}
				p := filepath.Join(dir, filepath.FromSlash(f.Name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want == nil {
				t.Fatal("archive has no want file")
			}
			got := packageCase(t, dir, hdr["error"])
			if *updateExt {
				want.Data = got
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(got, want.Data) {
				t.Errorf("output differs (go test ./packager/cfn -update-ext rewrites it)\n--- got:\n%s\n--- want:\n%s", got, want.Data)
			}
		})
	}
}

func packageCase(t *testing.T, dir, sentinel string) []byte {
	t.Helper()
	tmpl, err := Package(filepath.Join(dir, "template.yaml"), Options{Root: dir, NoSourceMap: true})
	if sentinel != "" {
		if err == nil {
			t.Fatalf("packaged without error, want %s", sentinel)
		}
		var ce *Error
		if !errors.Is(err, extSentinels[sentinel]) || !errors.As(err, &ce) {
			t.Fatalf("error %v is not a *cfn.Error wrapping %s", err, sentinel)
		}
		msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
		return []byte(strings.ReplaceAll(msg, dir, "$PROJECT") + "\n")
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err := EncodeYAML(tmpl.Root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPackagesZip packages a template whose modules come from a package
// zip; a module in the package names its neighbour by a relative path.
func TestPackagesZip(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range map[string]string{
		"net/vpc.yaml":    "Modules:\n  Sub:\n    Source: ../common/tag.yaml\nResources:\n  Vpc:\n    Type: AWS::EC2::VPC\n",
		"common/tag.yaml": "Resources:\n  Tag:\n    Type: X::Tag\n",
	} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lib.zip", buf.String())
	write("template.yaml", "Packages:\n  lib:\n    Source: ./lib.zip\nModules:\n  Net:\n    Source: $lib/net/vpc.yaml\n")
	got := packageCase(t, dir, "")
	want := "Resources:\n  NetVpc:\n    Type: AWS::EC2::VPC\n  NetSubTag:\n    Type: X::Tag\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	write("template.yaml", "Modules:\n  Net:\n    Source: $lib/net/vpc.yaml\n")
	if msg := string(packageCase(t, dir, "ErrInvalid")); !strings.Contains(msg, "unknown package alias") {
		t.Errorf("without Packages: %s", msg)
	}
	write("evil.zip", zipOf(t, "../escape.yaml"))
	write("template.yaml", "Packages:\n  evil:\n    Source: evil.zip\nModules:\n  E:\n    Source: $evil/escape.yaml\n")
	if msg := string(packageCase(t, dir, "ErrInvalid")); !strings.Contains(msg, "insecure file name") {
		t.Errorf("unsafe zip: %s", msg)
	}
}

func zipOf(t *testing.T, name string) string {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("Resources: {}\n"))
	zw.Close()
	return buf.String()
}

// TestCorpusExtensions runs the peer suite's cases for the features wired
// in extensions.go and compares the output with the expectation as data.
func TestCorpusExtensions(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "corpus", "modules", "aws-cli")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("peer corpus not present:", err)
	}
	for _, c := range []struct {
		name  string
		loose bool
	}{
		{"flatten", false}, {"flatten-basic", false},
		{"flatten-transform", true}, // quoted account ids stay strings (see package flatten)
		{"zip", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Package(filepath.Join(dir, c.name+"-template.yaml"), Options{NoSourceMap: true})
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, c.name+"-expect.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := Parse(c.name+"-expect.yaml", b)
			if err != nil {
				t.Fatal(err)
			}
			eq := ynode.Equal
			if c.loose {
				eq = looseEqual
			}
			if !eq(got.Root, want.Root) {
				out, _ := EncodeYAML(got.Root)
				t.Errorf("got\n%s\nwant\n%s", out, b)
			}
		})
	}
}

func looseEqual(a, b *yaml.Node) bool {
	if a == nil || b == nil || a.Kind != b.Kind || len(a.Content) != len(b.Content) {
		return a == b
	}
	switch a.Kind {
	case yaml.ScalarNode:
		return a.Value == b.Value
	case yaml.MappingNode:
		for i := 0; i < len(a.Content); i += 2 {
			if !looseEqual(a.Content[i+1], mapGet(b, a.Content[i].Value)) {
				return false
			}
		}
		return true
	}
	for i := range a.Content {
		if !looseEqual(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}
