package assembly

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/droplets"
)

func readSeed(t testing.TB) []byte {
	b, err := os.ReadFile("testdata/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseManifestExample(t *testing.T) {
	m, err := ParseManifest(readSeed(t))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := m.Validate(CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rep.Order, ","); got != "PipelineStack,DockerImage,StaticFiles,ServiceStack-beta" {
		t.Errorf("order = %s", got)
	}
	if w := rep.Warnings(); len(w) != 1 || w[0].String() != "droplet PipelineStack: metadata.note: pipeline is in preview [metadata]" || w[0].Severity != Note {
		t.Errorf("findings = %v", rep.Findings)
	}
	if got := strings.Join(rep.Graph.Dependencies("ServiceStack-beta"), ","); got != "DockerImage,PipelineStack,StaticFiles" {
		t.Errorf("deps = %s", got)
	}
	// Printing is deterministic and keeps ${...} tokens and escapes as given.
	out, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"prefix \\${literal} \\\\ ${StaticFiles.keyPrefix}"`)) {
		t.Errorf("escapes not kept:\n%s", out)
	}
	for i := 0; i < 5; i++ {
		again, _ := m.Marshal()
		if !bytes.Equal(out, again) {
			t.Fatal("Marshal is not deterministic")
		}
	}
}

func TestParseManifestRejects(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"not json", `{"schema": }`, "manifest.json:1:12: invalid character '}' looking for beginning of value"},
		{"bad literal", "{\n  \"schema\": tru}", "manifest.json:2:16: invalid character '}' in literal true"},
		{"duplicate top", `{"schema":"cloud-assembly/1.0","droplets":{},"schema":"x"}`, `manifest.json:1:46: duplicate key "schema"`},
		{"duplicate nested", "{\"schema\":\"cloud-assembly/1.0\",\"droplets\":{\"A\":{\"type\":\"x://y\",\"environment\":\"aws://123456789012/eu-west-1\",\n\"properties\":{\"a\":{\"k\":1,\"k\":2}}}}}", `manifest.json:2:26: duplicate key "k"`},
		{"schema", `{"schema":"cloud-assembly/2.0","droplets":{}}`, `schema: unsupported schema "cloud-assembly/2.0"`},
		{"no droplets", `{"schema":"cloud-assembly/1.0"}`, `missing required key "droplets"`},
		{"array", `[]`, `want an object, got an array`},
		{"trailing", `{"schema":"cloud-assembly/1.0","droplets":{}} {}`, `data after the top-level value`},
		{"type not string", `{"schema":"cloud-assembly/1.0","droplets":{"A":{"type":1,"environment":"x://y"}}}`, `droplet A: type: want a string, got a number [schema]`},
		{"dependsOn", `{"schema":"cloud-assembly/1.0","droplets":{"A":{"type":"x://y","environment":"x://y","dependsOn":[1]}}}`, `droplet A: dependsOn[0]: want a string`},
		{"metadata value", `{"schema":"cloud-assembly/1.0","droplets":{"A":{"type":"x://y","environment":"x://y","metadata":{"m":{"kind":"k"}}}}}`, `droplet A: metadata.m: missing required key "value"`},
		{"missing props", `{"schema":"cloud-assembly/1.0","droplets":{},"missing":{"k":{"provider":"p"}}}`, `missing.k: missing required key "props"`},
		{"bad utf8", "{\"schema\":\"\xff\"}", "not valid UTF-8"},
		{"deep", `{"schema":"cloud-assembly/1.0","droplets":{"A":{"type":"x://y","environment":"x://y","properties":{"a":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}}}}`, "nested deeper than"},
		{"truncated", `{"schema":"cloud-assembly/1.0","droplets":{`, "unexpected end of JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseManifest([]byte(tt.in))
			if !errors.Is(err, ErrManifest) || !(errors.Is(err, ErrSyntax) || errors.Is(err, ErrSchema)) {
				t.Fatalf("got %v, want ErrSyntax or ErrSchema", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func manifestWith(droplets string) string {
	return `{"schema":"cloud-assembly/1.0","droplets":{` + droplets + `}}`
}

const env = `"environment":"aws://123456789012/eu-west-1"`

func stack(id, extra string) string {
	return `"` + id + `":{"type":"npm://@aws-cdk/aws-cloudformation.StackDroplet",` + env + `,"properties":{"stackName":"s","template":"t.yaml"` + extra + `}}`
}

func TestValidateRejects(t *testing.T) {
	tests := []struct {
		name     string
		droplets string
		class    error
		want     string
	}{
		{"bad id", stack("a.b", ""), ErrLogicalID, `droplet a.b: logical ID "a.b" must match`},
		{"long id", stack(strings.Repeat("x", 257), ""), ErrLogicalID, "must match"},
		{"unknown ref", stack("A", `,"parameters":{"P":"${Netwrk.output.X}"}`) + "," + stack("Network", ""), ErrReference, `droplet A: properties.parameters.P: ${Netwrk.output.X} names droplet "Netwrk", which is not in this assembly (did you mean "Network"?)`},
		{"unknown attr", stack("A", `,"parameters":{"P":"${B.outputs.X}"}`) + "," + stack("B", ""), ErrReference, `${B.outputs.X}: unknown attribute "outputs.X": StackDroplet outputs output.<name>, stackArn`},
		{"lone backslash", stack("A", `,"parameters":{"P":"a\\b"}`), ErrReference, `droplet A: properties.parameters.P: at byte 1: lone backslash`},
		{"unterminated", stack("A", `,"parameters":{"P":"${A.x"}`), ErrReference, `unterminated "${"`},
		{"cycle", `"Network":{"type":"x://y",` + env + `,"dependsOn":["Service"]},"Service":{"type":"x://y",` + env + `,"properties":{"a":["${Network.id}"]}}`, ErrCycle, "dependency cycle Network -> Service -> Network"},
		{"self cycle", `"A":{"type":"x://y",` + env + `,"dependsOn":["A"]}`, ErrCycle, "dependency cycle A -> A"},
		{"unknown dependsOn", `"A":{"type":"x://y",` + env + `,"dependsOn":["B"]}`, ErrReference, `droplet A: dependsOn[0]: depends on "B"`},
		{"bad env", `"A":{"type":"x://y","environment":"aws://1234/eu-west-1"}`, ErrEnvironment, `droplet A: environment: bad environment "aws://1234/eu-west-1": account "1234" is not 12 digits`},
		{"empty env", `"A":{"type":"x://y","environment":""}`, ErrEnvironment, `droplet A: environment: missing environment`},
		{"bad type", `"A":{"type":"npm://pkg",` + env + `}`, ErrManifest, `droplet A: type: malformed type specifier "npm://pkg": no class name`},
		{"missing property", `"A":{"type":"npm://@aws-cdk/assets.FileDroplet",` + env + `,"properties":{"file":"f"}}`, droplets.ErrProperty, `droplet A: properties.bucketName: invalid property: FileDroplet needs "bucketName" [property-missing]`},
		{"unknown property", `"A":{"type":"npm://@aws-cdk/assets.DirectoryDroplet",` + env + `,"properties":{"directory":"d","bucketName":"b","keyprefix":"k"}}`, droplets.ErrUnknownProperty, `droplet A: properties.keyprefix: unknown property "keyprefix": DirectoryDroplet documents directory, bucketName, keyPrefix, objectKey, executables (did you mean "keyPrefix"?) [unknown-property]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(manifestWith(tt.droplets)))
			if err != nil {
				t.Fatal(err)
			}
			// Property tables are warnings when reading, errors when writing.
			_, err = m.Validate(CheckOptions{Writing: true})
			if !errors.Is(err, tt.class) || !errors.Is(err, ErrManifest) {
				t.Fatalf("got %v, want class %v", err, tt.class)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestValidateWarnings(t *testing.T) {
	m, err := ParseManifest([]byte(manifestWith(
		`"A":{"type":"pypi://x/Y","environment":"gcp://project/zone"},` +
			`"B":{"type":"npm://@acme/things.Widget",` + env + `,"properties":{"x":"${A.anything}"},"metadata":{"e":{"kind":"error","value":"broken"}}}`)))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := m.Validate(CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range rep.Warnings() {
		got = append(got, d.String())
	}
	want := []string{
		`droplet A: environment: unknown protocol "gcp" in environment gcp://project/zone [unknown-protocol]`,
		`droplet A: type: unknown protocol "pypi": the droplet's kind is not checked [unknown-protocol]`,
		`droplet B: metadata.e: error: broken [metadata]`,
		`droplet B: type: unknown droplet kind npm://@acme/things.Widget: its properties and attributes are not checked [unknown-kind]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestOrderTiesByID(t *testing.T) {
	g := &Graph{IDs: []string{"a", "b", "c", "d", "e"}, deps: map[string][]Edge{}}
	g.add(Edge{From: "a", To: "e"})
	g.add(Edge{From: "c", To: "b"})
	g.add(Edge{From: "b", To: "d"})
	order, err := g.Order()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, ","); got != "d,b,c,e,a" {
		t.Errorf("order = %s", got)
	}
}

func TestParseEnvironment(t *testing.T) {
	good := map[string]Environment{
		"aws://123456789012/eu-west-1":          {Protocol: "aws", Path: "123456789012/eu-west-1", Account: "123456789012", Region: "eu-west-1"},
		"aws://000000000000/bermuda-triangle-1": {Protocol: "aws", Path: "000000000000/bermuda-triangle-1", Account: "000000000000", Region: "bermuda-triangle-1"},
		"aws://unknown-account/unknown-region":  {Protocol: "aws", Path: "unknown-account/unknown-region", Account: UnknownAccount, Region: UnknownRegion},
		"gcp://my-project/europe-west1":         {Protocol: "gcp", Path: "my-project/europe-west1"},
	}
	for _, in := range slices.Sorted(maps.Keys(good)) {
		got, err := ParseEnvironment(in)
		if err != nil || got != good[in] {
			t.Errorf("%s: got %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "aws", "aws://", "aws://123456789012", "aws://123456789012/", "aws://12345678901/eu-west-1", "aws://123456789012/EU-WEST-1", "aws://123456789012/eu-west-1/x", "AWS://123456789012/eu-west-1", "aws://123456789012/eu west-1"} {
		if _, err := ParseEnvironment(in); !errors.Is(err, ErrEnvironment) {
			t.Errorf("%q: got %v, want ErrEnvironment", in, err)
		}
	}
}

func TestParseString(t *testing.T) {
	tests := []struct {
		in   string
		want []Part
	}{
		{"", nil},
		{"plain", []Part{{Literal: "plain"}}},
		{"${A.b}", []Part{{Ref: &Reference{"A", "b"}}}},
		{"x${A/b+c_d-e.output.Name}y", []Part{{Literal: "x"}, {Ref: &Reference{"A/b+c_d-e", "output.Name"}}, {Literal: "y"}}},
		{`\${A.b}`, []Part{{Literal: "${A.b}"}}},
		{`a\\b`, []Part{{Literal: `a\b`}}},
		{`\\${A.b}`, []Part{{Literal: `\`}, {Ref: &Reference{"A", "b"}}}},
		{"$$ { } $", []Part{{Literal: "$$ { } $"}}},
	}
	for _, tt := range tests {
		got, err := ParseString(tt.in)
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		if FormatString(got) != tt.in {
			t.Errorf("%q: FormatString = %q", tt.in, FormatString(got))
		}
		if len(got) != len(tt.want) {
			t.Errorf("%q: got %v", tt.in, got)
			continue
		}
		for i := range got {
			if got[i].Literal != tt.want[i].Literal || (got[i].Ref == nil) != (tt.want[i].Ref == nil) || (got[i].Ref != nil && *got[i].Ref != *tt.want[i].Ref) {
				t.Errorf("%q: part %d = %+v", tt.in, i, got[i])
			}
		}
	}
	bad := map[string]string{
		`a\b`:         "at byte 1: lone backslash",
		`\`:           "at byte 0: lone backslash",
		`\$x`:         "at byte 0: lone backslash",
		`${A.b`:       `unterminated`,
		`${A}`:        `needs the form ${LogicalId.attribute}`,
		`${A.}`:       `needs the form`,
		`${.b}`:       `"" is not a valid logical ID`,
		`${A b.c}`:    `"A b" is not a valid logical ID`,
		`${A.b c}`:    `"b c" is not a valid attribute name`,
		`${A.b..c}`:   `not a valid attribute name`,
		`ok ${A.b} \`: "at byte 10: lone backslash",
	}
	for _, in := range slices.Sorted(maps.Keys(bad)) {
		_, err := ParseString(in)
		if !errors.Is(err, ErrReference) || !strings.Contains(err.Error(), bad[in]) {
			t.Errorf("%q: got %v, want %q", in, err, bad[in])
		}
	}
}

func TestReaderCheckManifest(t *testing.T) {
	b := zipOf(t, "stacks/a.yaml")
	r, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Check(CheckOptions{}); !errors.Is(err, ErrNoManifest) || err.Error() != "no manifest.json in the archive [manifest-missing]" {
		t.Fatalf("got %v", err)
	}
	b = zipOf(t, "manifest.json") // content "content of manifest.json": not JSON
	r, _ = NewReader(bytes.NewReader(b), int64(len(b)))
	if _, err := r.Check(CheckOptions{}); !errors.Is(err, ErrSyntax) || !strings.HasPrefix(err.Error(), "manifest.json:1:1:") {
		t.Fatalf("got %v", err)
	}
}
