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
	list := "[" + strings.Repeat("x,", yamlpos.MaxNodes) + "x]"
	for _, src := range []string{
		"Resources:\n  A:\n    Type: T\n    Properties:\n      L: " + list + "\n",
		"{\"Resources\": {\"A\": {\"Type\": \"T\", \"Metadata\": " + strings.ReplaceAll(list, "x", "0") + "}}}",
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
	// Just under the limit, the same list is read.
	short := "[" + strings.Repeat("x,", yamlpos.MaxNodes-20) + "x]"
	if _, err := Parse("module.yaml", []byte("Resources:\n  A:\n    Type: T\n    Properties:\n      L: "+short+"\n")); err != nil {
		t.Errorf("under the limit: %v", err)
	}
}
