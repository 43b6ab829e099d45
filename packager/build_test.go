package packager

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/internal/output"
	"github.com/cloud-assembly/assemble/packager/artifacts"
	"github.com/cloud-assembly/assemble/packager/cfn"
)

var classes = map[string]error{
	"assembly.ErrCycle":           assembly.ErrCycle,
	"assembly.ErrLogicalID":       assembly.ErrLogicalID,
	"assembly.ErrReference":       assembly.ErrReference,
	"assembly.ErrEnvironment":     assembly.ErrEnvironment,
	"assembly.ErrUnknownKey":      assembly.ErrUnknownKey,
	"assembly.ErrSchema":          assembly.ErrSchema,
	"assembly.ErrMissingFile":     assembly.ErrMissingFile,
	"assembly.ErrInsecurePath":    assembly.ErrInsecurePath,
	"assembly.ErrTarget":          assembly.ErrTarget,
	"droplets.ErrProperty":        droplets.ErrProperty,
	"droplets.ErrUnknownProperty": droplets.ErrUnknownProperty,
	"fs.ErrNotExist":              fs.ErrNotExist,
	"packager.ErrOutsideProject":  ErrOutsideProject,
	"packager.ErrProject":         ErrProject,
	"packager.ErrMissing":         ErrMissing,
	"cfn.ErrNoArtifacts":          cfn.ErrNoArtifacts,
	"artifacts.ErrCycle":          artifacts.ErrCycle,
}

// TestBuildErrors builds each bad project in testdata/projects: the build
// fails with the error class and message its header names, and writes no
// output file.
func TestBuildErrors(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "projects", "*.txtar"))
	if len(files) == 0 {
		t.Fatal("no test projects")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var class error
			var want string
			for _, line := range strings.Split(string(ar.Comment), "\n") {
				if v, ok := strings.CutPrefix(line, "class: "); ok {
					class = classes[v]
					if class == nil {
						t.Fatalf("unknown class %s", v)
					}
				}
				if v, ok := strings.CutPrefix(line, "error: "); ok {
					want = v
				}
			}
			dir := t.TempDir()
			project := filepath.Join(dir, "project")
			writeArchive(t, project, ar)
			out := filepath.Join(dir, "out.cloud")
			_, err = Build(context.Background(), project, out, BuildOptions{})
			if !errors.Is(err, class) {
				t.Fatalf("got %v, want class %v", err, class)
			}
			msg := strings.ReplaceAll(err.Error(), project+string(filepath.Separator), "")
			if !strings.Contains(msg, want) {
				t.Fatalf("got  %q\nwant %q", msg, want)
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a failed build left %s", out)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Fatalf("a failed build left files: %v", ents)
			}
		})
	}
}

