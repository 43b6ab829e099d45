package assemble_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportDirection enforces the layout's one-way imports:
// cmd -> packager, signing -> assembly -> droplets, and nothing imports cmd.
func TestImportDirection(t *testing.T) {
	const mod = "github.com/cloud-assembly/assemble/"
	forbidden := map[string][]string{
		"droplets": {"assembly", "packager", "signing", "trust", "deploy", "remote", "cmd"},
		"assembly": {"packager", "signing", "trust", "deploy", "remote", "cmd"},
		"signing":  {"packager", "trust", "deploy", "remote", "cmd"},
		"packager": {"signing", "trust", "deploy", "remote", "cmd"},
		"internal": {"droplets", "assembly", "packager", "signing", "trust", "deploy", "remote", "provenance", "cmd"},
		// trust opens what a name or location names (Open), and verifies it.
		"trust": {"packager", "deploy", "cmd"},
		// remote gives bytes (an io.ReaderAt and its size) and takes none
		// of the decisions about them.
		"remote": {"droplets", "assembly", "packager", "signing", "trust", "deploy", "provenance", "cmd"},
		// provenance makes and judges statements from what its callers
		// give it (names and SHA-256s, not archives): packager and trust
		// call it, it calls neither.
		"provenance": {"droplets", "assembly", "packager", "signing", "trust", "deploy", "remote", "cmd"},
		"deploy":     {"packager", "remote", "cmd"},
		// The seams every package shares are leaves: a code for each
		// failure, and the one digest type.
		"errcode": {"digest", "droplets", "assembly", "packager", "signing", "trust", "deploy", "remote", "internal", "provenance", "cmd"},
		"digest":  {"droplets", "assembly", "packager", "signing", "trust", "deploy", "remote", "internal", "provenance", "cmd"},
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

// TestNoExportedVariables: a library's exported package variables are its
// sentinel errors only (ErrX of type error, or made by a call such as
// errors.New, or &sentinel{...}); anything
// else a caller could change for every other caller, as rain's cft/pkg
// globals are changed by its CLI, its tests and the packager (issue #12:
// assembly.DefaultModTime, blueprint.DateTimeFormats and
// registry.DefaultLimits became functions). Make it a constant, a function
// or an option.
func TestNoExportedVariables(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}} {{.Name}} {{join .GoFiles \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	isError := func(vs *ast.ValueSpec, i int) bool {
		if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "error" {
			return true
		}
		if i >= len(vs.Values) {
			return false
		}
		switch v := vs.Values[i].(type) {
		case *ast.CallExpr: // errors.New(...), fmt.Errorf(...), verificationError(...)
			_, isSlice := v.Fun.(*ast.ArrayType)
			return strings.HasPrefix(vs.Names[i].Name, "Err") && !isSlice
		case *ast.UnaryExpr: // &sentinel{...}
			return strings.HasPrefix(vs.Names[i].Name, "Err") && v.Op == token.AND
		}
		return false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[1] == "main" {
			continue
		}
		for _, name := range f[2:] {
			path := filepath.Join(f[0], name)
			file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range file.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if n.IsExported() && !isError(vs, i) {
							t.Errorf("%s: exported package variable %s: make it a constant, a function or an option", path, n.Name)
						}
					}
				}
			}
		}
	}
}
