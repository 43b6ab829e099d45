package droplets

import (
	"flag"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/internal/readmetest"
)

var update = flag.Bool("update", false, "rewrite the README's tables of droplet types")

// Every kind, property and attribute says what it is: the README's tables
// are made of these sentences.
func TestKindsDocumented(t *testing.T) {
	for _, k := range Kinds() {
		if k.Doc == "" {
			t.Errorf("%s: no Doc", k.Type)
		}
		for _, p := range k.Properties {
			if p.Doc == "" {
				t.Errorf("%s: property %s: no Doc", k.Type, p.Name)
			}
		}
		documented := map[string]bool{}
		for _, a := range append(append([]string{}, k.Attributes...), k.AttributePrefixes...) {
			documented[a] = true
			if k.AttributeDocs[a] == "" {
				t.Errorf("%s: attribute %s: no AttributeDocs entry", k.Type, a)
			}
		}
		for a := range k.AttributeDocs {
			if !documented[a] {
				t.Errorf("%s: AttributeDocs documents %s, which is no attribute", k.Type, a)
			}
		}
	}
}

// The README's tables of droplet types are the registry (go test
// ./droplets -update rewrites them).
func TestReadmeDropletTables(t *testing.T) {
	readmetest.Section(t, filepath.Join("..", "README.md"),
		"<!-- droplets:begin (generated from the droplets registry: go test ./droplets -update) -->\n", "<!-- droplets:end -->",
		kindTables(), *update, "go test ./droplets -update")
}

// kindTables renders every kind as a heading, its sentence and one table
// of its properties and attributes.
func kindTables() string {
	var b strings.Builder
	for _, k := range Kinds() {
		fmt.Fprintf(&b, "#### `%s`: `%s`\n\n%s\n\n", k.Alias, k.Type, k.Doc)
		b.WriteString("| | name | type | required | what it is |\n| --- | --- | --- | --- | --- |\n")
		for _, p := range k.Properties {
			required := "no"
			if p.Required {
				required = "yes"
			}
			fmt.Fprintf(&b, "| property | `%s` | %s | %s | %s |\n", p.Name, propertyType(p), required, p.Doc)
		}
		var attrs []string
		for _, pre := range k.AttributePrefixes {
			attrs = append(attrs, pre)
		}
		sort.Strings(attrs)
		plain := append([]string{}, k.Attributes...)
		sort.Strings(plain)
		for _, a := range append(attrs, plain...) {
			name := a
			if strings.HasSuffix(a, ".") {
				name = a + "<name>"
			}
			fmt.Fprintf(&b, "| attribute | `%s` | string | | %s |\n", name, k.AttributeDocs[a])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// propertyType is a property's type for the tables.
func propertyType(p Property) string {
	t := p.Type
	switch t {
	case "":
		t = "any"
	case "map":
		t = "map of strings"
	case "list":
		t = "list of strings"
	}
	switch p.Path {
	case PathFile:
		t += ", a file in the assembly"
	case PathDirectory:
		t += ", a folder in the assembly"
	}
	return t
}