func writeArchive(t *testing.T, dir string, ar *txtar.Archive) {
	t.Helper()
	for _, f := range ar.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func copyExample(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "webapp")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "fixtures", "examples", "webapp"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBuildExample builds the bundled example: the manifest meets the spec
// and a rebuild gives the same bytes whatever the files' times.
func TestBuildExample(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	project := copyExample(t)
	out := filepath.Join(t.TempDir(), "a.cloud")
	plan, err := Build(context.Background(), project, out, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"config/settings.json", "docker/app-image.tar", "manifest.json", "provenance.intoto.json", "site/css/style.css", "site/index.html", "stacks/network.yaml", "stacks/service-policy.json", "stacks/service.yaml"}
	if got := strings.Join(plan.Files(), " "); got != strings.Join(want, " ") {
		t.Errorf("files = %s", got)
	}
	rc, err := assembly.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rep, err := rc.Check(assembly.CheckOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Manifest
	// The Network stack's local module is expanded into the template.
	tpl, err := fs.ReadFile(rc, "stacks/network.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  SiteBucket:\n    Type: AWS::S3::Bucket\n", "SourceMap: ../modules/site-bucket.yaml:Bucket:7", "Value: !Ref SiteBucket"} {
		if !strings.Contains(string(tpl), want) {
			t.Errorf("packaged template lacks %q:\n%s", want, tpl)
		}
	}
	if strings.Contains(string(tpl), "Modules:") {
		t.Errorf("module not expanded:\n%s", tpl)
	}
	if got := strings.Join(rep.Order, ","); got != "AppImage,Network,Settings,Site,Service" {
		t.Errorf("order = %s", got)
	}
	if m.Droplets["Site"].Type != droplets.DirectoryType {
		t.Errorf("alias not expanded: %s", m.Droplets["Site"].Type)
	}
	if got := m.Droplets["Service"].Properties["parameters"].(map[string]any)["Banner"]; got != `webapp in \${AWS::Region}` {
		t.Errorf("escape not kept: %q", got)
	}
	ms := m.Missing["stack-parameter:Service:AlertEmail"]
	if ms == nil || ms.Provider != MissingParameterProvider || ms.Props["parameter"] != "AlertEmail" {
		t.Errorf("missing = %+v", m.Missing)
	}

	first, _ := os.ReadFile(out)
	later := time.Now().Add(48 * time.Hour)
	filepath.WalkDir(project, func(p string, d fs.DirEntry, err error) error {
		return os.Chtimes(p, later, later)
	})
	if _, err := Build(context.Background(), project, out, BuildOptions{Workers: 1}); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(out)
	if !bytes.Equal(first, again) {
		t.Fatal("rebuild gives different bytes")
	}
	// Nor does the working folder matter (templates' SourceMaps are
	// relative), given the project by a relative path or not.
	t.Chdir(project)
	if _, err := Build(context.Background(), ".", out, BuildOptions{}); err != nil {
		t.Fatal(err)
	}
	again, _ = os.ReadFile(out)
	if !bytes.Equal(first, again) {
		t.Fatal("a build from another working folder gives different bytes")
	}
	if !bytes.Contains(first, []byte("stacks/network.yaml")) {
		t.Fatal("no template")
	}
}

func TestBuildStrict(t *testing.T) {
	project := copyExample(t)
	out := filepath.Join(t.TempDir(), "a.cloud")
	_, err := Build(context.Background(), project, out, BuildOptions{Strict: true})
	if !errors.Is(err, ErrMissing) {
		t.Fatalf("got %v", err)
	}
	want := filepath.Join(project, "stacks", "service.yaml") + ":12:3: droplet Service: properties.parameters.AlertEmail: missing information: parameter AlertEmail has no value and no default"
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("got  %q\nwant %q", err, want)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("strict failure left an output file")
	}
}

func TestBuildSymlinkOutside(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.txt")
	os.WriteFile(secret, []byte("secret"), 0o644)
	project := filepath.Join(dir, "p")
	os.MkdirAll(filepath.Join(project, "site"), 0o755)
	os.WriteFile(filepath.Join(project, "site", "index.html"), []byte("hi"), 0o644)
	os.WriteFile(filepath.Join(project, "assembly.yaml"), []byte(`environment: aws://123456789012/eu-west-1
droplets:
  Conf:
    type: file
    properties: {file: link.txt, bucketName: b, objectKey: k}
`), 0o644)
	if err := os.Symlink(secret, filepath.Join(project, "link.txt")); err != nil {
		t.Skip("no symlinks:", err)
	}
	_, err := Load(project, BuildOptions{})
	if !errors.Is(err, ErrOutsideProject) || !strings.Contains(err.Error(), "outside the project (a symlink?)") {
		t.Fatalf("file: got %v", err)
	}
	// A symlink inside a directory asset is checked too.
	os.Symlink(secret, filepath.Join(project, "site", "leak.txt"))
	os.WriteFile(filepath.Join(project, "assembly.yaml"), []byte(`environment: aws://123456789012/eu-west-1
droplets:
  Site:
    type: directory
    properties: {directory: site, bucketName: b}
`), 0o644)
	_, err = Load(project, BuildOptions{})
	if !errors.Is(err, ErrOutsideProject) || !strings.Contains(err.Error(), `"site/leak.txt" resolves to`) {
		t.Fatalf("directory: got %v", err)
	}
	// A symlink that stays inside the project is followed.
	os.Remove(filepath.Join(project, "site", "leak.txt"))
	os.WriteFile(filepath.Join(project, "real.txt"), []byte("ok"), 0o644)
	os.Symlink(filepath.Join(project, "real.txt"), filepath.Join(project, "site", "alias.txt"))
	p, err := Load(project, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Files(), " "); got != "manifest.json provenance.intoto.json site/alias.txt site/index.html" {
		t.Errorf("files = %s", got)
	}
}

func TestBuildSingleTemplate(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "my-stack.yaml"), []byte("Parameters:\n  Name: {Type: String}\nResources: {}\n"), 0o644)
	for _, target := range []string{dir, filepath.Join(dir, "my-stack.yaml")} {
		p, err := Load(target, BuildOptions{Environment: "aws://123456789012/us-east-1"})
		if err != nil {
			t.Fatal(err)
		}
		d := p.Manifest.Droplets["my-stack"]
		if d == nil || d.Type != droplets.StackType || d.Environment != "aws://123456789012/us-east-1" || d.Properties["template"] != "my-stack.yaml" {
			t.Fatalf("%s: droplets = %+v", target, p.Manifest.Droplets)
		}
		if p.Manifest.Missing["stack-parameter:my-stack:Name"] == nil {
			t.Errorf("missing = %v", p.Manifest.Missing)
		}
	}
	p, err := Load(dir, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0].Message, "aws://unknown-account/unknown-region") {
		t.Errorf("warnings = %v", p.Warnings)
	}
	os.WriteFile(filepath.Join(dir, "other.json"), []byte("{}"), 0o644)
	if _, err := Load(dir, BuildOptions{}); !errors.Is(err, ErrProject) || !strings.Contains(err.Error(), "2 templates (my-stack.yaml, other.json)") {
		t.Errorf("two templates: got %v", err)
	}
}

