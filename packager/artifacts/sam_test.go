package artifacts

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/internal/testenv/sam"
	"github.com/cloud-assembly/assemble/packager/cfn"
)

// samProject uses every SAM property that takes a local path, the SAM
// Global Function.CodeUri (inherited by one function and not the other),
// and a nested application. (Globals.Api.DefinitionUri is packaged too,
// see TestSAMGlobals, but the SAM transform 1.110 itself fails on it: it
// adds a DefinitionBody to an Api before it merges the Globals.)
var samProject = map[string]string{
	"template.yaml": `Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    CodeUri: src
    Runtime: python3.12
    Handler: main.handler
Resources:
  Inherits:
    Type: AWS::Serverless::Function
  Own:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: other/main.py
  Layer:
    Type: AWS::Serverless::LayerVersion
    Properties:
      ContentUri: layer
  Api:
    Type: AWS::Serverless::Api
    Properties:
      StageName: prod
      DefinitionUri: api.yaml
  SM:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionUri: sm.json
      Role: arn:aws:iam::123456789012:role/sm
  App:
    Type: AWS::Serverless::Application
    Properties:
      Location: child/child.yaml
  Plain:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: python3.12
      Handler: main.handler
      Role: arn:aws:iam::123456789012:role/fn
      Code: s3://prebuilt/fn.zip?versionId=v7
`,
	"src/main.py":         "def handler(e, c):\n    return 1\n",
	"other/main.py":       "def handler(e, c):\n    return 2\n",
	"layer/python/lib.py": "X = 1\n",
	"api.yaml":            "openapi: 3.0.1\ninfo: {title: t, version: '1'}\npaths: {}\n",
	"sm.json":             `{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}`,
	"child/child.yaml":    "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n",
}

// packJSON packages dir/template.yaml with a Set of opts as JSON.
func packJSON(t *testing.T, dir string, opts Options) ([]byte, *Set, error) {
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
		return nil, s, err
	}
	out, err := cfn.EncodeJSON(tm.Root)
	if err != nil {
		t.Fatal(err)
	}
	return out, s, nil
}

// TestSAMTransform runs what assemble package and assemble build write for
// samProject through the real SAM transform (as CloudFormation runs it)
// and checks that every function, layer, API, state machine and nested
// application it makes names the object assemble uploads: a Globals
// CodeUri packaged for the function that inherits it (issue 28 item 3),
// an application's Location as a URL string (item 1).
func TestSAMTransform(t *testing.T) {
	sam.Python(t)
	dir := t.TempDir()
	write(t, dir, samProject)
	modes := []struct {
		name   string
		opts   Options
		params map[string]string
	}{
		{"package", Options{Bucket: "my-assets", Region: "eu-west-1"}, nil},
		{"build", Options{Parameter: true, Bucket: "my-assets", Region: "eu-west-1"}, map[string]string{BucketParameter: "my-assets"}},
	}
	var jobs []sam.Job
	keys := make([]map[string]string, len(modes))
	for i, m := range modes {
		out, s, err := packJSON(t, dir, m.opts)
		if err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		keys[i] = map[string]string{}
		for _, a := range s.Assets() {
			keys[i][a.Source] = a.Key
		}
		jobs = append(jobs, sam.Job{Template: out, Parameters: m.params})
	}
	for i, res := range sam.Transform(t, jobs...) {
		m := modes[i]
		if res.Error != "" {
			t.Errorf("%s: the SAM transform fails: %s\n%s", m.name, res.Error, jobs[i].Template)
			continue
		}
		resources, _ := res.Template["Resources"].(map[string]any)
		prop := func(id, typ, name string) map[string]any {
			r, _ := resources[id].(map[string]any)
			for k, v := range resources {
				// a layer's logical ID takes a hash of its content
				if v, ok := v.(map[string]any); ok && r == nil && strings.HasPrefix(k, id) && v["Type"] == typ {
					r = v
				}
			}
			if r == nil || r["Type"] != typ {
				t.Fatalf("%s: the transform makes no %s %s: %v", m.name, typ, id, resources[id])
			}
			props, _ := r["Properties"].(map[string]any)
			return map[string]any{name: props[name]}
		}
		bucket := any("my-assets")
		if m.opts.Parameter {
			bucket = map[string]any{"Ref": BucketParameter}
		}
		loc := func(bk, kk, key string) map[string]any { return map[string]any{bk: bucket, kk: key} }
		for _, c := range []struct {
			id, typ, name string
			want          any
		}{
			{"Inherits", "AWS::Lambda::Function", "Code", loc("S3Bucket", "S3Key", keys[i]["src"])},
			{"Own", "AWS::Lambda::Function", "Code", loc("S3Bucket", "S3Key", keys[i]["other/main.py"])},
			{"Layer", "AWS::Lambda::LayerVersion", "Content", loc("S3Bucket", "S3Key", keys[i]["layer"])},
			{"Api", "AWS::ApiGateway::RestApi", "BodyS3Location", loc("Bucket", "Key", keys[i]["api.yaml"])},
			{"SM", "AWS::StepFunctions::StateMachine", "DefinitionS3Location", loc("Bucket", "Key", keys[i]["sm.json"])},
			{"App", "AWS::CloudFormation::Stack", "TemplateURL", "https://s3.eu-west-1.amazonaws.com/my-assets/" + keys[i]["child/child.yaml"]},
			{"Plain", "AWS::Lambda::Function", "Code", map[string]any{"S3Bucket": "prebuilt", "S3Key": "fn.zip", "S3ObjectVersion": "v7"}},
		} {
			got := prop(c.id, c.typ, c.name)[c.name]
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(c.want)
				t.Errorf("%s: %s.%s is %s, want %s", m.name, c.id, c.name, g, w)
			}
		}
		if strings.Contains(string(jobs[i].Template), `"CodeUri": "src"`) {
			t.Errorf("%s: a Globals path is left as written", m.name)
		}
	}
}

