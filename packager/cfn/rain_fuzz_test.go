package cfn

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// memArtifacts ships nothing: it checks what it is given and names it.
type memArtifacts struct{ t *testing.T }

func (m memArtifacts) Add(a Artifact) (any, any, error) {
	if a.Path == "" || a.File == "" {
		m.t.Fatalf("artifact with no path or place: %+v", a)
	}
	return map[string]any{"Fn::ImportValue": "assets"}, "k/" + filepath.Base(a.Path), nil
}

// FuzzRainDirectives packages fuzzed templates, and fuzzed files that they
// include, with rain's directives, against a few modules and files: it
// never panics; every error is an *Error wrapping one of our sentinels;
// no directive is left in a result, and every result reads back as the
// same data.
func FuzzRainDirectives(f *testing.F) {
	seeds := []string{
		"Resources:\n  B:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName: !Rain::Embed embed.txt\n",
		"Resources:\n  B: !Rain::Include inc.yaml\n",
		"Resources:\n  M:\n    Type: !Rain::Module mod.yaml\n    Properties:\n      Name: x\n      Dir: code\n    Overrides:\n      Bucket:\n        DependsOn: Q\n        Properties: {Tags: [{Key: a, Value: b}]}\n  Q:\n    Type: AWS::SQS::Queue\n",
		"Rain:\n  Constants:\n    A: a\n    B: !Sub ${AWS::Region}-${Rain::A}\nResources:\n  B:\n    Type: X::Y::Z\n    Properties:\n      P: !Rain::Constant B\n      Q: !Sub ${Rain::A}-${!Lit}\n",
		"Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: !Rain::S3 {Path: code, Zip: true, BucketProperty: S3Bucket, KeyProperty: S3Key}\n      U: !Rain::S3Http embed.txt\n      V: !Rain::S3 {Path: embed.txt, Format: Http, Extension: txt}\n",
		"Rain:\n  Packages:\n    lib: {Location: lib}\nResources:\n  L:\n    Type: $lib/mod.yaml\n    Properties: {Name: y}\n",
		"Resources:\n  B:\n    Type: A::B::C\n    Properties:\n      X: !Rain::Env HOME\n",
		"Rain:\n  Constants:\n    A: !Rain::Constant B\n    B: [!Ref Const::C]\nConstants:\n  C: {Q: !Rain::Constant A}\nResources:\n  B:\n    Type: A::B::C\n    Properties:\n      X: !Rain::Constant A\n",
		"Resources:\n  B:\n    Type: A::B::C\n    Properties:\n      X:\n        'Rain::S3': {Path: code}\n",
	}
	inc := []string{
		"Type: AWS::S3::Bucket\nProperties:\n  BucketName: !Rain::Embed embed.txt\n",
		"Type: !Rain::Module mod.yaml\nProperties: {Name: z}\n",
		"[1, 2, {Ref: AWS::Region}]\n",
		"X: !Rain::Include inc.yaml\n",
	}
	for i, s := range seeds {
		f.Add([]byte(s), []byte(inc[i%len(inc)]))
	}
	mod := "Rain:\n  Constants:\n    C: c\nParameters:\n  Name: {Type: String}\n  Dir: {Type: String, Default: code}\nResources:\n  Bucket:\n    Type: AWS::S3::Bucket\n    Metadata: {Rain: {IfParam: Name}}\n    Properties:\n      BucketName: !Sub ${Name}-${Rain::C}\n      Code: !Rain::S3 {Path: !Ref Dir}\n  Other:\n    Type: AWS::SNS::Topic\n    Metadata: {Rain: {IfNotParam: Name}}\n"
	sentinels := []error{ErrSyntax, ErrInvalid, ErrMissingParameter, ErrCycle, ErrNameClash, ErrOutsideRoot, ErrTooLarge, ErrDangling, ErrNoArtifacts}
	f.Fuzz(func(t *testing.T, tmpl, included []byte) {
		srcs := memSources{
			"template.yaml": tmpl, "inc.yaml": included, "embed.txt": []byte("embedded\n"),
			"mod.yaml": []byte(mod), "lib/mod.yaml": []byte(mod),
		}
		out, err := Package("template.yaml", Options{Sources: srcs, Artifacts: memArtifacts{t}})
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error is not an *Error: %#v", err)
			}
			for _, s := range sentinels {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error wraps no sentinel: %v", err)
		}
		if err := checkDirectives("out", out.Root, 0); err != nil {
			t.Fatalf("a directive is left: %v", err)
		}
		y, err := EncodeYAML(out.Root)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse("again.yaml", y)
		if err != nil {
			t.Fatalf("packaged output does not read back: %v\n%s", err, y)
		}
		if !equal(out.Root, again.Root) {
			t.Fatalf("packaged output changed when read back:\n%s", y)
		}
	})
}

// TestRainOtherSources: the directives read files through Options.Sources
// when one is given (here in memory), as modules are.
func TestRainOtherSources(t *testing.T) {
	srcs := memSources{"template.yaml": []byte("Resources:\n  B: !Rain::Include inc.yaml\n"), "inc.yaml": []byte("Type: AWS::S3::Bucket\nProperties:\n  Name: !Rain::Embed embed.txt\n"), "embed.txt": []byte(" e \n")}
	out, err := Package("template.yaml", Options{Sources: srcs, NoSourceMap: true})
	if err != nil {
		t.Fatal(err)
	}
	y, _ := EncodeYAML(out.Root)
	if !strings.Contains(string(y), "Name: e\n") {
		t.Errorf("got\n%s", y)
	}
}
