package cfn

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/packager/cfn/source"
)

func TestRainS3(t *testing.T) {
	dir := rainProject(t, map[string]string{
		"template.yaml": `Resources:
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Code: !Rain::S3
        Path: src
        Zip: true
        BucketProperty: S3Bucket
        KeyProperty: S3Key
  Other:
    Type: A::B::C
    Properties:
      URI: !Rain::S3 file.txt
      URL: !Rain::S3Http file.txt
      HttpForm: !Rain::S3
        Path: file.txt
        Format: Http
      WithExtension: !Rain::S3
        Path: file.txt
        Extension: .txt
      Inc: !Rain::Include parts/inc.yaml
  Mod1:
    Type: !Rain::Module mods/fn.yaml
    Properties:
      SourceDir: code
  Mod2:
    Type: !Rain::Module mods/fn.yaml
    Properties:
      SourceDir: code
`,
		"src/index.py":       "def handler(e, c): pass\n",
		"file.txt":           "data\n",
		"parts/inc.yaml":     "Shipped: !Rain::S3 data/x.bin\n",
		"parts/data/x.bin":   "x",
		"mods/fn.yaml":       "Parameters:\n  SourceDir:\n    Type: String\nResources:\n  Fn:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: !Rain::S3\n        Path: !Ref SourceDir\n        Zip: true\n",
		"mods/code/index.py": "pass\n",
	})
	art := &fakeArtifacts{root: dir}
	got, err := rainPackage(t, dir, art)
	if err != nil {
		t.Fatal(err)
	}
	wantOut(t, got, `Resources:
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Code:
        S3Bucket: !ImportValue assets-bucket
        S3Key: src.zip
  Other:
    Type: A::B::C
    Properties:
      URI: !Join ["", ["s3://", !ImportValue assets-bucket, /file.txt]]
      URL: !Join ["", ["https://", !ImportValue assets-bucket, .s3., !Ref AWS::Region, ., !Ref AWS::URLSuffix, /file.txt]]
      HttpForm: !Join ["", ["https://", !ImportValue assets-bucket, .s3., !Ref AWS::Region, ., !Ref AWS::URLSuffix, /file.txt]]
      WithExtension: !Join ["", ["s3://", !ImportValue assets-bucket, /file.txt.txt]]
      Inc:
        Shipped: !Join ["", ["s3://", !ImportValue assets-bucket, /parts/data/x.bin]]
  Mod1Fn:
    Type: AWS::Lambda::Function
    Properties:
      Code: !Join ["", ["s3://", !ImportValue assets-bucket, /mods/code.zip]]
  Mod2Fn:
    Type: AWS::Lambda::Function
    Properties:
      Code: !Join ["", ["s3://", !ImportValue assets-bucket, /mods/code.zip]]
`)
	// One Add per artifact (modules are expanded first): file.txt twice
	// (plain and with its Extension; URI and Http share one), the module's
	// folder once for both instances.
	var names []string
	for _, a := range art.added {
		rel, _ := filepath.Rel(dir, a.Path)
		names = append(names, filepath.ToSlash(rel))
		if filepath.Base(a.File) != "template.yaml" && filepath.Base(a.File) != "fn.yaml" || a.Line == 0 {
			t.Errorf("artifact %s placed at %s:%d", rel, a.File, a.Line)
		}
	}
	if want := "mods/code src file.txt file.txt parts/data/x.bin"; strings.Join(names, " ") != want {
		t.Errorf("artifacts added: %s, want %s", strings.Join(names, " "), want)
	}
}

// stringArtifacts returns plain strings: the locations are then strings.
type stringArtifacts struct{}

func (stringArtifacts) Add(a Artifact) (any, any, error) {
	return "my-bucket", "k/" + filepath.Base(a.Path), nil
}

func TestRainS3Strings(t *testing.T) {
	dir := rainProject(t, map[string]string{
		"template.yaml": "Resources:\n  R:\n    Type: A::B::C\n    Properties:\n      U: !Rain::S3 f.txt\n      H: !Rain::S3Http f.txt\n",
		"f.txt":         "f",
	})
	got, err := rainPackage(t, dir, stringArtifacts{})
	if err != nil {
		t.Fatal(err)
	}
	wantOut(t, got, `Resources:
  R:
    Type: A::B::C
    Properties:
      U: s3://my-bucket/k/f.txt
      H: !Join ["", ["https://my-bucket.s3.", !Ref AWS::Region, ., !Ref AWS::URLSuffix, /k/f.txt]]
`)
}

