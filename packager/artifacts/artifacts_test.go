package artifacts

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/testenv/moto"
	"github.com/cloud-assembly/assemble/packager/cfn"
)

func TestMain(m *testing.M) { moto.Main(m) }

// write makes files under dir: name -> content ("" for an empty file).
func write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pack packages dir/template.yaml with a Set of opts and returns the
// packaged template and the Set.
func pack(t testing.TB, dir string, opts Options) (string, *Set, error) {
	t.Helper()
	opts.Root = dir
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	file := filepath.Join(dir, "template.yaml")
	tm, err := cfn.Package(file, cfn.Options{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Export(tm, file); err != nil {
		return "", s, err
	}
	out, err := cfn.EncodeYAML(tm.Root)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), s, nil
}

// resourceFor writes a template with one resource of p's type whose
// property p.Path names local.
func resourceFor(p Property, local string) string {
	var b strings.Builder
	if p.Metadata {
		b.WriteString("Metadata:\n  " + p.Type + ":\n    Name: app\n    " + p.Path[0] + ": " + local + "\n")
		b.WriteString("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n")
		return b.String()
	}
	b.WriteString("Resources:\n  R:\n    Type: " + p.Type + "\n    Properties:\n")
	ind := "      "
	for _, k := range p.Path[:len(p.Path)-1] {
		b.WriteString(ind + k + ":\n")
		ind += "  "
	}
	b.WriteString(ind + p.Path[len(p.Path)-1] + ": " + local + "\n")
	return b.String()
}

// TestPropertyForms packages one resource of every type aws-cli packages,
// pointing at a folder and at a file, and checks the form written.
func TestPropertyForms(t *testing.T) {
	for _, p := range Properties() {
		for _, local := range []string{"src", "src/main.py"} {
			name := p.Type + "." + strings.Join(p.Path, ".") + "/" + local
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				write(t, dir, map[string]string{"src/main.py": "print(1)\n", "src/lib/util.py": "X = 1\n"})
				if p.Template {
					if local == "src" {
						t.Skip("a nested template is a file")
					}
					write(t, dir, map[string]string{"src/main.py": "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n"})
				}
				write(t, dir, map[string]string{"template.yaml": resourceFor(p, local)})
				for _, param := range []bool{false, true} {
					opts := Options{Bucket: "bkt", KeyPrefix: "pre", Region: "eu-west-1"}
					if param {
						if p.Metadata {
							continue
						}
						// a build with the bucket named: templates take
						// it as a parameter all the same
						opts = Options{Parameter: true, Bucket: "bkt", KeyPrefix: "pre", Region: "eu-west-1"}
					}
					out, s, err := pack(t, dir, opts)
					if err != nil {
						t.Fatal(err)
					}
					out = strings.ReplaceAll(out, `"`, "")
					as := s.Assets()
					if len(as) != 1 {
						t.Fatalf("%d assets, want 1:\n%s", len(as), out)
					}
					a := as[0]
					if !strings.HasPrefix(a.Key, "pre/"+a.SHA256) {
						t.Errorf("key %s, want pre/%s...", a.Key, a.SHA256)
					}
					zipped := a.Data() != nil && !a.Template
					if want := local == "src" || p.ForceZip; zipped != want {
						t.Errorf("zipped %v, want %v", zipped, want)
					}
					if zipped {
						names := zipNames(t, a.Data())
						want := "lib/util.py,main.py"
						if local != "src" {
							want = "main.py"
						}
						if got := strings.Join(names, ","); got != want {
							t.Errorf("zip holds %s, want %s", got, want)
						}
					}
					bucket := "bkt"
					if param {
						bucket = "${" + BucketParameter + "}"
					}
					var want []string
					switch {
					case p.Type == "AWS::Serverless::Application":
						// a string: the SAM transform reads it first
						want = []string{"Location: https://s3.eu-west-1.amazonaws.com/bkt/" + a.Key + "\n"}
					case p.Template:
						want = []string{"TemplateURL: !Sub https://s3.${AWS::Region}.${AWS::URLSuffix}/" + bucket + "/" + a.Key}
					case p.Form == BucketKey || param && strings.HasPrefix(p.Type, "AWS::Serverless::"):
						bk, kk := p.Bucket, p.Key
						if bk == "" {
							bk, kk = "Bucket", "Key"
						}
						bv := "bkt"
						if param {
							bv = "!Ref " + BucketParameter
						}
						want = []string{bk + ": " + bv + "\n", kk + ": " + a.Key + "\n"}
					case param:
						want = []string{"!Sub s3://${" + BucketParameter + "}/" + a.Key}
					default:
						want = []string{"s3://bkt/" + a.Key}
					}
					found := false
					for _, w := range want {
						found = found || strings.Contains(out, w)
					}
					if p.Form == BucketKey || param && strings.HasPrefix(p.Type, "AWS::Serverless::") && !p.Template {
						found = strings.Contains(out, want[0]) && strings.Contains(out, want[1])
					}
					if !found {
						t.Errorf("param=%v: packaged template lacks %q:\n%s", param, want, out)
					}
					// (an Application's URL names the bucket itself)
					declare := param && p.Type != "AWS::Serverless::Application"
					if declare != strings.Contains(out, "  "+BucketParameter+":\n    Type: String") {
						t.Errorf("param=%v: the bucket parameter is declared %v:\n%s", param, !declare, out)
					}
				}
			})
		}
	}
}