// TestSAMApplicationRefused: where no URL string can be written (the
// bucket a reference to another stack's output, or its region unknown), an
// AWS::Serverless::Application with a local Location is refused at
// packaging, saying why, rather than deployed to fail in the SAM
// transform (issue 28 item 1).
func TestSAMApplicationRefused(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, samProject)
	for _, opts := range []Options{
		{Parameter: true, Region: "eu-west-1"}, // bucket ${Infra.output.Bucket}
		{Parameter: true, Bucket: "my-assets"}, // build with an unknown region
		{Bucket: "my-assets"},                  // package with no --region
	} {
		_, _, err := packJSON(t, dir, opts)
		var ae *Error
		if !errors.Is(err, ErrArtifact) || !errors.As(err, &ae) || ae.At.Line != 31 || !strings.Contains(err.Error(), "the SAM transform reads it before parameters") {
			t.Errorf("%+v: got %v, want ErrArtifact at template.yaml:31", opts, err)
		}
	}
}

// TestSAMGlobals: the SAM Globals that take a local path are packaged in
// the form of the property they stand for, in both modes (issue 28 item
// 3); a web address there is refused as in the property.
func TestSAMGlobals(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"template.yaml": "Transform: AWS::Serverless-2016-10-31\nGlobals:\n  Function:\n    CodeUri: src\n    Timeout: 3\n  Api:\n    DefinitionUri: api.yaml\n  HttpApi:\n    CorsConfiguration: true\nResources:\n  F:\n    Type: AWS::Serverless::Function\n",
		"src/main.py":   "x",
		"api.yaml":      "openapi: 3.0.1\n",
	})
	out, s, err := pack(t, dir, Options{Bucket: "bkt"})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, a := range s.Assets() {
		keys[a.Source] = a.Key
	}
	for _, w := range []string{"    CodeUri: s3://bkt/" + keys["src"] + "\n", "    DefinitionUri: s3://bkt/" + keys["api.yaml"] + "\n", "    Timeout: 3\n"} {
		if !strings.Contains(strings.ReplaceAll(out, `"`, ""), w) {
			t.Errorf("package: lacks %q:\n%s", w, out)
		}
	}
	out, _, err = pack(t, dir, Options{Parameter: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"    CodeUri:\n      Bucket: !Ref AssembleAssetBucket\n      Key: ", "    DefinitionUri:\n      Bucket: !Ref AssembleAssetBucket\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("build: lacks %q:\n%s", w, out)
		}
	}
	write(t, dir, map[string]string{"template.yaml": "Globals:\n  Function:\n    CodeUri: https://example.com/x.zip\nResources:\n  F:\n    Type: AWS::Serverless::Function\n"})
	if _, _, err := pack(t, dir, Options{Bucket: "bkt"}); !errors.Is(err, ErrArtifact) || !strings.Contains(err.Error(), "template.yaml:3:14") {
		t.Errorf("web address in Globals: got %v", err)
	}
}
