package cfn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/packager/cfn/source"
)

// rainProject writes files (name: body; a body "-> target" makes a
// symbolic link) into a new project folder and returns its path.
func rainProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(body, "-> "); ok {
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fakeArtifacts records what it is asked to ship; the bucket is an
// intrinsic (an import) and the key names the path, so outputs show both.
type fakeArtifacts struct {
	root  string
	added []Artifact
	err   error
}

func (f *fakeArtifacts) Add(a Artifact) (any, any, error) {
	if f.err != nil {
		return nil, nil, f.err
	}
	f.added = append(f.added, a)
	rel, err := filepath.Rel(f.root, a.Path)
	if err != nil {
		return nil, nil, err
	}
	key := filepath.ToSlash(rel)
	if a.Zip {
		key += ".zip"
	}
	if a.Extension != "" {
		key += "." + a.Extension
	}
	return map[string]any{"Fn::ImportValue": "assets-bucket"}, key, nil
}

// rainPackage packages template.yaml of a project written by rainProject,
// with art (nil for none), and returns the YAML.
func rainPackage(t *testing.T, dir string, art Artifacts) (string, error) {
	t.Helper()
	opts := Options{NoSourceMap: true}
	if art != nil {
		opts.Artifacts = art
	}
	got, err := Package(filepath.Join(dir, "template.yaml"), opts)
	if err != nil {
		return "", err
	}
	out, err := EncodeYAML(got.Root)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), nil
}

// wantOut checks the packaged YAML against want (both parsed, compared as
// rain's test compares).
func wantOut(t *testing.T, got, want string) {
	t.Helper()
	if d := rainDiff(t, []byte(got), []byte(want)); len(d) > 0 {
		t.Errorf("packaged:\n%s\ndiffers from the expectation:\n%s", got, strings.Join(d, "\n"))
	}
}