func zipNames(t testing.TB, data []byte) []string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	return names
}

// TestLeftAlone: S3 and HTTPS locations, intrinsic functions and mappings,
// and absent properties are not touched, and need no bucket.
func TestLeftAlone(t *testing.T) {
	dir := t.TempDir()
	tmpl := `Resources:
  A:
    Type: AWS::Lambda::Function
    Properties:
      Code: {S3Bucket: b, S3Key: k}
  B:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: s3://bucket/key.zip
  C:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: https://s3.amazonaws.com/b/t.yaml
  D:
    Type: AWS::Glue::Job
    Properties:
      Command:
        ScriptLocation: !Sub s3://${AWS::AccountId}/x.py
  E:
    Type: AWS::Serverless::Function
    Properties:
      InlineCode: "x"
`
	write(t, dir, map[string]string{"template.yaml": tmpl})
	out, s, err := pack(t, dir, Options{NoBucket: "no bucket"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Assets()) != 0 || strings.Contains(out, BucketParameter) {
		t.Fatalf("assets made from nothing local:\n%s", out)
	}
}

// TestZipReproducible: the same sources give the same zip, whatever the
// files' times, permissions beyond the execute bit, and where the copy
// lies; modes are normalised; entries sorted; no folder entries.
func TestZipReproducible(t *testing.T) {
	files := map[string]string{"b.txt": "b", "a/z.js": "z", "a/b/c.js": strings.Repeat("c", 100000), "bootstrap": "#!/bin/sh\n", "é.txt": "utf8"}
	mk := func(dir string, mtime time.Time, perm os.FileMode) []byte {
		write(t, dir, files)
		for name := range files {
			p := filepath.Join(dir, name)
			mode := perm
			if name == "bootstrap" {
				mode = 0o700
			}
			if err := os.Chmod(p, mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
		write(t, dir, map[string]string{"template.yaml": "Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: ."})
		os.Remove(filepath.Join(dir, "template.yaml"))
		root, err := os.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		fs, err := collect(root, ".", "src")
		if err != nil {
			t.Fatal(err)
		}
		data, err := makeZip(root, fs)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	one := mk(t.TempDir(), time.Now(), 0o644)
	two := mk(t.TempDir(), time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC), 0o600)
	if !bytes.Equal(one, two) {
		t.Fatal("two copies of the same sources zip differently")
	}
	zr, err := zip.NewReader(bytes.NewReader(one), int64(len(one)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		want := os.FileMode(0o644)
		if f.Name == "bootstrap" {
			want = 0o755
		}
		if f.Mode() != want {
			t.Errorf("%s: mode %v, want %v", f.Name, f.Mode(), want)
		}
		if !f.Modified.Equal(ZipTime()) {
			t.Errorf("%s: time %v, want %v", f.Name, f.Modified, ZipTime())
		}
		rc, _ := f.Open()
		b, err := io.ReadAll(rc)
		if err != nil || string(b) != files[f.Name] {
			t.Errorf("%s: content %q, %v", f.Name, b, err)
		}
	}
	if got := strings.Join(names, ","); got != "a/b/c.js,a/z.js,b.txt,bootstrap,é.txt" {
		t.Errorf("entries %s", got)
	}
}

// TestBadInput: each bad artifact fails with its sentinel, at the place
// the path is written, before anything is written.
func TestBadInput(t *testing.T) {
	defer func(n int64) { artifactLimit = n }(artifactLimit)
	artifactLimit = 64 << 20 // a smaller bomb, the same rule
	outside := t.TempDir()
	write(t, outside, map[string]string{"secret.txt": "s", "dir/x": "x"})
	bomb := zipBomb(t)
	lambda := func(code string) string {
		return "Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: " + code + "\n"
	}
	cases := []struct {
		name  string
		files map[string]string
		links map[string]string
		opts  Options
		want  error
		text  string
	}{
		{name: "dotdot", files: map[string]string{"template.yaml": lambda("../x")}, want: ErrOutsideProject, text: "template.yaml:5:13"},
		{name: "absolute", files: map[string]string{"template.yaml": lambda(filepath.Join(outside, "secret.txt"))}, want: ErrOutsideProject},
		{name: "symlink file out", files: map[string]string{"template.yaml": lambda("link")}, links: map[string]string{"link": filepath.Join(outside, "secret.txt")}, want: ErrOutsideProject},
		{name: "symlink in folder out", files: map[string]string{"template.yaml": lambda("src"), "src/a": "a"}, links: map[string]string{"src/out": filepath.Join(outside, "dir")}, want: ErrOutsideProject},
		{name: "missing", files: map[string]string{"template.yaml": lambda("nope")}, want: ErrArtifact, text: "no file or folder nope"},
		{name: "folder for a file", files: map[string]string{"template.yaml": "Resources:\n  R:\n    Type: AWS::SQS::Queue\n  X:\n    Fn::Transform:\n      Name: AWS::Include\n      Parameters:\n        Location: src\n", "src/a": "a"}, want: ErrArtifact, text: "is a folder"},
		{name: "folder for a template", files: map[string]string{"template.yaml": "Resources:\n  S:\n    Type: AWS::CloudFormation::Stack\n    Properties:\n      TemplateURL: src\n", "src/a": "a"}, want: ErrArtifact, text: "is not a template file"},
		{name: "zip bomb", files: map[string]string{"template.yaml": lambda("bomb.zip"), "bomb.zip": bomb}, want: ErrTooLarge, text: "zip bomb"},
		{name: "empty folder", files: map[string]string{"template.yaml": lambda("src/")}, want: ErrArtifact},
		{name: "no bucket", files: map[string]string{"template.yaml": lambda("src"), "src/a": "a"}, opts: Options{NoBucket: "set assets:"}, want: cfn.ErrNoArtifacts, text: `"src" is a local artifact`},
		{name: "cycle", files: map[string]string{
			"template.yaml": "Resources:\n  S:\n    Type: AWS::CloudFormation::Stack\n    Properties:\n      TemplateURL: a.yaml\n",
			"a.yaml":        "Resources:\n  S:\n    Type: AWS::CloudFormation::Stack\n    Properties:\n      TemplateURL: b/b.yaml\n",
			"b/b.yaml":      "Resources:\n  S:\n    Type: AWS::Serverless::Application\n    Properties:\n      Location: ../a.yaml\n"},
			opts: Options{Bucket: "bkt", Region: "us-east-1"}, want: ErrCycle, text: "b/b.yaml -> "},
		{name: "parameter clash", files: map[string]string{"template.yaml": "Parameters:\n  AssembleAssetBucket: {Type: String}\n" + lambda("src"), "src/a": "a"}, opts: Options{Parameter: true}, want: ErrArtifact},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, c.files)
			if c.name == "empty folder" {
				os.MkdirAll(filepath.Join(dir, "src"), 0o755)
			}
			for l, target := range c.links {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, l)), 0o755)
				if err := os.Symlink(target, filepath.Join(dir, l)); err != nil {
					t.Fatal(err)
				}
			}
			opts := c.opts
			if opts.Bucket == "" && !opts.Parameter && opts.NoBucket == "" {
				opts.Bucket = "bkt"
			}
			_, _, err := pack(t, dir, opts)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if c.want == ErrOutsideProject && !errors.Is(err, assembly.ErrInsecurePath) {
				t.Errorf("%v does not match assembly.ErrInsecurePath", err)
			}
			var ae *Error
			if !errors.As(err, &ae) || ae.At.Line == 0 {
				t.Errorf("%v: not placed at a line", err)
			}
			if !strings.Contains(err.Error(), c.text) {
				t.Errorf("%v: lacks %q", err, c.text)
			}
		})
	}
}

