package assemble_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportDirection enforces the layout's one-way imports:
// cmd -> packager, signing -> assembly -> droplets, and nothing imports cmd.
func TestImportDirection(t *testing.T) {
	const mod = "github.com/cloud-assembly/assemble/"
	forbidden := map[string][]string{
		"droplets": {"assembly", "packager", "signing", "cmd"},
		"assembly": {"packager", "signing", "cmd"},
		"signing":  {"packager", "cmd"},
		"packager": {"signing", "cmd"},
		"internal": {"droplets", "assembly", "packager", "signing", "cmd"},
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}: {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ": ")
		rel, ok := strings.CutPrefix(pkg, mod)
		if !ok {
			continue
		}
		top, _, _ := strings.Cut(rel, "/")
		for _, imp := range strings.Fields(imports) {
			irel, ok := strings.CutPrefix(imp, mod)
			if !ok {
				continue
			}
			itop, _, _ := strings.Cut(irel, "/")
			if itop == top {
				continue
			}
			for _, f := range forbidden[top] {
				if itop == f {
					t.Errorf("%s imports %s: imports must point one way (cmd -> packager, signing -> assembly -> droplets)", pkg, imp)
				}
			}
		}
	}
}
