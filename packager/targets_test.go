package packager

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloud-assembly/assemble/assembly"
)

// A project's targets reach the manifest: droplets that name no
// environment take aws://unknown-account/unknown-region (each target's at
// deploy time), a droplet's own environment stays, a single environment
// becomes a list of one, and the manifest passes the docs' JSON Schema.
func TestBuildTargets(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("f.txt", "x\n")
	write("assembly.yaml", `targets:
  dev:
    environment: aws://111111111111/eu-west-1
    values: {Stage: dev}
  prod:
    environment: [aws://222222222222/eu-west-1, aws://222222222222/us-east-1]
    values: {Stage: prod}
    tags: {cost-center: "42"}
    deployRole: arn:aws:iam::${AWS::AccountId}:role/deployer
droplets:
  Conf:
    type: file
    properties: {file: f.txt, bucketName: b, objectKey: "conf/${target.Stage}.txt"}
  Fixed:
    type: file
    environment: aws://333333333333/eu-west-1
    properties: {file: f.txt, bucketName: shared, objectKey: k}
`)
	out := filepath.Join(t.TempDir(), "a.cloud")
	p, err := Build(context.Background(), dir, out, BuildOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	m := p.Manifest
	if got := m.Droplets["Conf"].Environment; got != "aws://unknown-account/unknown-region" {
		t.Fatalf("Conf environment %s", got)
	}
	if got := m.Droplets["Fixed"].Environment; got != "aws://333333333333/eu-west-1" {
		t.Fatalf("Fixed environment %s", got)
	}
	if d := m.Targets["dev"]; len(d.Environments) != 1 || d.Values["Stage"] != "dev" {
		t.Fatalf("dev %+v", d)
	}
	if p := m.Targets["prod"]; len(p.Environments) != 2 || p.Tags["cost-center"] != "42" || p.DeployRole == "" {
		t.Fatalf("prod %+v", p)
	}
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if err := compileDocSchema(t, "manifest.schema.json").Validate(doc); err != nil {
		t.Fatalf("the manifest does not pass docs/schema/manifest.schema.json: %v", err)
	}
	if _, err := assembly.ParseManifest(b); err != nil {
		t.Fatal(err)
	}
}