// zipBomb is a small zip whose one entry expands past MaxArtifactBytes.
func zipBomb(t testing.TB) string {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("big")
	if err != nil {
		t.Fatal(err)
	}
	zero := make([]byte, 1<<20)
	for i := int64(0); i < artifactLimit>>20+1; i++ {
		w.Write(zero)
	}
	zw.Close()
	return buf.String()
}

// TestNested: a nested template is packaged with its modules and its own
// artifacts (relative to its folder), and takes the bucket from its parent.
func TestNested(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"template.yaml":       "Resources:\n  S:\n    Type: AWS::CloudFormation::Stack\n    Properties:\n      TemplateURL: child/child.yaml\n      Parameters: {X: z}\n",
		"child/child.yaml":    "Modules:\n  M:\n    Source: ./mod.yaml\nResources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: code\n",
		"child/mod.yaml":      "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n",
		"child/code/index.js": "x",
	})
	out, s, err := pack(t, dir, Options{Parameter: true})
	if err != nil {
		t.Fatal(err)
	}
	as := s.Assets()
	if len(as) != 2 || !as[1].Template {
		t.Fatalf("assets %+v", as)
	}
	child := strings.ReplaceAll(string(as[1].Data()), `"`, "") // a key of digits is quoted
	for _, w := range []string{"MQ:\n    Type: AWS::SQS::Queue", "S3Bucket: !Ref AssembleAssetBucket", "S3Key: " + as[0].Key + "\n", "AssembleAssetBucket:\n    Type: String"} {
		if !strings.Contains(child, w) {
			t.Errorf("child lacks %q:\n%s", w, child)
		}
	}
	if !strings.Contains(out, "X: z\n        AssembleAssetBucket: !Ref AssembleAssetBucket") {
		t.Errorf("parent does not pass the bucket:\n%s", out)
	}
}