// wantErr checks that err wraps sentinel, is placed at file:line:col and
// says each of words.
func wantErr(t *testing.T, err, sentinel error, place string, words ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("packaged; want an error %v", sentinel)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("error %v is not %v", err, sentinel)
	}
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *cfn.Error", err)
	}
	if at := fmt.Sprintf("%s:%d:%d", filepath.Base(ce.File), ce.Line, ce.Col); at != place {
		t.Errorf("error placed at %s, want %s: %v", at, place, err)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

const bucketRes = "Resources:\n  B:\n    Type: AWS::S3::Bucket\n    Properties:\n"

func TestRainEmbed(t *testing.T) {
	dir := rainProject(t, map[string]string{
		"template.yaml": bucketRes + "      BucketName: !Rain::Embed name.txt\n      Tags:\n        - Key: script\n          Value: !Rain::Embed sub/script.sh\n" +
			"  M:\n    Type: !Rain::Module mods/m.yaml\n",
		"name.txt":      "  my-bucket\n\n",
		"sub/script.sh": "#!/bin/sh\necho hi\n",
		"mods/m.yaml":   "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      QueueName: !Rain::Embed q.txt\n",
		"mods/q.txt":    "queue-from-the-module-folder",
	})
	got, err := rainPackage(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantOut(t, got, `Resources:
  B:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: my-bucket
      Tags:
        - Key: script
          Value: "#!/bin/sh\necho hi"
  MQ:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: queue-from-the-module-folder
`)
}

func TestRainEmbedErrors(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, arg string
		files     map[string]string
		sentinel  error
		words     []string
	}{
		{"missing", "nothere.txt", nil, source.ErrNotFound, []string{"nothere.txt"}},
		{"dotdot", "../secret.txt", nil, ErrOutsideRoot, []string{"../secret.txt"}},
		{"absolute", filepath.Join(outside, "secret.txt"), nil, ErrOutsideRoot, []string{"outside"}},
		{"symlink", "link.txt", map[string]string{"link.txt": "-> " + filepath.Join(outside, "secret.txt")}, ErrOutsideRoot, []string{"link.txt"}},
		{"folder", "sub", map[string]string{"sub/a.txt": "a"}, ErrInvalid, []string{"not a regular file"}},
		{"binary", "bin.dat", map[string]string{"bin.dat": "ab\x00\xffcd"}, ErrInvalid, []string{"not text", "!Rain::S3"}},
		{"large", "big.txt", map[string]string{"big.txt": strings.Repeat("a", maxInsertFile+1)}, ErrTooLarge, []string{"larger than"}},
		{"url", "https://example.com/x.txt", nil, ErrInvalid, []string{"not a URL"}},
		{"not-a-string", "[a, b]", nil, ErrInvalid, []string{"path of a file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"template.yaml": bucketRes + "      BucketName: !Rain::Embed " + tc.arg + "\n"}
			for k, v := range tc.files {
				files[k] = v
			}
			_, err := rainPackage(t, rainProject(t, files), nil)
			// Placed at the directive (a tagged value starts at its tag).
			wantErr(t, err, tc.sentinel, "template.yaml:5:19", tc.words...)
		})
	}
}

func TestRainInclude(t *testing.T) {
	dir := rainProject(t, map[string]string{
		"template.yaml": "Resources:\n  B: !Rain::Include parts/bucket.yaml\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      Tags: !Rain::Include parts/tags.json\n" +
			"  More: !Rain::Include parts/module.yaml\n",
		"parts/bucket.yaml": "Type: AWS::S3::Bucket\nProperties:\n  BucketName: !Rain::Embed name.txt\n  Arn: !GetAtt Q.Arn\n",
		"parts/name.txt":    "from-the-included-file-folder\n",
		"parts/tags.json":   `[{"Key": "a", "Value": {"Ref": "AWS::Region"}}]`,
		// An included resource body that is a module: translated too.
		"parts/module.yaml": "Type: !Rain::Module ../m.yaml\nProperties:\n  Name: included\n",
		"m.yaml":            "Parameters:\n  Name:\n    Type: String\nResources:\n  Topic:\n    Type: AWS::SNS::Topic\n    Properties:\n      TopicName: !Ref Name\n",
	})
	got, err := rainPackage(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantOut(t, got, `Resources:
  B:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: from-the-included-file-folder
      Arn: !GetAtt Q.Arn
  Q:
    Type: AWS::SQS::Queue
    Properties:
      Tags:
        - Key: a
          Value: !Ref AWS::Region
  MoreTopic:
    Type: AWS::SNS::Topic
    Properties:
      TopicName: included
`)
}

func TestRainIncludeErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    map[string]string
		sentinel error
		place    string
		words    []string
	}{
		{"not-yaml", map[string]string{"inc.yaml": "Type: [unclosed\n"}, ErrSyntax, "inc.yaml:2:1", []string{"included at", "template.yaml:2:6", "YAML or JSON"}},
		{"binary", map[string]string{"inc.yaml": "\x00\x01\x02PK"}, ErrSyntax, "inc.yaml:1:1", []string{"not a YAML or JSON file", "included at"}},
		{"empty", map[string]string{"inc.yaml": ""}, ErrSyntax, "inc.yaml:0:0", []string{"empty file", "included at"}},
		{"two-documents", map[string]string{"inc.yaml": "a: 1\n---\nb: 2\n"}, ErrSyntax, "inc.yaml:2:1", []string{"more than one YAML document"}},
		{"missing", nil, source.ErrNotFound, "template.yaml:2:6", []string{"inc.yaml"}},
		{"cycle", map[string]string{"inc.yaml": "Type: !Rain::Include inc2.yaml\n", "inc2.yaml": "X: !Rain::Include inc.yaml\n"}, ErrCycle, "inc2.yaml:1:4", []string{"includes itself", "inc.yaml -> "}},
		{"outside", map[string]string{"inc.yaml": "Type: !Rain::Include ../../x.yaml\n"}, ErrOutsideRoot, "inc.yaml:1:7", []string{"../../x.yaml"}},
		{"env-inside", map[string]string{"inc.yaml": "Type: !Rain::Env TYPE\n"}, ErrInvalid, "inc.yaml:1:7", []string{"!Ref TYPE"}},
		{"aliases", map[string]string{"inc.yaml": billionLaughs}, ErrTooLarge, "inc.yaml", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{"template.yaml": "Resources:\n  B: !Rain::Include inc.yaml\n"}
			for k, v := range tc.files {
				files[k] = v
			}
			_, err := rainPackage(t, rainProject(t, files), nil)
			if tc.name == "aliases" {
				if !errors.Is(err, ErrTooLarge) {
					t.Fatalf("got %v, want ErrTooLarge", err)
				}
				return
			}
			wantErr(t, err, tc.sentinel, tc.place, tc.words...)
		})
	}
}

