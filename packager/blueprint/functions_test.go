package blueprint

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// specArity is the argument count of each core function, written down from
// the specification's core function definitions (-1: any number).
var specArity = map[string][2]int{
	"fromjson": {2, 2}, "fromjson_g": {1, 1}, "jsondecode": {1, 1}, "len": {1, 1},
	"substr": {2, 3}, "substr_g": {1, 2}, "replace": {3, 3}, "replace_g": {2, 2},
	"trim": {1, 1}, "trimprefix": {2, 2}, "trimprefix_g": {1, 1}, "trimsuffix": {2, 2},
	"trimsuffix_g": {1, 1}, "split": {2, 2}, "split_g": {1, 1}, "join": {2, 2},
	"index": {2, 2}, "last_index": {2, 2}, "to_upper": {1, 1}, "to_lower": {1, 1},
	"has_prefix": {2, 2}, "has_prefix_g": {1, 1}, "has_suffix": {2, 2}, "has_suffix_g": {1, 1},
	"contains": {2, 2}, "contains_g": {1, 1}, "list": {0, -1}, "object": {0, -1},
	"keys": {1, 1}, "vals": {1, 1}, "map": {2, 2}, "filter": {2, 2}, "reduce": {3, 3},
	"sort": {2, 2}, "flatmap": {2, 2}, "compose": {1, -1}, "pipe": {1, -1},
	"getattr": {1, 1}, "getelem": {1, 1}, "link": {2, 2}, "and": {2, 2}, "or": {2, 2},
	"not": {1, 1}, "eq": {2, 2}, "gt": {2, 2}, "ge": {2, 2}, "lt": {2, 2}, "le": {2, 2},
	"cwd": {0, 0}, "datetime": {1, 1},
	// Not defined by the specification, but used in its value examples.
	"normalize": {1, 1},
}

func TestCoreFunctionSet(t *testing.T) {
	names := CoreFunctions()
	if len(names) != 51 {
		t.Fatalf("%d core functions, want 51 (the 50 of the specification and normalize)", len(names))
	}
	for _, n := range names {
		want, ok := specArity[n]
		if !ok {
			t.Errorf("%s is not a core function of the specification", n)
			continue
		}
		f, _ := LookupFunction(n)
		lo, hi := f.argRange()
		if f.Variadic != nil {
			lo, hi = f.MinArgs, -1
		}
		if lo != want[0] || hi != want[1] {
			t.Errorf("%s takes %d..%d arguments, the specification says %d..%d", n, lo, hi, want[0], want[1])
		}
	}
}

// argFor writes an argument expression of a type, using the test
// blueprint's definitions: data source fields, known only at deploy time,
// so that the calls are checked, not evaluated.
func argFor(t Type) string {
	switch {
	case t&TString != 0:
		return "datasources.d.s"
	case t&TInt != 0:
		return "datasources.d.n"
	case t&TFloat != 0:
		return "datasources.d.f"
	case t&TBool != 0:
		return "datasources.d.b"
	case t&TArray != 0:
		return "datasources.d.arr"
	case t&TObject != 0:
		return "values.obj"
	}
	return "to_upper"
}

// wrongFor writes an argument a parameter does not accept ("" if it
// accepts everything).
func wrongFor(t Type) string {
	for _, c := range []struct {
		t   Type
		arg string
	}{{TBool, "true"}, {TString, `"s"`}, {TArray, "values.arr"}, {TFunc, "to_upper"}} {
		if t&c.t == 0 {
			return c.arg
		}
	}
	return ""
}

const funcBlueprint = `version: 2023-04-20
datasources:
  d:
    type: aws/vpc
    filter: {field: tags, operator: has key, search: x}
    exports: {s: {type: string}, n: {type: integer}, f: {type: float}, b: {type: boolean}, arr: {type: array}}
values:
  arr:
    type: array
    value: ${list(1, 2)}
  obj:
    type: object
    value: ${object(a = 1)}
resources:
  other:
    type: aws/sqs/queue
    spec: {}
  res:
    type: aws/sns/topic
    spec:
      x: "${%s}"
`

func loadString(t *testing.T, src string) error {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "bp.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, Options{Cwd: dir})
	return err
}