// An output reference is checked only when the template's Outputs are
// known at build time: a transform other than AWS::LanguageExtensions, or
// a Fn::ForEach among the Outputs, may add Outputs at deploy time.
func TestBuildOutputsKnownOnlyWithoutTransforms(t *testing.T) {
	project := func(template string) *txtar.Archive {
		return txtar.Parse([]byte(`-- assembly.yaml --
environment: aws://123456789012/eu-west-1
droplets:
  Net:
    type: stack
    properties: {stackName: s, template: t.yaml}
  Upload:
    type: file
    properties: {file: f.txt, bucketName: "${Net.output.Bucket}", objectKey: k}
-- f.txt --
x
-- t.yaml --
` + template))
	}
	for _, tt := range []struct {
		name, template string
		ok             bool
	}{
		{"declared", "Resources: {}\nOutputs:\n  Bucket: {Value: b}\n", true},
		{"undeclared", "Resources: {}\nOutputs:\n  Other: {Value: b}\n", false},
		{"macro", "Transform: MyMacro\nResources: {}\n", true},
		{"macro list", "Transform: [AWS::LanguageExtensions, MyMacro]\nResources: {}\n", true},
		{"language extensions only", "Transform: AWS::LanguageExtensions\nResources: {}\n", false},
		{"foreach", "Transform: AWS::LanguageExtensions\nResources: {}\nOutputs:\n  Fn::ForEach::Buckets:\n    - X\n    - [A]\n    - ${X}Bucket: {Value: b}\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeArchive(t, dir, project(tt.template))
			_, err := Load(dir, BuildOptions{})
			if tt.ok && err != nil {
				t.Fatal(err)
			}
			if !tt.ok && (!errors.Is(err, assembly.ErrReference) || !strings.Contains(err.Error(), `declares no Output "Bucket"`)) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

// What a build would write passes the check every command runs, with the
// property tables held strictly: a build never writes what inspect, sign
// or verify refuse, nor an unknown property.
func TestBuildChecksWhatItWrites(t *testing.T) {
	dir := copyExample(t)
	p, err := Load(dir, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Report == nil || p.Report.Order == nil || len(p.Report.Errors()) != 0 {
		t.Fatalf("report %+v", p.Report)
	}
	out := filepath.Join(t.TempDir(), "app.cloud")
	if _, err := p.Write(context.Background(), out, nil); err != nil {
		t.Fatal(err)
	}
	rc, err := assembly.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rep, err := rc.Check(assembly.CheckOptions{Writing: true})
	if err != nil {
		t.Fatal(err)
	}
	if texts(rep.Findings) != texts(p.Report.Findings) {
		t.Errorf("the written assembly checks differently:\n%s\nbuild:\n%s", texts(rep.Findings), texts(p.Report.Findings))
	}
}

// Plan.Write's digest and size are those of the bytes that reached the
// output, to a file (renamed into place) and to standard output alike,
// for every example project; an extra input is never written over.
func TestWriteReturnsDigest(t *testing.T) {
	dir := copyExample(t)
	p, err := Load(dir, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "app.cloud")
	w, err := p.Write(context.Background(), out, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if w.Digest != digest.Of(b) || w.Size != int64(len(b)) || w.Direct {
		t.Fatalf("Write said %s, %d bytes, direct %v; the file has %s, %d bytes", w.Digest, w.Size, w.Direct, digest.Of(b), len(b))
	}
	var stdout bytes.Buffer
	w2, err := p.Write(context.Background(), "-", &WriteOptions{Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	if w2.Digest != digest.Of(stdout.Bytes()) || w2.Size != int64(stdout.Len()) || !w2.Direct {
		t.Fatalf("Write to stdout said %s, %d bytes, direct %v; it wrote %s, %d bytes", w2.Digest, w2.Size, w2.Direct, digest.Of(stdout.Bytes()), stdout.Len())
	}
	key := filepath.Join(t.TempDir(), "key.asc")
	if err := os.WriteFile(key, []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write(context.Background(), key, &WriteOptions{Inputs: []string{key}}); !errors.Is(err, output.ErrInput) {
		t.Fatalf("writing over an input: %v, want output.ErrInput", err)
	}
	if got, _ := os.ReadFile(key); string(got) != "key" {
		t.Fatalf("the input was written over: %q", got)
	}
}

func texts(fs []assembly.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.String())
	}
	return strings.Join(out, "\n")
}
