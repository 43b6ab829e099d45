package assembly

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"github.com/cloud-assembly/assemble/errcode"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zip"

	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/internal/readmetest"
)

var update = flag.Bool("update", false, "rewrite the README's table of findings")

func fileSet(names ...string) *FileSet {
	s := NewFileSet()
	for _, n := range names {
		s.Add(n, 1)
	}
	return s
}

// A path property must name a file (or a folder holding files) inside the
// archive, by its plain archive name.
func TestCheckPaths(t *testing.T) {
	files := []string{ManifestName, "t.yml", "stacks/a.yml", "site/index.html", "site/css/style.css", SignatureName}
	tests := []struct {
		prop, value string
		rule        string
	}{
		{"template", "t.yml", ""},
		{"template", "stacks/a.yml", ""},
		{"template", "nope.yml", "missing-file"},
		{"template", "stacks", "missing-file"},
		{"template", "/t.yml", "path-unsafe"},
		{"template", "../t.yml", "path-unsafe"},
		{"template", "stacks/../t.yml", "path-unsafe"},
		{"template", `..\t.yml`, "path-unsafe"},
		{"template", "./t.yml", "path-unsafe"},
		{"template", "stacks//a.yml", "path-unsafe"},
		{"template", "C:/t.yml", "path-unsafe"},
		{"template", "", "path-unsafe"},
		{"template", SignatureName, "missing-file"},
		{"stackPolicy", "policy.json", "missing-file"},
		{"directory", "site", ""},
		{"directory", "site/", ""},
		{"directory", "site/css", ""},
		{"directory", "sit", "missing-file"},
		{"directory", "t.yml", "missing-file"},
		{"directory", "../site", "path-unsafe"},
		{"directory", "/site", "path-unsafe"},
		{"blueprint", "stacks/a.yml", ""},
		{"blueprint", "bp/app.yaml", "missing-file"},
		{"blueprint", "../bp/app.yaml", "path-unsafe"},
	}
	for _, tt := range tests {
		t.Run(tt.prop+"="+tt.value, func(t *testing.T) {
			var d string
			switch tt.prop {
			case "blueprint":
				d = `"A":{"type":"` + droplets.BlueprintType + `",` + env + `,"properties":{"blueprint":"` + jsonEscape(tt.value) + `"}}`
			case "directory":
				d = `"A":{"type":"npm://@aws-cdk/assets.DirectoryDroplet",` + env + `,"properties":{"directory":"` + jsonEscape(tt.value) + `","bucketName":"b"}}`
			default:
				policy := ""
				if tt.prop == "stackPolicy" {
					policy = `,"template":"t.yml"`
				}
				d = `"A":{"type":"npm://@aws-cdk/aws-cloudformation.StackDroplet",` + env + `,"properties":{"stackName":"s"` + policy + `,"` + tt.prop + `":"` + jsonEscape(tt.value) + `"}}`
			}
			rep, err := Check([]byte(manifestWith(d)), fileSet(files...), CheckOptions{})
			if tt.rule == "" {
				if err != nil {
					t.Fatalf("got %v", err)
				}
				return
			}
			want := map[string]error{"missing-file": ErrMissingFile, "path-unsafe": ErrInsecurePath}[tt.rule]
			if !errors.Is(err, want) || !errors.Is(err, ErrManifest) {
				t.Fatalf("got %v, want %v", err, want)
			}
			found := false
			for _, f := range rep.Errors() {
				found = found || (f.Rule == tt.rule && f.Droplet == "A" && f.Field == "properties."+tt.prop)
			}
			if !found {
				t.Fatalf("no %s finding at properties.%s: %v", tt.rule, tt.prop, rep.Findings)
			}
		})
	}
}

