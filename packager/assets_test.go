package packager

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/internal/hint"
	"github.com/cloud-assembly/assemble/packager/artifacts"
)

// assetProject: a bucket stack deployed first, and an app whose template
// has a Lambda function (a folder), a layer, an AWS::Include and a nested
// stack with its own artifact.
var assetProject = map[string]string{
	"assembly.yaml": `environment: aws://123456789012/eu-west-1
assets:
  bucketName: ${Infra.output.Bucket}
  keyPrefix: app/
droplets:
  Infra:
    type: stack
    properties: {stackName: infra, template: infra.yaml}
  App:
    type: stack
    properties: {stackName: app, template: app/template.yaml}
`,
	"infra.yaml": "Resources:\n  B:\n    Type: AWS::S3::Bucket\nOutputs:\n  Bucket:\n    Value: !Ref B\n",
	"app/template.yaml": `Resources:
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Handler: index.handler
      Runtime: nodejs20.x
      Role: arn:aws:iam::123456789012:role/r
      Code: src
  Layer:
    Type: AWS::Lambda::LayerVersion
    Properties:
      Content: layer
  Api:
    Type: AWS::ApiGateway::RestApi
    Properties:
      Body:
        Fn::Transform:
          Name: AWS::Include
          Parameters:
            Location: api.yaml
  Child:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: child/child.yaml
`,
	"app/src/index.js":       "exports.handler = async () => 1;\n",
	"app/src/lib/x.js":       "module.exports = 2;\n",
	"app/layer/nodejs/y.js":  "module.exports = 3;\n",
	"app/api.yaml":           "openapi: 3.0.0\n",
	"app/child/child.yaml":   "Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: code\n",
	"app/child/code/main.py": "def handler(e, c): pass\n",
}

