package packager

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/internal/yamlpos"
)

// assembly.yaml (and every project file read with readYAML) is refused
// before yaml.v3 decodes it when it would hold more than yamlpos.MaxNodes
// nodes.
func TestProjectFilesRefuseTooManyNodes(t *testing.T) {
	list := "[" + strings.Repeat("x,", yamlpos.MaxNodes) + "x]"
	want := func(t *testing.T, err error, file string) {
		t.Helper()
		var pe *ProjectError
		if !errors.Is(err, ErrProject) || !errors.As(err, &pe) || pe.Line != 2 ||
			!strings.HasPrefix(err.Error(), fmt.Sprintf("%s:2:%d: ", file, pe.Column)) ||
			!strings.Contains(err.Error(), fmt.Sprintf("more than %d YAML nodes", yamlpos.MaxNodes)) {
			t.Errorf("got %v", err)
		}
	}
	file := filepath.Join(t.TempDir(), "assembly.yaml")
	if err := os.WriteFile(file, []byte("version: 1\ntags: "+list+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := readYAML(file)
	want(t, err, file)
	if err := nodeLimit("stack.yaml", []byte("Parameters: {}\nOutputs: "+list+"\n")); err == nil {
		t.Error("nodeLimit accepted a template over the limit")
	} else {
		want(t, err, "stack.yaml")
	}
}
