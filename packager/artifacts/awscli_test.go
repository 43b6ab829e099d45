package artifacts

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	yaml "go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/internal/testenv/moto"
	"github.com/cloud-assembly/assemble/packager/cfn"
)

// diffProject is a template with every property aws-cli packages, in
// each of the shapes it takes (a folder, a file Lambda needs zipped, a zip
// shipped as it is, a plain file), a nested stack with its own artifact,
// an AWS::Include and the Serverless Repo metadata.
var diffProject = map[string]string{
	"template.yaml": `AWSTemplateFormatVersion: "2010-09-09"
Metadata:
  AWS::ServerlessRepo::Application:
    Name: app
    ReadmeUrl: README.md
    LicenseUrl: LICENSE.txt
Resources:
  FnFolder:
    Type: AWS::Lambda::Function
    Properties:
      Code: fn
  FnFile:
    Type: AWS::Lambda::Function
    Properties:
      Code: fn/handler.py
  FnZip:
    Type: AWS::Lambda::Function
    Properties:
      Code: prebuilt.zip
  Layer:
    Type: AWS::Lambda::LayerVersion
    Properties:
      Content: layer
  SamFn:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: fn
  SamFnFile:
    Type: AWS::Serverless::Function
    Properties:
      CodeUri: fn/handler.py
  SamLayer:
    Type: AWS::Serverless::LayerVersion
    Properties:
      ContentUri: layer
  SamApi:
    Type: AWS::Serverless::Api
    Properties:
      DefinitionUri: api.yaml
  SamSM:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionUri: sm.json
  SM:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      DefinitionS3Location: sm.json
  Schema:
    Type: AWS::AppSync::GraphQLSchema
    Properties:
      DefinitionS3Location: schema.graphql
  Resolver:
    Type: AWS::AppSync::Resolver
    Properties:
      RequestMappingTemplateS3Location: req.vtl
      ResponseMappingTemplateS3Location: res.vtl
  FnConfig:
    Type: AWS::AppSync::FunctionConfiguration
    Properties:
      RequestMappingTemplateS3Location: req.vtl
      ResponseMappingTemplateS3Location: res.vtl
  Rest:
    Type: AWS::ApiGateway::RestApi
    Properties:
      BodyS3Location: api.yaml
  RestInclude:
    Type: AWS::ApiGateway::RestApi
    Properties:
      Body:
        Fn::Transform:
          Name: AWS::Include
          Parameters:
            Location: include.yaml
  Version:
    Type: AWS::ElasticBeanstalk::ApplicationVersion
    Properties:
      ApplicationName: app
      SourceBundle: bundle
  Glue:
    Type: AWS::Glue::Job
    Properties:
      Command:
        Name: glueetl
        ScriptLocation: script.py
  Repo:
    Type: AWS::CodeCommit::Repository
    Properties:
      RepositoryName: repo
      Code:
        BranchName: main
        S3: repo
  Nested:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: child/child.yaml
  App:
    Type: AWS::Serverless::Application
    Properties:
      Location: child/child.yaml
  Remote:
    Type: AWS::Lambda::Function
    Properties:
      Code:
        S3Bucket: elsewhere
        S3Key: code.zip
  FnJar:
    Type: AWS::Lambda::Function
    Properties:
      Code: app.jar
  Billing:
    Type: AWS::Lambda::Function
    Properties:
      Code: ../services/billing
  FnS3:
    Type: AWS::Lambda::Function
    Properties:
      Code: s3://elsewhere/code.zip?versionId=v1
  LayerS3:
    Type: AWS::Lambda::LayerVersion
    Properties:
      Content: s3://elsewhere/layer.zip?versionId=v2
  RestS3:
    Type: AWS::ApiGateway::RestApi
    Properties:
      BodyS3Location: s3://elsewhere/api.yaml?versionId=v3
  SMS3:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      DefinitionS3Location: s3://elsewhere/sm.json
  SamSMS3:
    Type: AWS::Serverless::StateMachine
    Properties:
      DefinitionUri: s3://elsewhere/sm.json?versionId=v4
  VersionS3:
    Type: AWS::ElasticBeanstalk::ApplicationVersion
    Properties:
      ApplicationName: app
      SourceBundle: s3://elsewhere/bundle.zip
  RepoS3:
    Type: AWS::CodeCommit::Repository
    Properties:
      RepositoryName: repo2
      Code:
        BranchName: main
        S3: s3://elsewhere/repo.zip?versionId=v5
`,
	"child/child.yaml": `Resources:
  ChildFn:
    Type: AWS::Lambda::Function
    Properties:
      Code: code
`,
	"child/code/index.js":   "exports.handler = async () => 'child';\n",
	"fn/handler.py":         "def handler(event, context):\n    return 1\n",
	"fn/lib/util.py":        "X = 1\n",
	"fn/lib/data/deep.json": `{"deep": true}`,
	"layer/python/mod.py":   "Y = 2\n",
	"api.yaml":              "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths: {}\n",
	"sm.json":               `{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}`,
	"schema.graphql":        "type Query { a: String }\n",
	"req.vtl":               "{}\n",
	"res.vtl":               "$util.toJson($ctx.result)\n",
	"include.yaml":          "openapi: 3.0.0\n",
	"bundle/Procfile":       "web: run\n",
	"bundle/app/main.go":    "package main\n",
	"script.py":             "print('glue')\n",
	"repo/README":           "repo\n",
	"README.md":             "# app\n",
	"LICENSE.txt":           "MIT\n",
}

