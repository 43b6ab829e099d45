package main

import (
	"github.com/cloud-assembly/assemble/errcode"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// goPackages lists the names of the module's Go packages (the folders
// holding Go files), main and cmd excepted.
func goPackages(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(filepath.Join("..", ".."), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "cmd" || d.Name() == "fixtures") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			seen[filepath.Base(filepath.Dir(p))] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	delete(seen, "..")
	var out []string
	for name := range seen {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// pkgPrefix matches a message that starts with a Go package's name, or
// holds one after ": " (a wrapped message).
func pkgPrefix(pkgs []string) *regexp.Regexp {
	return regexp.MustCompile(`(^|: )(` + strings.Join(pkgs, "|") + `): `)
}

// Issue 23, item 5: messages speak of files, droplets and keys, not of Go
// packages ("packager: invalid project", "signing: unknown signer"). Every
// sentinel of the error code table, and every error message a library
// writes (errors.New, fmt.Errorf and the sentinels' constructors), starts
// with something else; a package added by a later merge is covered too.
func TestNoPackageNamesInMessages(t *testing.T) {
	pkgs := goPackages(t)
	re := pkgPrefix(pkgs)
	for _, e := range errcode.All() {
		if re.MatchString(e.Error()) {
			t.Errorf("code %s: message %q starts with a package name", e.Code(), e.Error())
		}
	}
	fset := token.NewFileSet()
	filepath.WalkDir(filepath.Join("..", ".."), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "fixtures" || d.Name() == "bench") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Error(err)
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && re.MatchString(s) && isMessage(f, lit) {
				t.Errorf("%s: message %q starts with a package name", fset.Position(lit.Pos()), s)
			}
			return true
		})
		return nil
	})
}

// isMessage reports whether lit is the first argument of a call that
// makes an error (errors.New, fmt.Errorf, or a sentinel's constructor:
// a call or composite literal in a var declaration of an Err... name).
func isMessage(f *ast.File, lit *ast.BasicLit) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && isIdent(sel.X, "errcode") {
				// errcode.New(code, message, hint), errcode.Sub(parent, code, message, hint)
				at := map[string]int{"New": 1, "Sub": 2}[sel.Sel.Name]
				found = found || at > 0 && len(n.Args) > at && n.Args[at] == lit
				return !found
			}
			if len(n.Args) > 0 && n.Args[0] == lit {
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					name := sel.Sel.Name
					found = found || name == "New" || name == "Errorf"
				}
				if id, ok := n.Fun.(*ast.Ident); ok && strings.HasSuffix(id.Name, "Error") {
					found = true
				}
			}
		case *ast.CompositeLit:
			if len(n.Elts) > 0 && n.Elts[0] == lit {
				found = true
			}
		}
		return !found
	})
	return found
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// Every command, given a file that does not exist, a file that is no
// assembly and a project whose YAML is broken, fails without a package
// name in its message.
func TestNoPackageNamesInCommandErrors(t *testing.T) {
	re := pkgPrefix(goPackages(t))
	dir := t.TempDir()
	notZip := filepath.Join(dir, "not.cloud")
	os.WriteFile(notZip, []byte("PK\x03\x04 cut short"), 0o644)
	project := filepath.Join(dir, "project")
	os.MkdirAll(project, 0o755)
	os.WriteFile(filepath.Join(project, "assembly.yaml"), []byte("droplets:\n  A: [\n"), 0o644)
	for _, l := range runnableCommands() {
		for _, arg := range []string{filepath.Join(dir, "nosuch"), notZip, project, filepath.Join(project, "assembly.yaml")} {
			args := append(append([]string(nil), l.path...), arg)
			_, _, stderr := runArgs(args...)
			for _, line := range strings.Split(stderr, "\n") {
				if msg, ok := strings.CutPrefix(line, "assemble: error: "); ok && re.MatchString(msg) {
					t.Errorf("assemble %s: %s", strings.Join(args, " "), line)
				}
			}
		}
	}
}
