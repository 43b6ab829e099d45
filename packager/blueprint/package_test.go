package blueprint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePackaged writes a Packaged to a fresh folder and returns the main
// file's path there.
func writePackaged(t *testing.T, p *Packaged) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range p.Names {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, p.Files[name], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, p.Main)
}

func TestPackage(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"app.yaml": `version: 2023-04-20
variables:
  env:
    type: string
    default: dev
  replicas:
    type: integer
  password:
    type: string
    secret: true
    default: hunter2
  region:
    type: string
values:
  name:
    type: string
    value: orders-${variables.env}
  regions:
    type: array
    value: ${split("eu-west-1,eu-west-2", ",")}
  upper:
    type: string
    value: ${to_upper(values.name)}
  token:
    type: string
    secret: true
    value: tok-${variables.env}
resources:
  table:
    type: aws/dynamodb/table
    condition: ${eq(variables.env, "prod")}
    spec:
      # a comment survives
      tableName: ${values.name}
      replicas: ${variables.replicas}
      regions: ${values.regions}
      first: ${values.regions[0]}
      secret: ${variables.password}
      region: ${variables.region}
      mixed: ${variables.env}-${resources.fn.state.arn}
      partial: ${eq(variables.env, resources.fn.spec.env)}
      when: ${datetime("tag")}
      n: ${len(values.regions)}
      obj: ${object(a = 1, b = "x")}
      token: ${values.token}
  fn:
    type: aws/lambda/function
    spec:
      env: ${variables.env}
include:
  core:
    path: ${cwd()}/infra/core.yaml
    variables:
      env: ${variables.env}
  remote:
    path: remote.yaml
    metadata:
      sourceType: aws/s3
`,
		"infra/core.yaml": `version: 2023-04-20
variables:
  env:
    type: string
resources:
  topic:
    type: aws/sns/topic
    spec:
      name: ${variables.env}-topic
`,
	})
	p, err := Package(filepath.Join(dir, "app.yaml"), Options{Cwd: dir, Variables: map[string]any{"replicas": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"app.yaml", "app.include/core.yaml"}; strings.Join(p.Names, ",") != strings.Join(want, ",") {
		t.Fatalf("names = %v, want %v", p.Names, want)
	}
	main := string(p.Files["app.yaml"])
	for _, want := range []string{
		`version: "2023-04-20"`,
		"value: orders-dev",
		"value: ORDERS-DEV",
		`condition: ${false}`,
		"# a comment survives",
		"tableName: orders-dev",
		"replicas: 3",
		"- eu-west-1\n        - eu-west-2",
		"first: eu-west-1",
		"secret: ${variables.password}",
		"region: ${variables.region}",
		"mixed: dev-${resources.fn.state.arn}",
		`partial: ${eq("dev", resources.fn.spec.env)}`,
		`when: ${datetime("tag")}`,
		"n: 2",
		"a: 1\n        b: x",
		"path: app.include/core.yaml",
		"path: remote.yaml",
		"default: 3",
		"env: dev\n",
		"token: ${values.token}",
	} {
		if !strings.Contains(main, want) {
			t.Errorf("packaged blueprint lacks %q:\n%s", want, main)
		}
	}
	if child := string(p.Files["app.include/core.yaml"]); !strings.Contains(child, "name: dev-topic") {
		t.Errorf("child not evaluated with the passed variable:\n%s", child)
	}
	// The packaged blueprint validates again, with its children, and its
	// second packaging changes nothing.
	out := writePackaged(t, p)
	if _, err := Load(out, Options{Cwd: filepath.Dir(out)}); err != nil {
		t.Fatalf("packaged blueprint does not validate:\n%v", err)
	}
	again, err := Package(out, Options{Cwd: filepath.Dir(out)})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range p.Names {
		if string(again.Files[name]) != string(p.Files[name]) {
			t.Errorf("%s changed on repackaging:\n%s\n---\n%s", name, p.Files[name], again.Files[name])
		}
	}
}

func TestPackageJSON(t *testing.T) {
	dir := writeFiles(t, map[string]string{"bp.json": `{"version": "2023-04-20", "variables": {"n": {"type": "integer", "default": 2}},
 "resources": {"r": {"type": "aws/sns/topic", "spec": {"z": "${variables.n}", "a": "x-${variables.n}"}}}}`})
	p, err := Package(filepath.Join(dir, "bp.json"), Options{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	got := string(p.Files["bp.json"])
	if !strings.Contains(got, `"z": 2,`) || !strings.Contains(got, `"a": "x-2"`) || strings.Index(got, `"variables"`) > strings.Index(got, `"resources"`) {
		t.Fatalf("unexpected JSON:\n%s", got)
	}
}

// Issue 15: a call on literal arguments that fails is reported by
// validation, at its place, and packaging fails with the same error.
func TestValidateCallError(t *testing.T) {
	dir := writeFiles(t, map[string]string{"bp.yaml": "version: 2023-04-20\nresources:\n  r: {type: aws/sns/topic, spec: {a: '${substr(\"abc\", 2, 9)}'}}\n"})
	path := filepath.Join(dir, "bp.yaml")
	_, err := Load(path, Options{Cwd: dir})
	wantOneError(t, err, ErrFunction, 3, "substr(): end 9 is out of range for a string of 3 characters")
	if !strings.Contains(err.Error(), "bp.yaml:3:41: ") {
		t.Fatalf("got %v, want the place of the call (3:41)", err)
	}
	if _, perr := Package(path, Options{Cwd: dir}); perr == nil || perr.Error() != err.Error() {
		t.Fatalf("Package: %v, want the error Load gave", perr)
	}
}

// Every valid corpus blueprint packages, and the packaged form validates.
func TestPackageCorpus(t *testing.T) {
	for _, tc := range readIndex(t) {
		if tc.validity != "valid" && tc.validity != "valid (alone)" {
			continue
		}
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(corpusDir, filepath.FromSlash(tc.file))
			p, err := Package(path, Options{Cwd: cwdFor(path)})
			if err != nil {
				t.Fatal(err)
			}
			out := writePackaged(t, p)
			if _, err := Load(out, Options{Cwd: filepath.Dir(out)}); err != nil {
				t.Fatalf("packaged form does not validate:\n%v\n%s", err, p.Files[p.Main])
			}
		})
	}
}

// QA: a literal (substitution-free) include path is rewritten to the copy
// too, and an include name can not place its copy outside the parent's
// .include folder.
func TestPackageIncludePaths(t *testing.T) {
	child := "version: 2023-04-20\nresources:\n  topic:\n    type: aws/sns/topic\n    spec: {}\n"
	dir := writeFiles(t, map[string]string{
		"app.yaml": `version: 2023-04-20
resources:
  table:
    type: aws/dynamodb/table
    spec: {}
include:
  core:
    path: infra/core.yaml
  "../../evil":
    path: infra/other.yaml
`,
		"infra/core.yaml":  child,
		"infra/other.yaml": child,
	})
	p, err := Package(filepath.Join(dir, "app.yaml"), Options{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"app.yaml", "app.include/..%2F..%2Fevil.yaml", "app.include/core.yaml"}
	if strings.Join(p.Names, ",") != strings.Join(want, ",") {
		t.Fatalf("names = %v, want %v", p.Names, want)
	}
	main := string(p.Files["app.yaml"])
	for _, s := range []string{"path: app.include/core.yaml", "path: app.include/..%2F..%2Fevil.yaml"} {
		if !strings.Contains(main, s) {
			t.Errorf("packaged blueprint lacks %q:\n%s", s, main)
		}
	}
	// The packaged files stand alone: the include paths name the copies.
	out := writePackaged(t, p)
	if _, err := Load(out, Options{Cwd: filepath.Dir(out)}); err != nil {
		t.Fatalf("packaged blueprint does not load from its copies:\n%v", err)
	}
}

func TestIncludeFileName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"core", "core"},
		{"a b", "a b"},
		{"a/b", "a%2Fb"},
		{`x\y`, "x%5Cy"},
		{"50%", "50%25"},
		{"..", "%2E%2E"},
		{".", "%2E"},
		{"a\nb", "a%0Ab"},
	} {
		if got := includeFileName(tc.in); got != tc.want {
			t.Errorf("includeFileName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
