package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/internal/yamlpos"
)

// A --policy file whose YAML would hold more than yamlpos.MaxNodes nodes
// is refused before yaml.v3 decodes it, at the place the count passes.
func TestReadPolicyRefusesTooManyNodes(t *testing.T) {
	file := filepath.Join(t.TempDir(), "policy.yaml")
	body := "keyrings: [k]\nalgorithms: [" + strings.Repeat("SHA256,", yamlpos.MaxNodes) + "SHA256]\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadPolicy(file)
	var pe *PolicyError
	if !errors.As(err, &pe) || pe.Line != 2 || pe.Column < 14 || !strings.Contains(pe.Msg, "more than 131072 YAML nodes") {
		t.Fatalf("got %v", err)
	}
}