// TestAgainstAWSCLI packages diffProject with aws cloudformation package
// (aws-cli 1.45, uploading to moto_server) and with a Set, and checks that
// the same properties are rewritten, in the same form, and that the
// objects hold the same files with the same contents. Object keys differ
// by design (aws-cli: MD5; we: SHA-256), and so do zip bytes (aws-cli
// keeps file times and modes). Issue 28 added the cases where aws-cli is
// right and we were not: s3:// strings in mapping properties, with
// ?versionId= (item 2); an executable jar shipped as it is (item 6); a
// monorepo's sibling folder, with the project root above the template
// (item 8); an AWS::Serverless::Application's Location as a URL string
// (item 1). The template lies in app/, as in a monorepo.
func TestAgainstAWSCLI(t *testing.T) {
	awsBin, err := exec.LookPath("aws")
	if err != nil {
		t.Skip("the aws CLI is not installed (aws-cli 1.45 ships in this machine image's Python)")
	}
	moto.Env(t)
	root := t.TempDir()
	dir := filepath.Join(root, "app")
	write(t, dir, diffProject)
	write(t, root, map[string]string{"services/billing/index.js": "exports.handler = async () => 'billing';\n"})
	if err := os.Chmod(filepath.Join(dir, "fn/handler.py"), 0o755); err != nil {
		t.Fatal(err)
	}
	// an executable jar: a launch script before the zip data
	var jb bytes.Buffer
	jw := zip.NewWriter(&jb)
	w, _ := jw.Create("META-INF/MANIFEST.MF")
	w.Write([]byte("Manifest-Version: 1.0\n"))
	jw.Close()
	if err := os.WriteFile(filepath.Join(dir, "app.jar"), append([]byte(launchScript), jb.Bytes()...), 0o755); err != nil {
		t.Fatal(err)
	}
	// a prebuilt zip, shipped as it is by both
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ = zw.Create("prebuilt.js")
	w.Write([]byte("prebuilt"))
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "prebuilt.zip"), zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	b := make([]byte, 6)
	rand.Read(b)
	bucket := "diff-" + hex.EncodeToString(b)
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(awsBin, "cloudformation", "package", "--template-file", "template.yaml", "--s3-bucket", bucket, "--output-template-file", "aws.yaml")
	cmd.Dir = dir
	cmd.Env = cliEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("aws cloudformation package: %v\n%s", err, out)
	}
	awsOut, err := os.ReadFile(filepath.Join(dir, "aws.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "aws.yaml"))

	s, err := New(Options{Root: root, Bucket: bucket, Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	file := filepath.Join(dir, "template.yaml")
	tm, err := cfn.Package(file, cfn.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Export(tm, file); err != nil {
		t.Fatal(err)
	}
	ours, err := cfn.EncodeJSON(tm.Root)
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]*Asset{}
	for _, a := range s.Assets() {
		byKey[a.Key] = a
	}
	get := func(key string) []byte {
		out, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("aws-cli's object %s: %v", key, err)
		}
		defer out.Body.Close()
		data, err := io.ReadAll(out.Body)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	mine := func(key string) []byte {
		a := byKey[key]
		if a == nil {
			t.Fatalf("no asset at key %s", key)
		}
		r, err := a.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		data, _ := io.ReadAll(r)
		return data
	}
	var theirs, oursV any
	if err := yaml.Unmarshal(awsOut, &theirs); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(ours, &oursV); err != nil {
		t.Fatal(err)
	}
	n := compareTemplates(t, "template.yaml", bucket, theirs, oursV, get, mine)
	if n != 26 {
		t.Errorf("%d artifact values compared, want 26", n)
	}
	// The s3:// strings are compared as values above; they must be the
	// mappings, not left as strings by both.
	res := theirs.(map[string]any)["Resources"].(map[string]any)
	if code := res["FnS3"].(map[string]any)["Properties"].(map[string]any)["Code"]; fmt.Sprint(code) != "map[S3Bucket:elsewhere S3Key:code.zip S3ObjectVersion:v1]" {
		t.Errorf("aws-cli writes FnS3's Code as %v", code)
	}
}

// TestAgainstAWSCLIRefusals: what aws-cli refuses we refuse too, at
// packaging: a web address in Code (issue 28 item 8).
func TestAgainstAWSCLIRefusals(t *testing.T) {
	awsBin, err := exec.LookPath("aws")
	if err != nil {
		t.Skip("the aws CLI is not installed (aws-cli 1.45 ships in this machine image's Python)")
	}
	moto.Env(t)
	dir := t.TempDir()
	write(t, dir, map[string]string{"template.yaml": "Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: https://example.com/code.zip\n"})
	cmd := exec.Command(awsBin, "cloudformation", "package", "--template-file", "template.yaml", "--s3-bucket", "no-such-bucket", "--output-template-file", "aws.yaml")
	cmd.Dir = dir
	cmd.Env = cliEnv()
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("aws cloudformation package accepts Code: https://...:\n%s", out)
	}
	if _, _, err := pack(t, dir, Options{Bucket: "no-such-bucket"}); !errors.Is(err, ErrArtifact) {
		t.Errorf("got %v, want ErrArtifact", err)
	}
}

// compareTemplates compares two packaged templates: where one holds an
// artifact location, the other holds one of the same form, and the two
// objects hold the same content; elsewhere they are equal. It returns
// the number of locations compared.
func compareTemplates(t *testing.T, where, bucket string, theirs, ours any, get, mine func(string) []byte) int {
	t.Helper()
	tk, tform := location(theirs, bucket)
	ok, oform := location(ours, bucket)
	if tform != "" || oform != "" {
		if tform != oform {
			t.Errorf("%s: aws-cli writes %v (%s), we write %v (%s)", where, theirs, tform, ours, oform)
			return 0
		}
		compareObjects(t, where, bucket, get(tk), mine(ok), get, mine)
		return 1
	}
	switch tv := theirs.(type) {
	case map[string]any:
		ov, isMap := ours.(map[string]any)
		if !isMap {
			t.Errorf("%s: aws-cli writes %v, we write %v", where, theirs, ours)
			return 0
		}
		n := 0
		keys := map[string]bool{}
		for k := range tv {
			keys[k] = true
		}
		for k := range ov {
			keys[k] = true
		}
		for k := range keys {
			n += compareTemplates(t, where+"."+k, bucket, tv[k], ov[k], get, mine)
		}
		return n
	case []any:
		ov, isSeq := ours.([]any)
		if !isSeq || len(ov) != len(tv) {
			t.Errorf("%s: aws-cli writes %v, we write %v", where, theirs, ours)
			return 0
		}
		n := 0
		for i := range tv {
			n += compareTemplates(t, fmt.Sprintf("%s[%d]", where, i), bucket, tv[i], ov[i], get, mine)
		}
		return n
	}
	if fmt.Sprint(theirs) != fmt.Sprint(ours) {
		t.Errorf("%s: aws-cli writes %v, we write %v", where, theirs, ours)
	}
	return 0
}

// location recognises an uploaded artifact's location in the bucket:
// s3://bucket/key, {X: bucket, Y: key} of the known property pairs, or a
// path-style URL (aws-cli's endpoint URL, our Fn::Sub of one).
func location(v any, bucket string) (key, form string) {
	switch v := v.(type) {
	case string:
		if k, ok := strings.CutPrefix(v, "s3://"+bucket+"/"); ok {
			return k, "s3uri"
		}
		if u, err := url.Parse(v); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			if k, ok := strings.CutPrefix(u.Path, "/"+bucket+"/"); ok {
				return k, "url"
			}
		}
	case map[string]any:
		if sub, ok := v["Fn::Sub"].(string); ok && len(v) == 1 {
			if i := strings.Index(sub, "/"+bucket+"/"); i >= 0 && strings.HasPrefix(sub, "https://") {
				return sub[i+len(bucket)+2:], "url"
			}
		}
		for _, pair := range [][2]string{{"S3Bucket", "S3Key"}, {"Bucket", "Key"}} {
			if v[pair[0]] == bucket && len(v) == 2 {
				if k, ok := v[pair[1]].(string); ok {
					return k, pair[0] + "/" + pair[1]
				}
			}
		}
	}
	return "", ""
}

// compareObjects compares two uploaded objects: zips by their files and
// contents, templates as templates, anything else byte for byte.
func compareObjects(t *testing.T, where, bucket string, theirs, ours []byte, get, mine func(string) []byte) {
	t.Helper()
	if isZip(theirs) || isZip(ours) {
		tf, of := zipFiles(t, theirs), zipFiles(t, ours)
		if fmt.Sprint(tf) != fmt.Sprint(of) {
			t.Errorf("%s: aws-cli's zip holds %v, ours %v", where, tf, of)
		}
		return
	}
	if bytes.Equal(theirs, ours) {
		return
	}
	var tv, ov any
	if yaml.Unmarshal(theirs, &tv) == nil && yaml.Unmarshal(ours, &ov) == nil {
		if tm, ok := tv.(map[string]any); ok && tm["Resources"] != nil {
			// a nested template: our short forms read as plain values
			var node yaml.Node
			yaml.Unmarshal(ours, &node)
			tmpl, err := cfn.Parse("nested", ours)
			if err != nil {
				t.Fatal(err)
			}
			js, _ := cfn.EncodeJSON(tmpl.Root)
			json.Unmarshal(js, &ov)
			compareTemplates(t, where+" (nested)", bucket, tv, ov, get, mine)
			return
		}
	}
	t.Errorf("%s: objects differ:\naws-cli: %q\nours:    %q", where, theirs, ours)
}

// zipFiles lists a zip's files (no folders) as "name=content", sorted.
func zipFiles(t *testing.T, data []byte) []string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		out = append(out, f.Name+"="+string(b))
	}
	sort.Strings(out)
	return out
}

// cliEnv is the environment for the aws CLI: moto.Env's, without the
// variables it sets empty (the CLI takes AWS_PROFILE="" as a profile
// named "").
func cliEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); v == "" && strings.HasPrefix(k, "AWS_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}
