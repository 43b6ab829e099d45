package assemble_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestNoLibraryMessageNamesAFlag (issue 29): a library says what is wrong
// in its own terms (an option's field, the file, the rule); cmd/assemble
// adds the flag where a user needs it (its hint table, or by wrapping).
// The test reads the string literals of every library file (not tests,
// not package main) and fails on each "--x" but another program's flags:
// an argument list for a program it runs (exec.Command, a []string, an
// append to one), or flags that follow the program's name in the same
// clause of the text ("gpg --export --armor KEYID").
func TestNoLibraryMessageNamesAFlag(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}} {{.Name}} {{join .GoFiles \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[1] == "main" {
			continue
		}
		for _, name := range f[2:] {
			path := filepath.Join(f[0], name)
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			n++
			for _, lit := range flagLiterals(file) {
				p := fset.Position(lit.Pos())
				t.Errorf("%s:%d: %s names a flag: say it in the library's terms (the option's field, the file), and let cmd/assemble add the flag", p.Filename, p.Line, lit.Value)
			}
		}
	}
	if n < 100 {
		t.Fatalf("read only %d files", n)
	}
}

// flagLiterals returns the string literals of file that name a flag of
// this program.
func flagLiterals(file *ast.File) []*ast.BasicLit {
	var found []*ast.BasicLit
	var stack []ast.Node
	ast.Inspect(file, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil || !namesOwnFlag(s) || isArgument(stack) {
			return true
		}
		found = append(found, lit)
		return true
	})
	return found
}

var (
	flagRE = regexp.MustCompile(`(^|[^-\w])--[a-z]`)
	// another program, then its flags up to the end of the clause
	foreignRE = regexp.MustCompile(`\b(gpgconf|gpg|docker|aws|cdk|cosign|git)( [^,;:()'"]*)?`)
)

// namesOwnFlag reports whether s holds a "--x" that no other program's
// name precedes in its clause.
func namesOwnFlag(s string) bool {
	s = foreignRE.ReplaceAllString(s, "")
	return flagRE.MatchString(s)
}

// isArgument reports whether the literal at the top of stack is an
// element of another program's argument list: an argument of exec's
// functions or of a call named for running a program (run, command, gpg,
// git, docker), an element of a []string, of a table of them, or of what
// append adds.
func isArgument(stack []ast.Node) bool {
	for i := len(stack) - 2; i >= 0; i-- {
		switch n := stack[i].(type) {
		case *ast.CompositeLit:
			if n.Type == nil { // an element of a table
				continue
			}
			_, ok := n.Type.(*ast.ArrayType)
			return ok
		case *ast.CallExpr:
			switch fn := n.Fun.(type) {
			case *ast.Ident:
				return fn.Name == "append" || runner.MatchString(fn.Name)
			case *ast.SelectorExpr:
				if x, ok := fn.X.(*ast.Ident); ok && (x.Name == "exec" || x.Name == "osexec") {
					return true
				}
				return runner.MatchString(fn.Sel.Name)
			}
			return false
		case *ast.BinaryExpr, *ast.ParenExpr, *ast.KeyValueExpr:
			continue
		default:
			return false
		}
	}
	return false
}

var runner = regexp.MustCompile(`^(?i:run|command|commandcontext|gpg|git|docker)$`)

// TestNamesOwnFlag: the rule the scan applies.
func TestNamesOwnFlag(t *testing.T) {
	for s, want := range map[string]bool{
		"name the trusted keys with --keyring FILE":                     true,
		"--min-signers 0: at least 1":                                   true,
		"export them: gpg --export --armor KEYID > keyring.asc":         false,
		"gpg --export --armor KEYID > k.asc, then --keyring k.asc":      true,
		"a signed message (gpg --clearsign), not a detached signature":  false,
		"build arguments (docker build --build-arg)":                    false,
		"the range is 1--3":                                             false,
		"MinSigners 0: at least 1 signature is always needed":           false,
		"aws cloudformation execute-change-set --change-set-name NAME":  false,
		"co-sign with 'assemble sign --add', or re-sign with --replace": true,
	} {
		if got := namesOwnFlag(s); got != want {
			t.Errorf("namesOwnFlag(%q) = %v, want %v", s, got, want)
		}
	}
}