func TestRainS3Errors(t *testing.T) {
	outside := t.TempDir()
	failing := errors.New("upload refused")
	for _, tc := range []struct {
		name, value string
		art         Artifacts
		files       map[string]string
		sentinel    error
		place       string
		words       []string
	}{
		{"no-bucket", "!Rain::S3 f.txt", nil, nil, ErrNoArtifacts, "template.yaml:5:10", []string{"f.txt", "Options.Artifacts", "assets:"}},
		{"no-bucket-http", "!Rain::S3Http f.txt", nil, nil, ErrNoArtifacts, "template.yaml:5:10", []string{"!Rain::S3Http"}},
		{"unknown-option", "!Rain::S3 {Paht: f.txt}", nil, nil, ErrInvalid, "template.yaml:5:21", []string{"unknown option Paht", "Path"}},
		{"run", "!Rain::S3 {Path: f.txt, Run: build.sh}", nil, nil, ErrInvalid, "template.yaml:5:34", []string{"runs a program", "build.sh"}},
		{"format", "!Rain::S3 {Path: f.txt, Format: Https}", nil, nil, ErrInvalid, "template.yaml:5:42", []string{"Format Https", "Http"}},
		{"object-no-key", "!Rain::S3 {Path: f.txt, Format: Object, BucketProperty: B}", nil, nil, ErrInvalid, "template.yaml:5:10", []string{"KeyProperty"}},
		{"zip-not-bool", "!Rain::S3 {Path: f.txt, Zip: maybe}", nil, nil, ErrInvalid, "template.yaml:5:39", []string{"true or false"}},
		{"no-path", "!Rain::S3 {Zip: true}", nil, nil, ErrInvalid, "template.yaml:5:10", []string{"needs a Path"}},
		{"path-parameter", "!Rain::S3 {Path: !Ref P}", nil, nil, ErrInvalid, "template.yaml:5:27", []string{"known when building"}},
		{"empty", "!Rain::S3", nil, nil, ErrInvalid, "template.yaml:5:10", []string{"needs a path"}},
		{"outside", "!Rain::S3 ../f.txt", &fakeArtifacts{}, nil, ErrOutsideRoot, "template.yaml:5:10", []string{"../f.txt"}},
		{"absolute-outside", "!Rain::S3 " + filepath.Join(outside, "f.txt"), &fakeArtifacts{}, nil, ErrOutsideRoot, "template.yaml:5:10", []string{"outside"}},
		{"symlink-out", "!Rain::S3 link", &fakeArtifacts{}, map[string]string{"link": "-> " + outside}, ErrOutsideRoot, "template.yaml:5:10", []string{"link"}},
		{"missing", "!Rain::S3 nothere", &fakeArtifacts{}, nil, source.ErrNotFound, "template.yaml:5:10", []string{"nothere"}},
		{"artifacts-fail", "!Rain::S3 f.txt", &fakeArtifacts{err: failing}, nil, failing, "template.yaml:5:10", []string{"upload refused", "!Rain::S3 f.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{
				"template.yaml": "Parameters:\n  P: {Type: String}\nResources:\n  R:\n    Type: A::B::C\n    Properties:\n      X: " + tc.value + "\n",
				"f.txt":         "f",
			}
			files["template.yaml"] = "Resources:\n  R:\n    Type: A::B::C\n    Properties:\n      X: " + tc.value + "\nParameters:\n  P: {Type: String}\n"
			for k, v := range tc.files {
				files[k] = v
			}
			dir := rainProject(t, files)
			if fa, ok := tc.art.(*fakeArtifacts); ok {
				fa.root = dir
			}
			_, err := rainPackage(t, dir, tc.art)
			wantErr(t, err, tc.sentinel, tc.place, tc.words...)
			if fa, ok := tc.art.(*fakeArtifacts); ok && len(fa.added) > 0 {
				t.Errorf("artifacts added before the refusal: %v", fa.added)
			}
		})
	}
}

// TestRainCorpusDirectives runs the templates of rain's other directives
// in its suite (they have no expected output, except embed and
// constant2): each packages, with a fake artifact store where it ships
// files, and no directive is left.
func TestRainCorpusDirectives(t *testing.T) {
	dir := filepath.Join(rainCorpus, "tmpl")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("rain's suite is not present:", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"embed-template", "include-template", "s3-template", "s3http-template", "s3-props-template",
		"s3-extension-template", "quoted-directive", "unquoted-directive", "unquoted-directive-oneline", "constant2-template", "pkg-alias-template"} {
		t.Run(name, func(t *testing.T) {
			art := &fakeArtifacts{root: abs}
			got, err := Package(filepath.Join(abs, name+".yaml"), Options{NoSourceMap: true, Artifacts: art})
			if name == "pkg-alias-template" {
				// A package zip at http://localhost:3000: plain HTTP is
				// refused (packages come over HTTPS).
				if !errors.Is(err, source.ErrUnsupportedScheme) {
					t.Fatalf("got %v, want source.ErrUnsupportedScheme", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out, err := EncodeYAML(got.Root)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(out), "Rain") {
				t.Errorf("a directive is left:\n%s", out)
			}
			switch {
			case name == "embed-template" || name == "constant2-template":
				want, err := os.ReadFile(filepath.Join(abs, strings.TrimSuffix(name, "-template")+"-expect.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				d := rainDiff(t, out, want)
				if name == "constant2-template" {
					// !Sub ${!leavemealone} is the text ${leavemealone} in
					// CloudFormation; rain's expectation writes it as the
					// plain string ${!leavemealone}, which deploys with the
					// "!" in it. We keep the Sub.
					if len(d) == 1 && strings.HasPrefix(d[0], ".Resources.Bucket3.Properties.Bar:") {
						d = nil
					}
				}
				if len(d) > 0 {
					t.Errorf("packaged:\n%s\ndiffers:\n%s", out, strings.Join(d, "\n"))
				}
			case strings.Contains(name, "s3") || strings.Contains(name, "directive"):
				if len(art.added) != 1 {
					t.Errorf("%d artifacts added, want 1:\n%s", len(art.added), out)
				}
			}
		})
	}
}