func writeAssetFiles(t *testing.T, dir string, files map[string]string) {
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

// TestBuildAssets: every artifact is a file droplet in the stack's
// environment, uploaded to the bucket the project names (here an output of
// a stack deployed first) at keyPrefix/SHA-256; the stack takes the bucket
// through ${Asset.bucketName} and depends on every file droplet; the deploy
// order is bucket stack, files, app.
func TestBuildAssets(t *testing.T) {
	dir := t.TempDir()
	writeAssetFiles(t, dir, assetProject)
	p, err := Load(dir, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := p.Manifest
	app := m.Droplets["App"]
	var files []string
	for _, id := range m.IDs() {
		d := m.Droplets[id]
		if d.Type != droplets.FileType {
			continue
		}
		files = append(files, id)
		if d.Environment != app.Environment || d.Properties["bucketName"] != "${Infra.output.Bucket}" {
			t.Errorf("%s: %+v", id, d)
		}
		key, _ := d.Properties["objectKey"].(string)
		name, _ := d.Properties["file"].(string)
		sum := strings.TrimSuffix(strings.TrimPrefix(key, "app/"), ".template")
		if !strings.HasPrefix(key, "app/") || len(sum) != 64 || !strings.HasPrefix(name, "assets/"+id+".") || !slices.Contains(p.Files(), name) {
			t.Errorf("%s: key %q, file %q", id, key, name)
		}
	}
	// named after what uses them (issue 30 item 5)
	if got := strings.Join(files, " "); got != "Api-Include Child-TemplateURL Child/F-Code Fn-Code Layer-Content" {
		t.Fatalf("file droplets %s", got)
	}
	for _, f := range files {
		if !slices.Contains(app.DependsOn, f) {
			t.Errorf("App does not depend on %s", f)
		}
	}
	params := app.Properties["parameters"].(map[string]any)
	ref, _ := params[artifacts.BucketParameter].(string)
	if !slices.Contains(files, strings.TrimSuffix(strings.TrimPrefix(ref, "${"), ".bucketName}")) {
		t.Errorf("bucket parameter %q", ref)
	}
	order := p.Report.Order
	pos := func(id string) int { return slices.Index(order, id) }
	for _, f := range files {
		if !(pos("Infra") < pos(f) && pos(f) < pos("App")) {
			t.Errorf("deploy order %v: want Infra, %s, App", order, f)
		}
	}
}

// TestAssetNamesStable: a file droplet keeps its name when its content
// changes (its object key does not: CloudFormation updates a function
// when the key changes), so --only and status name the same droplet
// across releases; the same artifact in two stacks of one environment is
// one droplet; two that would take one name are told apart by the stack
// (issue 30 item 5).
func TestAssetNamesStable(t *testing.T) {
	dir := t.TempDir()
	writeAssetFiles(t, dir, map[string]string{
		"assembly.yaml": `environment: aws://123456789012/eu-west-1
assets: {bucketName: my-assets}
droplets:
  Orders:
    type: stack
    properties: {stackName: orders, template: orders.yaml}
  Payments:
    type: stack
    properties: {stackName: payments, template: payments.yaml}
`,
		"orders.yaml":      "Resources:\n  Fn:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: orders\n  Shared:\n    Type: AWS::Lambda::LayerVersion\n    Properties:\n      Content: lib\n",
		"payments.yaml":    "Resources:\n  Fn:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: payments\n  Lib:\n    Type: AWS::Lambda::LayerVersion\n    Properties:\n      Content: lib\n",
		"orders/index.js":  "1",
		"payments/main.js": "2",
		"lib/nodejs/x.js":  "3",
	})
	keys := func() map[string]string {
		p, err := Load(dir, BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for id, d := range p.Manifest.Droplets {
			if d.Type == droplets.FileType {
				out[id] = d.Properties["objectKey"].(string)
			}
		}
		return out
	}
	before := keys()
	want := []string{"Fn-Code", "Fn-Code-Payments", "Shared-Content"}
	if got := slices.Sorted(maps.Keys(before)); !slices.Equal(got, want) {
		t.Fatalf("file droplets %v, want %v", got, want)
	}
	writeAssetFiles(t, dir, map[string]string{"orders/index.js": "1 changed"})
	after := keys()
	if got := slices.Sorted(maps.Keys(after)); !slices.Equal(got, want) {
		t.Fatalf("after a change, file droplets %v, want %v", got, want)
	}
	if after["Fn-Code"] == before["Fn-Code"] || after["Shared-Content"] != before["Shared-Content"] {
		t.Errorf("object keys before %v, after %v: only Fn-Code's changes", before, after)
	}
}

// build writes the project at dir to bytes.
func buildBytes(t *testing.T, dir string, opts BuildOptions) []byte {
	t.Helper()
	p, err := Load(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := p.WriteTo(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBuildAssetsReproducible: two builds, a build after every file's
// time and permission changed, and a build of a fresh copy elsewhere give
// the same bytes (so the same object keys: no function is updated).
func TestBuildAssetsReproducible(t *testing.T) {
	dir := t.TempDir()
	writeAssetFiles(t, dir, assetProject)
	one := buildBytes(t, dir, BuildOptions{})
	if two := buildBytes(t, dir, BuildOptions{}); !bytes.Equal(one, two) {
		t.Fatal("a second build differs")
	}
	later := time.Now().Add(48 * time.Hour)
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			os.Chtimes(p, later, later)
			os.Chmod(p, 0o600)
		}
		return nil
	})
	if three := buildBytes(t, dir, BuildOptions{}); !bytes.Equal(one, three) {
		t.Fatal("a build after touching the files differs")
	}
	fresh := filepath.Join(t.TempDir(), "elsewhere", "clone")
	writeAssetFiles(t, fresh, assetProject)
	if four := buildBytes(t, fresh, BuildOptions{}); !bytes.Equal(one, four) {
		t.Fatal("a build of a fresh copy differs")
	}
	// and the zip inside holds normalised entries
	zr, err := zip.NewReader(bytes.NewReader(one), int64(len(one)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, ".zip") {
			rc, _ := f.Open()
			var b bytes.Buffer
			b.ReadFrom(rc)
			inner, err := zip.NewReader(bytes.NewReader(b.Bytes()), int64(b.Len()))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range inner.File {
				if e.Mode() != 0o644 || !e.Modified.Equal(artifacts.ZipTime()) {
					t.Errorf("%s in %s: mode %v time %v", e.Name, f.Name, e.Mode(), e.Modified)
				}
			}
		}
	}
}

// TestBuildAssetBucketFlag: --asset-bucket gives a single template its
// bucket (and overrides assets:); the output may not land in a folder that
// is zipped.
func TestBuildAssetBucketFlag(t *testing.T) {
	dir := t.TempDir()
	writeAssetFiles(t, dir, map[string]string{
		"template.yaml": "Resources:\n  Fn:\n    Type: AWS::Serverless::Function\n    Properties:\n      CodeUri: src\n",
		"src/app.py":    "x = 1\n",
	})
	p, err := Load(filepath.Join(dir, "template.yaml"), BuildOptions{AssetBucket: "flag-bucket", AssetKeyPrefix: "p", Environment: "aws://123456789012/us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	var asset *assembly.Droplet
	for _, d := range p.Manifest.Droplets {
		if d.Type == droplets.FileType {
			asset = d
		}
	}
	if asset == nil || asset.Properties["bucketName"] != "flag-bucket" || !strings.HasPrefix(asset.Properties["objectKey"].(string), "p/") {
		t.Fatalf("file droplet %+v", asset)
	}
	if err := p.CheckOutput(filepath.Join(dir, "src", "out.cloud")); err == nil {
		t.Error("an output inside a zipped folder was accepted")
	}
	if _, err := Load(filepath.Join(dir, "template.yaml"), BuildOptions{AssetBucket: "Not_A_Bucket"}); err == nil || !strings.Contains(err.Error(), "BuildOptions.AssetBucket") {
		t.Errorf("a bad --asset-bucket: %v", err)
	}
}

// TestBuildRainS3: rain's !Rain::S3 and !Rain::S3Http ship through the
// same artifact Set: file droplets, the bucket parameter, one object per
// content.
func TestBuildRainS3(t *testing.T) {
	dir := t.TempDir()
	writeAssetFiles(t, dir, map[string]string{
		"template.yaml": "Resources:\n  Fn:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: !Rain::S3 {Path: src, BucketProperty: S3Bucket, KeyProperty: S3Key}\n  Plain:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: src\n  B:\n    Type: AWS::S3::Bucket\n    Properties:\n      Tags: [{Key: u, Value: !Rain::S3Http src/index.js}]\n",
		"src/index.js":  "x\n",
	})
	p, err := Load(filepath.Join(dir, "template.yaml"), BuildOptions{AssetBucket: "${Infra.output.B}", Environment: "aws://123456789012/us-east-1"})
	if err == nil || !strings.Contains(err.Error(), `names droplet "Infra"`) {
		t.Fatalf("a reference to no droplet: %v", err)
	}
	p, err = Load(filepath.Join(dir, "template.yaml"), BuildOptions{AssetBucket: "my-assets", Environment: "aws://123456789012/us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	var files int
	for _, d := range p.Manifest.Droplets {
		if d.Type == droplets.FileType {
			files++
		}
	}
	if files != 2 { // the folder's zip (twice named, once shipped) and index.js
		t.Errorf("%d file droplets, want 2", files)
	}
	var buf bytes.Buffer
	if _, err := p.WriteTo(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	zr, _ := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	rc, err := zr.Open("template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tmpl bytes.Buffer
	tmpl.ReadFrom(rc)
	if n := strings.Count(tmpl.String(), "S3Bucket: !Ref AssembleAssetBucket"); n != 2 || !strings.Contains(tmpl.String(), "- !Ref AssembleAssetBucket") {
		t.Errorf("packaged template:\n%s", tmpl.String())
	}
}

// TestSingleTemplateHint: a single template is built without assembly.yaml,
// so its project errors say to fix the template or the flag, not
// assembly.yaml (issue 28 item 8); a bucket that is not an S3 name is
// refused by the rule package applies (artifacts.ErrBucketName).
func TestSingleTemplateHint(t *testing.T) {
	dir := t.TempDir()
	writeAssetFiles(t, dir, map[string]string{
		"template.yaml": "Resources:\n  Fn:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: src\n",
		"src/index.js":  "x",
	})
	_, err := Load(filepath.Join(dir, "template.yaml"), BuildOptions{AssetBucket: "My_Bucket"})
	if !errors.Is(err, ErrProject) || !errors.Is(err, artifacts.ErrBucketName) {
		t.Fatalf("got %v, want ErrProject and artifacts.ErrBucketName", err)
	}
	if h := hint.Of(err); !strings.HasPrefix(h, "fix the template") {
		t.Errorf("hint %q", h)
	}
	writeAssetFiles(t, dir, map[string]string{"assembly.yaml": "environment: aws://123456789012/eu-west-1\ndroplets:\n  App:\n    type: stack\n    properties: {stackName: app, template: template.yaml}\n"})
	if _, err := Load(dir, BuildOptions{AssetBucket: "My_Bucket"}); hint.Of(err) != "" {
		t.Errorf("a project's error carries the single template's hint %q", hint.Of(err))
	}
}