// TestSymlinks: links inside the project are followed, as aws-cli's
// os.walk(followlinks=True) follows them (the zip holds the content); a
// link loop fails.
func TestSymlinks(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"template.yaml": "Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: src\n",
		"src/a.js":      "a",
		"shared/lib.js": "lib",
	})
	if err := os.Symlink("../shared/lib.js", filepath.Join(dir, "src", "lib.js")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../shared", filepath.Join(dir, "src", "shared")); err != nil {
		t.Fatal(err)
	}
	_, s, err := pack(t, dir, Options{Bucket: "bkt"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(zipFiles(t, s.Assets()[0].Data()), ","); got != "a.js=a,lib.js=lib,shared/lib.js=lib" {
		t.Errorf("zip holds %s", got)
	}
	if err := os.Symlink("..", filepath.Join(dir, "src", "loop")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pack(t, dir, Options{Bucket: "bkt"}); !errors.Is(err, ErrArtifact) || !strings.Contains(err.Error(), "loops back") {
		t.Errorf("a link loop: %v", err)
	}
}

// TestChangedFile: a file shipped as it is must still hold what its key
// names when the assembly is written.
func TestChangedFile(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"template.yaml": "Resources:\n  A:\n    Type: AWS::ApiGateway::RestApi\n    Properties:\n      BodyS3Location: api.yaml\n",
		"api.yaml":      "openapi: 3.0.0\n",
	})
	_, s, err := pack(t, dir, Options{Bucket: "bkt"})
	if err != nil {
		t.Fatal(err)
	}
	a := s.Assets()[0]
	if a.Data() != nil {
		t.Fatal("a plain file was copied into memory")
	}
	write(t, dir, map[string]string{"api.yaml": "openapi: 3.1.0\n"})
	r, err := a.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := io.ReadAll(r); !errors.Is(err, ErrChanged) {
		t.Errorf("reading a changed file: %v, want ErrChanged", err)
	}
}

// TestAddJoined: the entry point for rain's !Rain::S3 (a path joined to
// its file's folder, an optional key extension) follows Add's rules.
func TestAddJoined(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"src/a.js": "a", "mod/b.txt": "b"})
	s, err := New(Options{Root: dir, Parameter: true, KeyPrefix: "p"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := Pos{File: filepath.Join(dir, "mod", "m.yaml"), Line: 3, Column: 9}
	ref, err := s.AddJoined(filepath.Join(dir, "src"), false, "zip", at)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(ref.Asset.Key, ".zip") || !strings.HasPrefix(ref.Asset.Key, "p/") || ref.Asset.Data() == nil {
		t.Errorf("folder: %+v", ref.Asset)
	}
	if b := ref.Bucket(); b.Kind != yaml.MappingNode || b.Content[0].Value != "Ref" || b.Content[1].Value != BucketParameter {
		t.Errorf("bucket %+v", b)
	}
	ref, err = s.AddJoined(filepath.Join(dir, "mod", "b.txt"), true, "", at)
	if err != nil || ref.Asset.Data() == nil || strings.Contains(ref.Asset.Key, ".") {
		t.Errorf("zipped file: %+v, %v", ref.Asset, err)
	}
	for _, bad := range []string{"/etc/passwd", filepath.Join(dir, "mod", "..", "..", "x"), filepath.Join(dir, "nope")} {
		_, err := s.AddJoined(bad, false, "", at)
		var ae *Error
		if err == nil || !errors.As(err, &ae) || ae.At != at {
			t.Errorf("%s: %v", bad, err)
		}
	}
	if _, err := s.AddJoined("/etc/passwd", false, "", at); !errors.Is(err, ErrOutsideProject) {
		t.Errorf("/etc/passwd: %v", err)
	}
}
