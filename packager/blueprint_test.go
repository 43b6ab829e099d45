package packager

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/packager/blueprint"
)

func writeProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "project")
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const blueprintProject = `environment: aws://123456789012/eu-west-1
droplets:
  Orders:
    type: blueprint
    properties:
      blueprint: bp/app.yaml
      variables:
        env: prod
        replicas: 3
`

const appBlueprint = `version: 2023-04-20
variables:
  env: {type: string}
  replicas: {type: integer}
resources:
  table:
    type: aws/dynamodb/table
    spec:
      name: orders-${variables.env}
      replicas: ${variables.replicas}
      arn: ${resources.fn.state.arn}
  fn:
    type: aws/lambda/function
    spec: {}
include:
  core:
    path: ${cwd()}/bp/infra/core.yaml
    variables: {env: '${variables.env}'}
`

const coreBlueprint = `version: 2023-04-20
variables:
  env: {type: string}
resources:
  topic: {type: aws/sns/topic, spec: {name: '${variables.env}-topic'}}
`

func TestBuildBlueprint(t *testing.T) {
	project := writeProject(t, map[string]string{
		"assembly.yaml":      blueprintProject,
		"bp/app.yaml":        appBlueprint,
		"bp/infra/core.yaml": coreBlueprint,
	})
	out := filepath.Join(t.TempDir(), "a.cloud")
	plan, err := Build(context.Background(), project, out, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := "bp/app.include/core.yaml bp/app.yaml manifest.json provenance.intoto.json"
	if got := strings.Join(plan.Files(), " "); got != want {
		t.Fatalf("files = %s, want %s", got, want)
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
	d := rep.Manifest.Droplets["Orders"]
	if d.Type != droplets.BlueprintType || d.Properties["blueprint"] != "bp/app.yaml" {
		t.Fatalf("droplet = %+v", d)
	}
	read := func(name string) string {
		f, err := rc.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		return string(b)
	}
	app := read("bp/app.yaml")
	for _, s := range []string{"name: orders-prod", "replicas: 3", "arn: ${resources.fn.state.arn}", "path: app.include/core.yaml", "env: prod"} {
		if !strings.Contains(app, s) {
			t.Errorf("packaged blueprint lacks %q:\n%s", s, app)
		}
	}
	if core := read("bp/app.include/core.yaml"); !strings.Contains(core, "prod-topic") {
		t.Errorf("child not packaged:\n%s", core)
	}
}

func TestBuildBlueprintInvalid(t *testing.T) {
	project := writeProject(t, map[string]string{
		"assembly.yaml": strings.Replace(blueprintProject, "      variables:\n        env: prod\n        replicas: 3\n", "", 1),
		"bp/app.yaml":   "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, spec: {a: '${variables.nope}'}}\n",
	})
	out := filepath.Join(t.TempDir(), "a.cloud")
	_, err := Build(context.Background(), project, out, BuildOptions{})
	if !errors.Is(err, blueprint.ErrReference) || !strings.Contains(err.Error(), "app.yaml:3:41: variables.nope is not defined") {
		t.Fatalf("got %v, want an unresolved reference with its place", err)
	}
	if _, statErr := os.Stat(out); !errors.Is(statErr, os.ErrNotExist) {
		t.Fatal("output written despite the error")
	}
}

func TestBuildBlueprintIncludeOutside(t *testing.T) {
	project := writeProject(t, map[string]string{
		"assembly.yaml": strings.Replace(blueprintProject, "      variables:\n        env: prod\n        replicas: 3\n", "", 1),
		"bp/app.yaml":   "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, spec: {}}\ninclude:\n  x: {path: ../../outside.yaml}\n",
	})
	os.WriteFile(filepath.Join(project, "..", "outside.yaml"), []byte("version: 2023-04-20\nresources: {r: {type: aws/sns/topic, spec: {}}}\n"), 0o644)
	_, err := Build(context.Background(), project, filepath.Join(t.TempDir(), "a.cloud"), BuildOptions{})
	if !errors.Is(err, blueprint.ErrInclude) || !strings.Contains(err.Error(), "lies outside the project folder") {
		t.Fatalf("got %v, want an include outside the project", err)
	}
}