func jsonEscape(s string) string { return strings.ReplaceAll(s, `\`, `\\`) }

// The spec's complete example manifest (trailing commas removed), with its
// files, is valid: the properties it uses beyond the illustrative tables
// are warnings, and --strict makes them errors with the same text.
func TestCheckSpecExample(t *testing.T) {
	dir := filepath.Join("..", "fixtures", "spec-example")
	files := NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		st, _ := d.Info()
		files.Add(filepath.ToSlash(rel), st.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Check(b, files, CheckOptions{})
	if err != nil {
		t.Fatalf("the spec's example is invalid: %v", err)
	}
	want := []string{
		`droplet DockerImage: properties.imageName: unknown property "imageName": DockerImageDroplet documents savedImage, pushTarget, tagName [unknown-property]`,
		`droplet DockerImage: properties.pushTarget: invalid property: DockerImageDroplet needs "pushTarget" [property-missing]`,
		`droplet PipelineStack: properties.stackName: invalid property: StackDroplet needs "stackName" [property-missing]`,
		`droplet ServiceStack-beta: properties.stackName: invalid property: StackDroplet needs "stackName" [property-missing]`,
		`droplet ServiceStack-prod: properties.stackName: invalid property: StackDroplet needs "stackName" [property-missing]`,
	}
	if got := texts(rep.Findings); got != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	for _, f := range rep.Findings {
		if f.Severity != Warning {
			t.Errorf("%s: severity %v", f, f.Severity)
		}
	}
	if got := strings.Join(rep.Order, ","); got != "PipelineStack,DockerImage,StaticFiles,ServiceStack-beta,ServiceStack-prod" {
		t.Errorf("order %s", got)
	}
	_, err = Check(b, files, CheckOptions{Strict: true})
	var ce *CheckError
	if !errors.As(err, &ce) || texts(ce.Findings) != strings.Join(want, "\n") {
		t.Fatalf("strict: got %v", err)
	}
	if !errors.Is(err, droplets.ErrProperty) || !errors.Is(err, droplets.ErrUnknownProperty) {
		t.Errorf("strict: %v does not match the property sentinels", err)
	}
}

func texts(fs []Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return strings.Join(out, "\n")
}

// Unknown keys are warnings when reading, anywhere the spec defines the
// keys: at the top, in droplets, metadata and missing entries.
func TestCheckUnknownKeys(t *testing.T) {
	b := []byte(`{"schema":"cloud-assembly/1.0","x-vendor":{"a":1},"droplets":{"A":{"type":"x://y",` + env + `,"description":"d",` +
		`"metadata":{"m":{"kind":"k","value":1,"extra":true}}}},"missing":{"k":{"provider":"p","props":{},"why":"w"}}}`)
	rep, err := Check(b, fileSet(ManifestName), CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Findings {
		if f.Rule == "unknown-key" {
			got = append(got, f.String())
			if !errors.Is(f, ErrUnknownKey) || f.Severity != Warning {
				t.Errorf("%s: %v, %v", f, f.Err, f.Severity)
			}
		}
	}
	want := []string{
		"missing.k.why: unknown key: the spec defines no such field [unknown-key]",
		"x-vendor: unknown key: the spec defines no such field [unknown-key]",
		"droplet A: description: unknown key: the spec defines no such field [unknown-key]",
		"droplet A: metadata.m.extra: unknown key: the spec defines no such field [unknown-key]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := Check(b, fileSet(ManifestName), CheckOptions{Strict: true}); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("strict: got %v", err)
	}
}

// seeds are manifests with and without defects, for the rule properties.
func seeds(t testing.TB) [][]byte {
	out := [][]byte{readSeed(t)}
	if b, err := os.ReadFile(filepath.Join("..", "fixtures", "spec-example", ManifestName)); err == nil {
		out = append(out, b)
	}
	for _, d := range []string{
		stack("A", `,"parameters":{"P":"${B.output.X} \\${x}"}`) + "," + stack("B", ""),
		stack("a.b", ""),
		stack("A", `,"parameters":{"P":"${Nope.output.X}"}`),
		stack("A", `,"parameters":{"P":"${B.outputs.X}"}`) + "," + stack("B", ""),
		stack("A", `,"parameters":{"P":"a\\b"}`),
		`"A":{"type":"x://y",` + env + `,"dependsOn":["B"]},"B":{"type":"x://y",` + env + `,"dependsOn":["A"]}`,
		stack("A", `,"parameters":{"P":"${B.output.X}"}`) + "," + stack("B", `,"parameters":{"P":"${A.output.X}"}`),
		`"A":{"type":"npm://@aws-cdk/assets.DirectoryDroplet",` + env + `,"description":"d","properties":{"directory":"site","bucketName":"b","keyprefix":"k"}}`,
		`"A":{"type":"npm://@aws-cdk/assets.FileDroplet","environment":"gcp://p/z","properties":{"file":"../f","bucketName":1}}`,
		`"A":{"type":"npm://@aws-cdk/aws-ecr.DockerImageDroplet",` + env + `,"metadata":{"w":{"kind":"warning","value":"careful"}},"properties":{"savedImage":"/img.tar"}}`,
		`"A":{"type":"npm://pkg",` + env + `},"B":{"type":"x://y","environment":"aws://1/x"}`,
		`"A":{"type":"x://y"}`,
	} {
		out = append(out, []byte(manifestWith(d)))
	}
	out = append(out, []byte(`{"schema":"cloud-assembly/2.0","droplets":{}}`), []byte(`{"schema":"cloud-assembly/1.0","droplets":{},"extra":1}`), []byte(`[]`), []byte(`{"schema":`))
	return out
}

var seedFiles = []string{ManifestName, "t.yaml", "stacks/PipelineStack.yml", "site/index.html", "docker/docker-image.tar"}

// checkRules asserts what holds of every verdict: findings of known rules
// whose severity follows the rule table under opts, whose Err matches the
// rule's sentinel and ErrManifest; an error exactly when a finding is an
// Error, listing exactly those.
func checkRules(t *testing.T, rep *Report, err error, opts CheckOptions) {
	t.Helper()
	byCode := map[string]Rule{}
	for _, r := range Rules() {
		byCode[r.Code] = r
	}
	var errs []Finding
	for _, f := range rep.Findings {
		r, ok := byCode[f.Rule]
		switch {
		case !ok || r.Opening:
			t.Fatalf("%s: not a rule of Check", f)
		case f.Severity != r.Severity(opts):
			t.Fatalf("%s: severity %v under %+v, the table says %v", f, f.Severity, opts, r.Severity(opts))
		case r.Sentinel == nil && f.Err != nil:
			t.Fatalf("%s: a note with an error", f)
		case r.Sentinel != nil && (!errors.Is(f, r.Sentinel) || !errors.Is(f, ErrManifest)):
			t.Fatalf("%s: Err %v does not match %v and ErrManifest", f, f.Err, r.Sentinel)
		}
		if f.Severity == Error {
			errs = append(errs, f)
		}
	}
	var ce *CheckError
	switch {
	case len(errs) == 0 && err != nil:
		t.Fatalf("no error finding, but %v", err)
	case len(errs) > 0 && (!errors.As(err, &ce) || texts(ce.Findings) != texts(errs)):
		t.Fatalf("error findings %v, but %v", errs, err)
	case len(errs) > 0 && (rep.Graph != nil || rep.Order != nil):
		t.Fatal("an invalid assembly has a deploy order")
	}
}

// FuzzCheck: whatever the bytes, the verdict follows the rule table, is the
// same from Check and from Reader.Check on an archive of those files, and
// Strict and Writing change severities only, never what is found.
func FuzzCheck(f *testing.F) {
	for _, b := range seeds(f) {
		f.Add(b, uint8(0xff))
		f.Add(b, uint8(0x05))
	}
	f.Fuzz(func(t *testing.T, b []byte, pick uint8) {
		files := []string{ManifestName}
		for i, n := range seedFiles[1:] {
			if pick&(1<<i) != 0 {
				files = append(files, n)
			}
		}
		set := fileSet(files...)
		base, baseErr := Check(b, set, CheckOptions{})
		checkRules(t, base, baseErr, CheckOptions{})
		for _, opts := range []CheckOptions{{Strict: true}, {Writing: true}, {Strict: true, Writing: true}} {
			rep, err := Check(b, set, opts)
			checkRules(t, rep, err, opts)
			if len(rep.Findings) != len(base.Findings) {
				t.Fatalf("%+v finds %d, reading %d", opts, len(rep.Findings), len(base.Findings))
			}
			for i := range rep.Findings {
				if rep.Findings[i].String() != base.Findings[i].String() {
					t.Fatalf("%+v: %s, reading: %s", opts, rep.Findings[i], base.Findings[i])
				}
			}
		}
		// The same bytes in an archive: the same verdict, word for word.
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for _, n := range files {
			w, _ := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Store})
			if n == ManifestName {
				w.Write(b)
			} else {
				w.Write([]byte("x"))
			}
		}
		zw.Close()
		r, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		rep, rerr := r.Check(CheckOptions{})
		if texts(rep.Findings) != texts(base.Findings) || (rerr == nil) != (baseErr == nil) {
			t.Fatalf("Reader.Check:\n%s\nCheck:\n%s", texts(rep.Findings), texts(base.Findings))
		}
	})
}

// The README's table of findings is the rule table (go test ./assembly
// -update rewrites it).
func TestReadmeFindingsTable(t *testing.T) {
	readmetest.Section(t, filepath.Join("..", "README.md"),
		"<!-- findings:begin (generated from assembly.Rules: go test ./assembly -update) -->\n", "<!-- findings:end -->",
		findingsTable(), *update, "go test ./assembly -update")
}

// findingsTable renders Rules as the README's Markdown table.
func findingsTable() string {
	names := map[error]string{
		ErrFormat: "ErrFormat", ErrInsecurePath: "ErrInsecurePath", ErrDuplicate: "ErrDuplicate", ErrTooLarge: "ErrTooLarge",
		ErrNoManifest: "ErrNoManifest", ErrSyntax: "ErrSyntax", ErrSchema: "ErrSchema", ErrUnknownKey: "ErrUnknownKey",
		ErrLogicalID: "ErrLogicalID", ErrEnvironment: "ErrEnvironment", ErrUnknownProtocol: "ErrUnknownProtocol",
		ErrUnknownKind: "ErrUnknownKind", ErrReference: "ErrReference", ErrTarget: "ErrTarget", ErrCycle: "ErrCycle", ErrMissingFile: "ErrMissingFile",
		ErrStackName: "ErrStackName", ErrDuplicateStack: "ErrDuplicateStack",
		droplets.ErrSpecifier: "droplets.ErrSpecifier", droplets.ErrProperty: "droplets.ErrProperty", droplets.ErrUnknownProperty: "droplets.ErrUnknownProperty",
		ErrSchemaVersion: "ErrSchemaVersion", ErrReferenceSyntax: "ErrReferenceSyntax", ErrReferenceDroplet: "ErrReferenceDroplet",
		ErrReferenceAttribute: "ErrReferenceAttribute", ErrPropertyMissing: "ErrPropertyMissing", ErrPropertyType: "ErrPropertyType",
		ErrPathUnsafe: "ErrPathUnsafe",
	}
	var b strings.Builder
	b.WriteString("| rule | reading | `--strict` | build | `errors.Is` | what it finds |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, r := range Rules() {
		sentinel := "-"
		if r.Sentinel != nil {
			name, ok := names[r.Sentinel]
			if !ok {
				panic("findingsTable: no name for " + r.Sentinel.Error())
			}
			if !strings.Contains(name, ".") {
				name = "assembly." + name
			}
			sentinel = "`" + name + "`"
		}
		what := r.Summary
		if r.Opening {
			what += " (refused when the archive is opened)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", r.Code, r.Severity(CheckOptions{}), r.Severity(CheckOptions{Strict: true}), r.Severity(CheckOptions{Writing: true}), sentinel, what)
	}
	return b.String()
}

// Issue 29: a finding's error carries its rule's code (the rule's code
// with "_" for "-", as --json prints it), through the sentinel the rule
// names, and each rule's sentinel is its own.
func TestRuleSentinelsCarryTheRuleCode(t *testing.T) {
	seen := map[error]string{}
	for _, r := range Rules() {
		if r.Sentinel == nil {
			continue
		}
		want := strings.ReplaceAll(r.Code, "-", "_")
		if got := errcode.Of(r.Sentinel); got != want {
			t.Errorf("rule %s: its sentinel's code is %q, want %q", r.Code, got, want)
		}
		if prev, dup := seen[r.Sentinel]; dup {
			t.Errorf("rules %s and %s share a sentinel", prev, r.Code)
		}
		seen[r.Sentinel] = r.Code
		if errcode.HintOf(r.Sentinel) == "" {
			t.Errorf("rule %s has no hint", r.Code)
		}
	}
}
