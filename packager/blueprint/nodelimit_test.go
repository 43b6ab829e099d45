package blueprint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/internal/yamlpos"
)

// A blueprint whose YAML would hold more than yamlpos.MaxNodes nodes is
// refused before yaml.v3 decodes it (a 4 MiB flow list cost 420 MiB
// before MaxNodes, counted after decoding, could refuse it).
func TestLoadRefusesTooManyNodesBeforeDecoding(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "blueprint.yaml")
	src := "version: " + Version + "\nmetadata:\n  l: [" + strings.Repeat("x,", yamlpos.MaxNodes) + "x]\nresources: {}\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(file, Options{})
	var e *Error
	if !errors.Is(err, ErrTooLarge) || !errors.As(err, &e) || e.Line != 3 || e.Column < 5 ||
		!strings.Contains(err.Error(), "more than 131072 YAML nodes") {
		t.Fatalf("got %v", err)
	}
}