// billionLaughs is a few aliases that stand for very many nodes.
var billionLaughs = func() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	return b.String()
}()

func TestRainConstants(t *testing.T) {
	dir := rainProject(t, map[string]string{
		"template.yaml": `Parameters:
  Prefix:
    Type: String
Rain:
  Constants:
    Name: rain-constants
    Full: !Sub ${Prefix}-${Rain::Name}-sub
    Tags:
      - Key: team
        Value: blue
Resources:
  B1:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !Rain::Constant Name
      Tags: !Rain::Constant Tags
  B2:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !Rain::Constant Full
  B3:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !Sub pre-${Prefix}-${Rain::Name}
      Plain: !Sub ${Rain::Name}
      Literal: !Sub ${!Name}-${Rain::Name}
`,
	})
	got, err := rainPackage(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantOut(t, got, `Parameters:
  Prefix:
    Type: String
Resources:
  B1:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: rain-constants
      Tags:
        - Key: team
          Value: blue
  B2:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !Sub ${Prefix}-rain-constants-sub
  B3:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !Sub pre-${Prefix}-rain-constants
      Plain: rain-constants
      Literal: !Sub ${!Name}-rain-constants
`)
}

// TestRainConstantsInParameters: rain resolves !Rain::Constant wherever it
// is written, Parameters and Rules included (issue 28 item 9).
func TestRainConstantsInParameters(t *testing.T) {
	dir := rainProject(t, map[string]string{
		"template.yaml": `Rain:
  Constants:
    Prefix: myapp
    Sizes: [small, large]
Parameters:
  Name:
    Type: String
    Default: !Rain::Constant Prefix
  Size:
    Type: String
    AllowedValues: !Rain::Constant Sizes
Rules:
  Named:
    Assertions:
      - Assert: !Not [!Equals [!Ref Name, !Rain::Constant Prefix]]
Resources:
  B:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !Ref Name
`,
	})
	got, err := rainPackage(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantOut(t, got, `Parameters:
  Name:
    Type: String
    Default: myapp
  Size:
    Type: String
    AllowedValues:
      - small
      - large
Rules:
  Named:
    Assertions:
      - Assert: !Not
          - !Equals
            - !Ref Name
            - myapp
Resources:
  B:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: !Ref Name
`)
}

func TestRainConstantsErrors(t *testing.T) {
	for _, tc := range []struct {
		name, tmpl string
		sentinel   error
		place      string
		words      []string
	}{
		{"unknown-constant", "Rain:\n  Constants:\n    Name: x\n" + bucketRes + "      BucketName: !Rain::Constant Nmae\n", ErrInvalid, "template.yaml:8:19", []string{"no constant Nmae", "Name"}},
		{"unknown-sub", "Rain:\n  Constants:\n    Name: x\n" + bucketRes + "      BucketName: !Sub ${Rain::Other}\n", ErrInvalid, "template.yaml:8:19", []string{"${Rain::Other}"}},
		{"object-in-sub", "Rain:\n  Constants:\n    Obj: [a]\n" + bucketRes + "      BucketName: !Sub ${Rain::Obj}\n", ErrInvalid, "template.yaml:8:19", []string{"!Rain::Constant Obj"}},
		{"clash", "Constants:\n  Name: a\nRain:\n  Constants:\n    Name: b\n" + bucketRes, ErrNameClash, "template.yaml:5:5", []string{"Name"}},
		{"unknown-section-key", "Rain:\n  Constant:\n    Name: b\n" + bucketRes, ErrInvalid, "template.yaml:2:3", []string{"Constants"}},
		{"unknown-in-parameters", "Rain:\n  Constants:\n    Name: x\nParameters:\n  P:\n    Type: String\n    Default: !Rain::Constant Nmae\n" + bucketRes + "      BucketName: b\n", ErrInvalid, "template.yaml:7:14", []string{"no constant Nmae", "Name"}},
		{"cycle-in-parameters", "Rain:\n  Constants:\n    A: !Rain::Constant B\n    B: !Rain::Constant A\nParameters:\n  P:\n    Type: String\n    Default: !Rain::Constant A\n" + bucketRes + "      BucketName: b\n", ErrCycle, "template.yaml:4:8", []string{"refers to itself"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rainPackage(t, rainProject(t, map[string]string{"template.yaml": tc.tmpl}), nil)
			wantErr(t, err, tc.sentinel, tc.place, tc.words...)
		})
	}
}

func TestRainModule(t *testing.T) {
	dir := rainProject(t, map[string]string{
		"template.yaml": `Rain:
  Packages:
    lib:
      Location: ./library
Conditions:
  Prod: !Equals [!Ref AWS::AccountId, "123456789012"]
Resources:
  Queue:
    Type: AWS::SQS::Queue
  Web:
    Type: !Rain::Module ./web.yaml
    Properties:
      Name: site
      CondName: Prod
    Overrides:
      Bucket:
        DependsOn: Queue
        Properties:
          Tags:
            - Key: b
              Value: "2"
  Lib:
    Type: $lib/topic.yaml
`,
		"web.yaml": `Parameters:
  Name:
    Type: String
  CondName:
    Type: String
  Logging:
    Type: String
Resources:
  Bucket:
    Type: AWS::S3::Bucket
    DependsOn: NoLog
    Condition: !Ref CondName
    Properties:
      BucketName: !Ref Name
      Tags:
        - Key: a
          Value: "1"
  Log:
    Type: AWS::S3::Bucket
    Metadata:
      Rain:
        IfParam: Logging
  NoLog:
    Type: AWS::SNS::Topic
    Metadata:
      Rain:
        IfNotParam: Logging
      Other: kept
`,
		"library/topic.yaml": "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n",
	})
	got, err := rainPackage(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantOut(t, got, `Conditions:
  Prod: !Equals [!Ref AWS::AccountId, "123456789012"]
Resources:
  Queue:
    Type: AWS::SQS::Queue
  WebBucket:
    Type: AWS::S3::Bucket
    DependsOn: [WebNoLog, Queue]
    Condition: Prod
    Properties:
      BucketName: site
      Tags:
        - Key: a
          Value: "1"
        - Key: b
          Value: "2"
  WebNoLog:
    Type: AWS::SNS::Topic
    Metadata:
      Other: kept
  LibTopic:
    Type: AWS::SNS::Topic
`)
}

func TestRainModuleErrors(t *testing.T) {
	mod := "Parameters:\n  Name:\n    Type: String\nResources:\n  Bucket:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName: !Ref Name\n"
	for _, tc := range []struct {
		name, tmpl string
		sentinel   error
		place      string
		words      []string
	}{
		{"override-parameter", "Resources:\n  M:\n    Type: !Rain::Module m.yaml\n    Properties:\n      Name: a\n    Overrides:\n      Bucket:\n        Properties:\n          Name: b\n", ErrInvalid, "template.yaml:9:11", []string{"parameter of the module", "under the module's Properties"}},
		{"override-unknown", "Resources:\n  M:\n    Type: !Rain::Module m.yaml\n    Properties: {Name: a}\n    Overrides:\n      Buckett: {}\n", ErrInvalid, "template.yaml:6:7", []string{"Buckett", "Bucket"}},
		{"unknown-key", "Resources:\n  M:\n    Type: !Rain::Module m.yaml\n    Metadata: {}\n", ErrInvalid, "template.yaml:4:5", []string{"Metadata", "Overrides"}},
		{"not-in-type", "Resources:\n  M:\n    Type: AWS::S3::Bucket\n    Properties:\n      X: !Rain::Module m.yaml\n", ErrInvalid, "template.yaml:5:10", []string{"resource's Type"}},
		{"no-path", "Resources:\n  M:\n    Type: !Rain::Module\n", ErrInvalid, "template.yaml:3:11", []string{"path of a module file"}},
		{"missing-module", "Resources:\n  M:\n    Type: !Rain::Module nothere.yaml\n", source.ErrNotFound, "template.yaml:3:11", []string{"nothere.yaml"}},
		{"outside", "Resources:\n  M:\n    Type: !Rain::Module ../m.yaml\n", ErrOutsideRoot, "template.yaml:3:11", []string{"../m.yaml"}},
		{"unknown-alias", "Resources:\n  M:\n    Type: $nope/m.yaml\n", source.ErrUnknownPackage, "template.yaml:3:11", []string{"nope"}},
		{"package-no-location", "Rain:\n  Packages:\n    lib: {Hash: x}\nResources: {}\n", ErrInvalid, "template.yaml:3:5", []string{"Location"}},
		{"package-unknown-key", "Rain:\n  Packages:\n    lib: {Location: ., Sourc: x}\nResources: {}\n", ErrInvalid, "template.yaml:3:24", []string{"Sourc"}},
		{"clash", "Modules:\n  M:\n    Source: m.yaml\nResources:\n  M:\n    Type: !Rain::Module m.yaml\n", ErrNameClash, "template.yaml:5:3", []string{"M"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rainPackage(t, rainProject(t, map[string]string{"template.yaml": tc.tmpl, "m.yaml": mod}), nil)
			wantErr(t, err, tc.sentinel, tc.place, tc.words...)
		})
	}
}

func TestRainEnvRefused(t *testing.T) {
	t.Setenv("BUCKET_NAME", "set")
	env := filepath.Join(rainCorpus, "tmpl", "env-template.yaml")
	if _, err := os.Stat(env); err == nil {
		_, err := Package(env, Options{})
		wantErr(t, err, ErrInvalid, "env-template.yaml:5:19", "must not depend on", "Parameters", "!Ref BUCKETNAME")
	}
	_, err := rainPackage(t, rainProject(t, map[string]string{"template.yaml": bucketRes + "      BucketName: !Rain::Env BUCKET_NAME\n"}), nil)
	wantErr(t, err, ErrInvalid, "template.yaml:5:19", "parameter")
}

func TestRainUnknownDirective(t *testing.T) {
	_, err := rainPackage(t, rainProject(t, map[string]string{"template.yaml": bucketRes + "      BucketName: !Rain::Embedd x.txt\n"}), nil)
	wantErr(t, err, ErrInvalid, "template.yaml:5:19", "unknown directive Rain::Embedd", "Rain::Embed")
	_, err = rainPackage(t, rainProject(t, map[string]string{"template.yaml": bucketRes + "      BucketName:\n        Rain::Bogus: x\n"}), nil)
	wantErr(t, err, ErrInvalid, "template.yaml:6:9", "unknown directive Rain::Bogus")
}

// TestRainCorpusDangling: rain's suite templates name what they do not
// define; built as templates, they are refused where the name is.
func TestRainCorpusDangling(t *testing.T) {
	tmpl := filepath.Join(rainCorpus, "tmpl", "test-template.yaml")
	if _, err := os.Stat(tmpl); err != nil {
		t.Skip("rain's suite is not present:", err)
	}
	_, err := Package(tmpl, Options{})
	wantErr(t, err, ErrDangling, "test-module.yaml:58:10", "NotFound")
}

// TestColonTag: !Equals: (a stray colon) reads as !Equals, for intrinsic
// functions only.
func TestColonTag(t *testing.T) {
	tp, err := Parse("t.yaml", []byte("Conditions:\n  A:\n    !Equals:\n      - a\n      - b\nResources: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if k, _, ok := single(mapGet(mapGet(tp.Root, "Conditions"), "A")); !ok || k != "Fn::Equals" {
		t.Errorf("!Equals: read as %v, want Fn::Equals", k)
	}
	_, err = Parse("t.yaml", []byte("A: !Bogus: [a]\n"))
	if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "unsupported tag") {
		t.Errorf("!Bogus: gave %v, want an unsupported tag", err)
	}
}

// TestRainIncludeRoot: a template that is one !Rain::Include (the long
// form) becomes the included mapping; a list there is refused.
func TestRainIncludeRoot(t *testing.T) {
	dir := rainProject(t, map[string]string{
		"template.yaml": "'Rain::Include': body.yaml\n",
		"body.yaml":     "Rain:\n  Constants:\n    N: q\nResources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      QueueName: !Rain::Constant N\n",
	})
	got, err := rainPackage(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantOut(t, got, "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n      QueueName: q\n")
	dir = rainProject(t, map[string]string{"template.yaml": "'Rain::Include': body.yaml\n", "body.yaml": "[a, b]\n"})
	_, err = rainPackage(t, dir, nil)
	wantErr(t, err, ErrSyntax, "template.yaml:1:1", "mapping of sections", "list")
}

// TestRainFolderPackages: a Packages entry whose Source is a folder of the
// project (rain reads them; the design's packages are zips) serves
// $alias/path to Modules entries and to rain module types.
func TestRainFolderPackages(t *testing.T) {
	dir := rainProject(t, map[string]string{
		"template.yaml":  "Packages:\n  lib:\n    Source: ./library\nModules:\n  A:\n    Source: $lib/t.yaml\nResources:\n  B:\n    Type: $lib/t.yaml\n",
		"library/t.yaml": "Resources:\n  T:\n    Type: AWS::SNS::Topic\n",
	})
	got, err := rainPackage(t, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantOut(t, got, "Resources:\n  AT:\n    Type: AWS::SNS::Topic\n  BT:\n    Type: AWS::SNS::Topic\n")
	// The folder's modules obey the project-path rule.
	dir = rainProject(t, map[string]string{
		"template.yaml": "Packages:\n  lib:\n    Source: ./library\nModules:\n  A:\n    Source: $lib/../../t.yaml\n",
		"library/x":     "",
	})
	_, err = rainPackage(t, dir, nil)
	wantErr(t, err, ErrOutsideRoot, "template.yaml:6:13", "outside")
}

// TestRainExtendsRefused: early rain's module extensions (a resource with
// Metadata.Extends and no Type) are refused, not emitted without a Type.
func TestRainExtendsRefused(t *testing.T) {
	dir := rainProject(t, map[string]string{
		"template.yaml": "Resources:\n  My:\n    Type: !Rain::Module m.yaml\n",
		"m.yaml":        "Resources:\n  ModuleExtension:\n    Metadata:\n      Extends: AWS::Lambda::Function\n",
	})
	_, err := rainPackage(t, dir, nil)
	wantErr(t, err, ErrInvalid, "m.yaml:4:16", "Extends", "Type (AWS::Lambda::Function)", "Overrides")
}

// TestRainJSON: in a JSON template the directives are written in their
// long form, and the output stays JSON.
func TestRainJSON(t *testing.T) {
	dir := rainProject(t, map[string]string{
		"template.json": `{"Rain": {"Constants": {"N": "json-bucket"}},
 "Resources": {
  "B": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": {"Rain::Constant": "N"}, "Tags": {"Rain::Include": "tags.json"}}},
  "M": {"Type": {"Rain::Module": "m.json"}, "Properties": {"Text": {"Rain::Embed": "t.txt"}}}}}`,
		"tags.json": `[{"Key": "k", "Value": "v"}]`,
		"t.txt":     "hello\n",
		"m.json":    `{"Parameters": {"Text": {"Type": "String"}}, "Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": {"Ref": "Text"}}}}}`,
	})
	got, err := Package(filepath.Join(dir, "template.json"), Options{NoSourceMap: true})
	if err != nil {
		t.Fatal(err)
	}
	if !got.JSON {
		t.Error("the packaged template is not JSON")
	}
	out, err := EncodeJSON(got.Root)
	if err != nil {
		t.Fatal(err)
	}
	wantOut(t, string(out), `{"Resources": {
  "B": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "json-bucket", "Tags": [{"Key": "k", "Value": "v"}]}},
  "MQ": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "hello"}}}}`)
}

// TestConstantCycle: a constant that uses itself, directly or through
// another, is ErrCycle at the use (it overflowed the stack).
func TestConstantCycle(t *testing.T) {
	for name, tmpl := range map[string]string{
		"ref-self":  "Constants:\n  A: !Ref Const::A\n" + bucketRes + "      BucketName: !Ref Const::A\n",
		"rain-self": "Rain:\n  Constants:\n    A: !Rain::Constant A\n" + bucketRes + "      BucketName: !Rain::Constant A\n",
		"mutual":    "Rain:\n  Constants:\n    A: !Rain::Constant B\n    B: {X: !Ref Const::A}\n" + bucketRes + "      BucketName: !Rain::Constant A\n",
	} {
		t.Run(name, func(t *testing.T) {
			srcs := memSources{"template.yaml": []byte(tmpl)}
			_, err := Package("template.yaml", Options{Sources: srcs})
			if !errors.Is(err, ErrCycle) || !strings.Contains(err.Error(), "refers to itself") {
				t.Fatalf("got %v, want ErrCycle", err)
			}
		})
	}
}