func TestCoreFunctionCalls(t *testing.T) {
	for _, name := range CoreFunctions() {
		f, _ := LookupFunction(name)
		params := f.Params
		if f.Variadic != nil {
			params = []Param{*f.Variadic, *f.Variadic}
		}
		call := func(args []string) string {
			if f.Named {
				for i := range args {
					args[i] = fmt.Sprintf("a%d = %s", i, args[i])
				}
			}
			return strings.ReplaceAll(fmt.Sprintf("%s(%s)", name, strings.Join(args, ", ")), `"`, `\"`)
		}
		var good []string
		for _, p := range params {
			a := argFor(p.Type)
			if p.Choices != nil {
				a = fmt.Sprintf("%q", p.Choices[0])
			}
			good = append(good, a)
		}
		if name == "link" {
			good = []string{`"other"`, "resources.other"}
		}
		t.Run(name+"/valid", func(t *testing.T) {
			if err := loadString(t, fmt.Sprintf(funcBlueprint, call(slices.Clone(good)))); err != nil {
				t.Fatalf("valid call rejected: %v", err)
			}
		})
		if f.Variadic == nil {
			t.Run(name+"/too many", func(t *testing.T) {
				err := loadString(t, fmt.Sprintf(funcBlueprint, call(append(slices.Clone(good), `"extra"`))))
				if !errors.Is(err, ErrFunction) || !strings.Contains(err.Error(), name+"() takes") {
					t.Fatalf("got %v, want an argument count error", err)
				}
			})
		}
		if lo, _ := f.argRange(); f.Variadic == nil && lo > 0 {
			t.Run(name+"/too few", func(t *testing.T) {
				err := loadString(t, fmt.Sprintf(funcBlueprint, call(slices.Clone(good[:lo-1]))))
				if !errors.Is(err, ErrFunction) || !strings.Contains(err.Error(), name+"() takes") {
					t.Fatalf("got %v, want an argument count error", err)
				}
			})
		}
		for i, p := range params {
			wrong := wrongFor(p.Type)
			if wrong == "" {
				continue
			}
			t.Run(fmt.Sprintf("%s/arg %d type", name, i+1), func(t *testing.T) {
				args := slices.Clone(good)
				args[i] = wrong
				err := loadString(t, fmt.Sprintf(funcBlueprint, call(args)))
				if !errors.Is(err, ErrFunction) || !strings.Contains(err.Error(), fmt.Sprintf("argument %d (%s) of %s() must be", i+1, p.Label, name)) {
					t.Fatalf("got %v, want a type error for argument %d", err, i+1)
				}
			})
		}
	}
}

func TestFunctionSpecifics(t *testing.T) {
	tests := []struct {
		expr  string
		class error
		msg   string
	}{
		{`nosuch(1)`, ErrFunction, "nosuch() is not a core function"},
		{`datetime("iso")`, ErrFunction, `choose from "unix", "rfc3339", "tag", "tagcompact"`},
		{`object("x")`, ErrFunction, "argument 1 of object() must be named"},
		{`object(a = 1, a = 2)`, ErrFunction, `gets the attribute "a" twice`},
		{`compose()`, ErrFunction, "compose() takes at least 1 argument, got 0"},
		{`link(other, "ghost")`, ErrReference, `link(): resource "ghost" is not defined`},
		{`map(values.arr, nosuchfunc)`, ErrReference, `resource "nosuchfunc" is not defined`},
		{`len(to_upper)`, ErrFunction, "argument 1 (value) of len() must be"},
		{`eq(len("a"), 1)`, nil, ""},
		{`map(datasources.d.arr, compose(to_upper, getattr("id")))[0]`, nil, ""},
		{`substr("abc", 0)`, nil, ""},
		{`cwd()`, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			err := loadString(t, fmt.Sprintf(funcBlueprint, strings.ReplaceAll(tt.expr, `"`, `\"`)))
			if tt.class == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.class) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v, want %v containing %q", err, tt.class, tt.msg)
			}
		})
	}
}

// DateTimeFormats hands out a copy: a caller changing it changes nothing
// for the next.
func TestDateTimeFormatsCopy(t *testing.T) {
	f := DateTimeFormats()
	f[0] = "changed"
	if got := DateTimeFormats()[0]; got != "unix" {
		t.Errorf("DateTimeFormats()[0] = %q after a caller changed its copy", got)
	}
}

// specFile is the Blueprint Specification's text (../shared/specs).
var specFile = filepath.Join("..", "..", "..", "shared", "specs", "blueprint-spec.txt")

// providerExamples are the functions the specification calls in examples
// of provider functions, beyond the core ones ("a provider with a custom
// function", get_network_config(resources.vpc.state)): not core functions.
var providerExamples = []string{"custom_provider_function", "get_network_config"}

// Issue 15 item 6: every function the specification calls inside a ${..}
// substitution, anywhere in its text, is a core function here (normalize
// was "not a core function"), but for its provider-function examples.
func TestSpecFunctionsImplemented(t *testing.T) {
	src, err := os.ReadFile(specFile)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("specification not present: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	called := map[string]bool{}
	text := string(src)
	for {
		i := strings.Index(text, "${")
		if i < 0 {
			break
		}
		text = text[i+2:]
		depth, end := 1, len(text)
		for j, r := range text {
			if r == '{' {
				depth++
			} else if r == '}' {
				if depth--; depth == 0 {
					end = j
					break
				}
			}
		}
		for _, m := range callName.FindAllStringSubmatch(text[:end], -1) {
			called[m[1]] = true
		}
		text = text[end:]
	}
	if len(called) < 10 {
		t.Fatalf("found only %d functions called in the specification: %v", len(called), called)
	}
	for name := range called {
		if _, ok := LookupFunction(name); !ok && !slices.Contains(providerExamples, name) {
			t.Errorf("the specification calls %s(), which is not implemented", name)
		}
	}
	for _, name := range providerExamples {
		if !called[name] {
			t.Errorf("%s() is no longer in the specification; drop it from providerExamples", name)
		}
	}
	t.Logf("functions the specification calls: %v", slices.Sorted(maps.Keys(called)))
}

var callName = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)\s*\(`)
