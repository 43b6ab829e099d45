package packager

import (
	"errors"
	"github.com/cloud-assembly/assemble/assembly"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/packager/schema"
)

func TestBuildSchemaCheck(t *testing.T) {
	cat, err := schema.LoadCatalog(filepath.Join("schema", "testdata", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "template.yaml")
	src := "Resources:\n  W:\n    Type: Demo::Shop::Widget\n    Properties:\n      Name: w\n      Count: lots\n"
	if err := os.WriteFile(tmpl, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(tmpl, BuildOptions{Schemas: cat, Environment: "aws://123456789012/eu-west-1"})
	var se *SchemaCheckError
	if !errors.Is(err, ErrSchemaCheck) || !errors.As(err, &se) || len(se.Findings) != 1 {
		t.Fatalf("got %v, want one ErrSchemaCheck finding", err)
	}
	if got := se.Findings[0].String(); got != `template.yaml:6:14: resource W: Count must be an integer, not the string "lots"` {
		t.Errorf("finding %q", got)
	}
	p, err := Load(tmpl, BuildOptions{Schemas: cat, SchemasWarn: true, Environment: "aws://123456789012/eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range p.Warnings {
		if w.Severity == assembly.Warning && strings.Contains(w.Message, "Count must be an integer") {
			found = true
		}
	}
	if !found {
		t.Errorf("warnings %v", p.Warnings)
	}
	// Without Schemas nothing is checked.
	if _, err := Load(tmpl, BuildOptions{Environment: "aws://123456789012/eu-west-1"}); err != nil {
		t.Fatal(err)
	}
}

// Issue 19 item 15: a stack template setting a read-only property fails
// the build with ErrSchemaCheck, naming the property and the place.
func TestBuildSchemaCheckReadOnly(t *testing.T) {
	cat, err := schema.LoadCatalog(filepath.Join("schema", "testdata", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "template.yaml")
	src := "Resources:\n  W:\n    Type: Demo::Shop::Widget\n    Properties:\n      Name: w\n      Arn: arn:aws:demo:::w\n"
	if err := os.WriteFile(tmpl, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(tmpl, BuildOptions{Schemas: cat, Environment: "aws://123456789012/eu-west-1"})
	var se *SchemaCheckError
	if !errors.Is(err, ErrSchemaCheck) || !errors.As(err, &se) || len(se.Findings) != 1 {
		t.Fatalf("got %v, want one ErrSchemaCheck finding", err)
	}
	if got := se.Findings[0].String(); !strings.HasPrefix(got, "template.yaml:6:7: resource W: Arn is a read-only property") || !strings.Contains(got, "cannot be specified by the customer") {
		t.Errorf("finding %q", got)
	}
}

// Issue 19 item 10: when the schemas' patterns use up the run's time for
// regular expressions the build fails with schema.ErrRegexBudget, even with
// SchemasWarn: the check could not be finished.
func TestBuildSchemaCheckRegexBudget(t *testing.T) {
	dir := t.TempDir()
	slow := `{"typeName": "Demo::Slow::Thing", "description": "d", "properties": {"Name": {"type": "string"}, "Labels": {"type": "object", "additionalProperties": false, "patternProperties": {"^(a+)+$": {"type": "string"}}}}, "primaryIdentifier": ["/properties/Name"], "additionalProperties": false}`
	if err := os.MkdirAll(filepath.Join(dir, "schemas"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "schemas", "slow.json"), []byte(slow), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := schema.LoadCatalog(filepath.Join(dir, "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	cat.SetRegexBudget(schema.NewRegexBudget(100 * time.Millisecond))
	tmpl := filepath.Join(dir, "template.yaml")
	src := "Resources:\n  T:\n    Type: Demo::Slow::Thing\n    Properties:\n      Name: t\n      Labels:\n        " + strings.Repeat("a", 40) + "!: x\n"
	if err := os.WriteFile(tmpl, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, warn := range []bool{false, true} {
		_, err = Load(tmpl, BuildOptions{Schemas: cat, SchemasWarn: warn, Environment: "aws://123456789012/eu-west-1"})
		if !errors.Is(err, schema.ErrRegexBudget) || !strings.Contains(err.Error(), "template.yaml:7:9") {
			t.Fatalf("SchemasWarn %v: got %v, want schema.ErrRegexBudget at template.yaml:7:9", warn, err)
		}
	}
}
