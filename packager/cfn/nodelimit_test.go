package cfn

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/internal/yamlpos"
)

// A template or module whose YAML would hold more than yamlpos.MaxNodes
// nodes is refused before yaml.v3 decodes it (a 2.8 MB flow list of x
// cost 338 MiB), with the place the count passes the limit.
func TestParseRefusesTooManyNodes(t *testing.T) {
	// The document, its mapping, Resources, its mapping, A, its mapping,
	// Type, T, Properties, its mapping, L and the list: 12 nodes and the
	// items.
	items := func(n int) string { return "[" + strings.Repeat("x,", n-1) + "x]" }
	head := "Resources:\n  A:\n    Type: T\n    Properties:\n      L: "
	list := items(yamlpos.MaxNodes - 11)
	for _, src := range []string{
		head + list + "\n",
		// 10 nodes and the items
		"{\"Resources\": {\"A\": {\"Type\": \"T\", \"Metadata\": " + strings.ReplaceAll(items(yamlpos.MaxNodes-9), "x", "0") + "}}}",
	} {
		_, err := Parse("module.yaml", []byte(src))
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("got %v, want ErrTooLarge", err)
		}
		var e *Error
		if !errors.As(err, &e) || e.Line < 1 || e.Col < 2 ||
			!strings.HasPrefix(err.Error(), fmt.Sprintf("module.yaml:%d:%d: more than %d YAML nodes", e.Line, e.Col, yamlpos.MaxNodes)) ||
			!strings.Contains(err.Error(), "split the file") {
			t.Errorf("message %q", err)
		}
	}
	// At the limit, one item shorter, the list is read.
	if _, err := Parse("module.yaml", []byte(head+items(yamlpos.MaxNodes-12)+"\n")); err != nil {
		t.Errorf("at the limit: %v", err)
	}
}
