package assembly

import (
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

const targetsManifest = `{
  "schema": "cloud-assembly/1.0",
  "droplets": {
    "App": {
      "type": "npm://@aws-cdk/aws-cloudformation.StackDroplet",
      "environment": "aws://unknown-account/unknown-region",
      "properties": {"stackName": "app", "template": "app.yaml", "parameters": {"Stage": "${target.Stage}", "Lit": "\\${target.Stage}"}}
    },
    "Shared": {
      "type": "npm://@aws-cdk/aws-cloudformation.StackDroplet",
      "environment": "aws://333333333333/eu-west-1",
      "properties": {"stackName": "shared", "template": "shared.yaml"}
    }
  },
  "targets": {
    "dev": {"environments": ["aws://111111111111/eu-west-1"], "values": {"Stage": "dev"}},
    "prod": {"environments": ["aws://222222222222/eu-west-1", "aws://222222222222/us-east-1"], "values": {"Stage": "prod"}, "tags": {"cost-center": "42"}, "deployRole": "arn:aws:iam::${AWS::AccountId}:role/deployer-${AWS::Region}"}
  }
}`

func TestTargetsParseAndCheck(t *testing.T) {
	rep, err := Check([]byte(targetsManifest), manifestOnly([]byte(targetsManifest)), CheckOptions{Strict: true})
	if err != nil {
		t.Fatalf("a manifest with targets: %v", err)
	}
	m := rep.Manifest
	if got := m.TargetNames(); fmt.Sprint(got) != "[dev prod]" {
		t.Fatalf("targets %v", got)
	}
	if p := m.Targets["prod"]; len(p.Environments) != 2 || p.Tags["cost-center"] != "42" || p.Values["Stage"] != "prod" || !strings.Contains(p.DeployRole, "${AWS::AccountId}") {
		t.Fatalf("prod %+v", p)
	}
	// ${target.Stage} is no dependency edge.
	if deps := rep.Graph.Dependencies("App"); len(deps) != 0 {
		t.Fatalf("App depends on %v", deps)
	}
	// Marshal keeps the targets; the bytes parse back to the same.
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	m2, err := ParseManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := m2.Marshal()
	if string(b) != string(b2) || !strings.Contains(string(b), `"targets"`) {
		t.Fatalf("round trip:\n%s\n%s", b, b2)
	}
}

func TestTargetEnvironments(t *testing.T) {
	m, err := ParseManifest([]byte(targetsManifest))
	if err != nil {
		t.Fatal(err)
	}
	prod := m.Targets["prod"]
	if got := TargetEnvironments(m.Droplets["App"], prod); fmt.Sprint(got) != "[aws://222222222222/eu-west-1 aws://222222222222/us-east-1]" {
		t.Fatalf("App under prod: %v", got)
	}
	if got := TargetEnvironments(m.Droplets["Shared"], prod); fmt.Sprint(got) != "[aws://333333333333/eu-west-1]" {
		t.Fatalf("Shared keeps its own: %v", got)
	}
	if got := TargetEnvironments(m.Droplets["App"], nil); fmt.Sprint(got) != "[aws://unknown-account/unknown-region]" {
		t.Fatalf("no target: %v", got)
	}
	// Property: only the unknown parts are filled in, for any mix.
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		acct, region := "unknown-account", "unknown-region"
		if r.Intn(2) == 0 {
			acct = fmt.Sprintf("%012d", r.Intn(1e9))
		}
		if r.Intn(2) == 0 {
			region = []string{"eu-west-1", "us-east-2"}[r.Intn(2)]
		}
		d := &Droplet{Environment: "aws://" + acct + "/" + region}
		for j, got := range TargetEnvironments(d, prod) {
			env, _ := ParseEnvironment(got)
			want, _ := ParseEnvironment(prod.Environments[j])
			if env.Agnostic() || (acct != UnknownAccount && env.Account != acct) || (region != UnknownRegion && env.Region != region) ||
				(acct == UnknownAccount && env.Account != want.Account) || (region == UnknownRegion && env.Region != want.Region) {
				t.Fatalf("%s under prod: %s", d.Environment, got)
			}
		}
	}
}

func TestTargetRefusals(t *testing.T) {
	cases := []struct {
		name, from, to, want string
	}{
		{"value one target lacks", `"values": {"Stage": "dev"}`, `"values": {"Stag": "dev"}`, `target dev defines no value "Stage"`},
		{"agnostic target environment", `"aws://111111111111/eu-west-1"]`, `"aws://unknown-account/eu-west-1"]`, "a target names a real"},
		{"malformed environment", `"aws://111111111111/eu-west-1"]`, `"aws://1111/eu-west-1"]`, "is not 12 digits"},
		{"no environment", `"environments": ["aws://111111111111/eu-west-1"]`, `"environments": []`, "names no environment"},
		{"pair twice", `["aws://222222222222/eu-west-1", "aws://222222222222/us-east-1"]`, `["aws://222222222222/eu-west-1", "aws://222222222222/eu-west-1"]`, "appears twice"},
		{"bad name", `"dev": {`, `"de v": {`, "target name"},
		{"bad role", `"arn:aws:iam::${AWS::AccountId}:role/deployer-${AWS::Region}"`, `"deployer"`, "is not a role ARN"},
		{"droplet called target", `"Shared": {`, `"target": {`, `a droplet is called "target"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(targetsManifest, c.from) {
				t.Fatalf("fixture lacks %s", c.from)
			}
			doc := strings.Replace(targetsManifest, c.from, c.to, 1)
			_, err := Check([]byte(doc), manifestOnly([]byte(doc)), CheckOptions{})
			if !errors.Is(err, ErrTarget) || !errors.Is(err, ErrManifest) {
				t.Fatalf("want ErrTarget, got %v", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want %q in %v", c.want, err)
			}
		})
	}
	// Wrong JSON types are schema findings.
	for _, bad := range []string{`"environments": "aws://111111111111/eu-west-1"`, `"environments": [1]`} {
		doc := strings.Replace(targetsManifest, `"environments": ["aws://111111111111/eu-west-1"]`, bad, 1)
		if _, err := ParseManifest([]byte(doc)); !errors.Is(err, ErrSchema) {
			t.Fatalf("%s: want ErrSchema, got %v", bad, err)
		}
	}
	doc := strings.Replace(targetsManifest, `"values": {"Stage": "dev"}`, `"values": {"Stage": 1}`, 1)
	if _, err := ParseManifest([]byte(doc)); !errors.Is(err, ErrSchema) {
		t.Fatalf("a number value: want ErrSchema, got %v", err)
	}
}

// Without targets, ${target.X} is what it always was: a reference to a
// droplet called "target" (none here: the spec's error).
func TestTargetReferenceWithoutTargets(t *testing.T) {
	i := strings.Index(targetsManifest, `,
  "targets"`)
	doc := targetsManifest[:i] + "\n}"
	_, err := Check([]byte(doc), manifestOnly([]byte(doc)), CheckOptions{})
	if err == nil || errors.Is(err, ErrTarget) || !errors.Is(err, ErrReference) || !strings.Contains(err.Error(), `names droplet "target"`) {
		t.Fatalf("want the reference-droplet finding, got %v", err)
	}
}

func manifestOnly(b []byte) *FileSet {
	fs := NewFileSet()
	fs.Add(ManifestName, int64(len(b)))
	fs.Add("app.yaml", 10)
	fs.Add("shared.yaml", 10)
	return fs
}
