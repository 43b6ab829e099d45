package packager

import (
	"errors"
	"github.com/cloud-assembly/assemble/assembly"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
