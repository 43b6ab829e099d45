package deploy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/droplets"
)

// undeployable are the droplet kinds deploy refuses (ErrUndeployable):
// a blueprint is a document, not something to put in an account.
var undeployable = map[string]bool{droplets.BlueprintType: true}

// Every droplet kind a manifest may name that deploy accepts has exactly
// one deployer, registered in the one table (kinds); the others have
// none. A specifier with a version finds the same deployer.
func TestKindRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range droplets.Kinds() {
		seen[k.Type] = true
		dk, ok := kinds[k.Type]
		if undeployable[k.Type] {
			if ok {
				t.Errorf("%s (%s) has a deployer, yet deploy refuses it", k.Type, k.Alias)
			}
			continue
		}
		if !ok {
			t.Errorf("%s (%s) has no deployer", k.Type, k.Alias)
			continue
		}
		got, alias := kindOf(k.Type + "@1.2.3")
		if alias != k.Alias || got == nil || reflect.TypeOf(got) != reflect.TypeOf(dk) || got != dk {
			t.Errorf("kindOf(%s@1.2.3) = %T %q, want the registered %T %q", k.Type, got, alias, dk, k.Alias)
		}
	}
	for typ := range kinds {
		if !seen[typ] {
			t.Errorf("a deployer for %s, which is no droplet kind", typ)
		}
	}
	if k, _ := kindOf("npm://@example/pkg.Unknown"); k != nil {
		t.Errorf("an unknown type has a deployer: %T", k)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a second deployer for the stack kind was registered")
			}
		}()
		registerKind(droplets.StackType, stackKind{})
	}()
}

// Each deployer registers itself beside its code, one registerKind call
// per kind, in the files of package deploy (not in a switch): the table
// is filled only by those calls.
func TestKindRegisteredOnce(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); ok && id.Name == "registerKind" && len(call.Args) == 2 {
				if sel, ok := call.Args[0].(*ast.SelectorExpr); ok {
					if prev, dup := calls[sel.Sel.Name]; dup {
						t.Errorf("%s registered in %s and %s", sel.Sel.Name, prev, f)
					}
					calls[sel.Sel.Name] = f
				}
			}
			return true
		})
	}
	if len(calls) != len(kinds) {
		t.Errorf("%d registerKind calls (%v) for %d deployers", len(calls), calls, len(kinds))
	}
}
