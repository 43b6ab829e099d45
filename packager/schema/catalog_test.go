package schema

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/internal/testenv/scaling"
)

func loadTestCatalog(t *testing.T) *Catalog {
	t.Helper()
	c, err := LoadCatalog(filepath.Join("testdata", "catalog"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Types(); !reflect.DeepEqual(got, []string{"Demo::Shop::Widget"}) {
		t.Fatalf("types %v", got)
	}
	return c
}

func checkFile(t *testing.T, c *Catalog, name string) []string {
	t.Helper()
	p := filepath.Join("testdata", "templates", name)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	found, err := c.CheckTemplate(name, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		out = append(out, f.String())
	}
	return out
}

func TestCheckTemplateGood(t *testing.T) {
	if got := checkFile(t, loadTestCatalog(t), "good.yaml"); len(got) != 0 {
		t.Fatalf("findings in a correct template: %q", got)
	}
}

func TestCheckTemplateBad(t *testing.T) {
	got := checkFile(t, loadTestCatalog(t), "bad.yaml")
	want := []string{
		"bad.yaml:5:7: resource Widget: unknown property Nmae for Demo::Shop::Widget; check the name against its schema",
		"bad.yaml:6:14: resource Widget: Count must be an integer, not the string \"three\"",
		"bad.yaml:7:16: resource Widget: Enabled must be a boolean, not the string \"maybe\"",
		"bad.yaml:9:9: resource Widget: Size is missing required property Width",
		"bad.yaml:11:11: resource Widget: Tags[0] is missing required property Value",
		"bad.yaml:12:11: resource Widget: Tags[1] is missing required property Key",
		"bad.yaml:14:9: resource Widget: unknown property Labels.Colour for Demo::Shop::Widget; check the name against its schema",
		"bad.yaml:5:7: resource Widget: Properties is missing required property Name",
		"bad.yaml:15:3: resource NoProps: Demo::Shop::Widget requires property Name; add a Properties section",
		"bad.yaml:18:11: resource Unknown: unknown resource type Demo::Shop::Gadget: no schema for it in testdata/catalog",
		"bad.yaml:22:13: resource WrongShape: Name must be a string, not a list",
		"bad.yaml:23:13: resource WrongShape: Size must be an object, not a number",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("findings:\n%s", join2(got))
	}
}

func join2(ss []string) string {
	out := ""
	for _, s := range ss {
		out += s + "\n"
	}
	return out
}

func TestCheckTemplateUnparsable(t *testing.T) {
	f, err := loadTestCatalog(t).CheckTemplate("x.yaml", []byte("Resources: [\n"))
	if err != nil || len(f) != 1 || f[0].Line != 1 {
		t.Fatalf("%v", f)
	}
}

func TestLoadCatalogErrors(t *testing.T) {
	if _, err := LoadCatalog(filepath.Join("testdata", "nope")); !errors.Is(err, ErrCatalog) {
		t.Errorf("missing dir: %v", err)
	}
	dir := t.TempDir()
	for _, n := range []string{"a.json", "b.json"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(`{"typeName": "A::B::C"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadCatalog(dir); !errors.Is(err, ErrCatalog) {
		t.Errorf("duplicate type: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCatalog(dir); !errors.Is(err, ErrCatalog) {
		t.Errorf("bad JSON: %v", err)
	}
}

// TestCheckTemplateAliasBomb: alias expansion through a recursive schema
// is bounded.
func TestCheckTemplateAliasBomb(t *testing.T) {
	dir := t.TempDir()
	tree := `{"typeName": "Demo::Tree::Node", "description": "recursive",
	  "definitions": {"Node": {"type": "object", "additionalProperties": false,
	    "properties": {"Children": {"type": "array", "items": {"$ref": "#/definitions/Node"}}}}},
	  "properties": {"Root": {"$ref": "#/definitions/Node"}},
	  "primaryIdentifier": ["/properties/Root"], "additionalProperties": false}`
	if err := os.WriteFile(filepath.Join(dir, "tree.json"), []byte(tree), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	bomb := func(depth int) {
		src := "x0: &a0 {Children: []}\n"
		for i := 1; i <= depth; i++ {
			src += fmt.Sprintf("x%d: &a%d {Children: [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]}\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
		}
		src += fmt.Sprintf("Resources:\n  T:\n    Type: Demo::Tree::Node\n    Properties:\n      Root: *a%d\n", depth)
		got, err := c.CheckTemplate("bomb.yaml", []byte(src))
		if err != nil || len(got) != 1 || !strings.Contains(got[0].Message, "expand beyond 1000000 nodes") {
			t.Fatalf("depth %d: findings %v", depth, got)
		}
	}
	// Depth 8 would expand to ten times the nodes of depth 7: bounded,
	// it takes no longer.
	scaling.AtMost(t, "an alias bomb of depth 7, then 8", 2, func() { bomb(7) }, func() { bomb(8) })
}

// TestCheckPackaged: findings are placed in the sources.
func TestCheckPackaged(t *testing.T) {
	c := loadTestCatalog(t)
	source := []byte("Resources:\n  # note\n  A:\n    Type: Demo::Shop::Widget\n    Properties: {Name: a, Count: x}\n  B:\n    Type: Demo::Shop::Widget\n    Properties:\n      Fn::Merge: [{Name: b}, {Count: y}]\n")
	packaged := []byte("Resources:\n  A:\n    Type: Demo::Shop::Widget\n    Properties:\n      Name: a\n      Count: x\n  B:\n    Type: Demo::Shop::Widget\n    Properties:\n      Name: b\n      Count: y\n  ModPart:\n    Type: Demo::Shop::Widget\n    Metadata:\n      SourceMap: ./modules/m.yaml:Part:7\n    Properties:\n      Size: 3\n      Name: p\n  Other:\n    Type: Demo::Shop::Gadget\n")
	var got []string
	found, err := c.CheckPackaged("t.yaml", source, packaged)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		got = append(got, f.String())
	}
	want := []string{
		`t.yaml:5:34: resource A: Count must be an integer, not the string "x"`,
		`t.yaml:6:3: resource B: Count must be an integer, not the string "y" (after packaging)`,
		`modules/m.yaml:7: resource ModPart: Size must be an object, not a number`,
		`t.yaml:20:11: resource Other: unknown resource type Demo::Shop::Gadget: no schema for it in testdata/catalog (line in the packaged template)`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got:\n%s", join2(got))
	}
	// Unchanged bytes: the template's own findings.
	if f, err := c.CheckPackaged("t.yaml", packaged, packaged); err != nil || len(f) != 4 || f[0].Line != 6 {
		t.Errorf("unchanged: %v", f)
	}
}

// Issue 19 item 15: a template setting a property the schema lists in
// readOnlyProperties is refused, at the top and nested ("cannot be
// specified by the customer").
func TestCheckTemplateReadOnly(t *testing.T) {
	got := checkFile(t, loadTestCatalog(t), "readonly.yaml")
	want := []string{
		"readonly.yaml:6:7: resource Widget: Arn is a read-only property of Demo::Shop::Widget (readOnlyProperties): it cannot be specified by the customer; remove it",
		"readonly.yaml:8:9: resource Widget: Info.Id is a read-only property of Demo::Shop::Widget (readOnlyProperties): it cannot be specified by the customer; remove it",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("findings:\n%s", join2(got))
	}
}
