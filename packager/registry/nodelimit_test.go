package registry

import (
	"errors"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/internal/yamlpos"
)

// A module fragment whose YAML would hold more than yamlpos.MaxNodes nodes
// is refused before yaml.v3 (or encoding/json) decodes it.
func TestParseFragmentRefusesTooManyNodes(t *testing.T) {
	list := "[" + strings.Repeat("0,", yamlpos.MaxNodes) + "0]"
	for _, src := range []string{
		"Resources:\n  A:\n    Type: T\n    Metadata: " + list + "\n",
		`{"Resources": {"A": {"Type": "T", "Metadata": ` + list + `}}}`,
	} {
		_, err := ParseFragment("fragment.yaml", []byte(src))
		var ve *ValidationError
		if !errors.Is(err, ErrInvalidFragment) || !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Line < 1 ||
			!strings.Contains(ve.Problems[0].Message, "more than 131072 YAML nodes") {
			t.Errorf("got %v", err)
		}
	}
}
