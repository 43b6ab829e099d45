package blueprint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/packager/blueprint/subst"
)

func evalExpr(t *testing.T, expr string) (any, error) {
	t.Helper()
	n, err := subst.Parse(expr)
	if err != nil {
		t.Fatalf("Parse(%q): %v", expr, err)
	}
	c := &checker{vars: map[string]*Variable{}, values: map[string]*Value{}, res: map[string]*resource{}}
	return newEvaluator(c, nil, nil).eval(n)
}

func TestEvalCoreFunctions(t *testing.T) {
	tests := []struct{ expr, want string }{
		{`fromjson("{\"a\":{\"b\":[1,2]}}", "/a/b/1")`, "2"},
		{`map(list("{\"h\":\"x\"}"), fromjson_g("/h"))`, "[x]"},
		{`jsondecode("[1, 2.5, \"x\", true]")`, "[1 2.5 x true]"},
		{`len("héllo")`, "5"},
		{`len(list(1, 2, 3))`, "3"},
		{`len(object(a = 1))`, "1"},
		{`substr("abcdef", 1, 3)`, "bc"},
		{`substr("abcdef", 4)`, "ef"},
		{`map(list("abcdef"), substr_g(0, 2))`, "[ab]"},
		{`replace("http://x", "http://", "https://")`, "https://x"},
		{`map(list("a-b"), replace_g("-", "+"))`, "[a+b]"},
		{`trim("  x  ")`, "x"},
		{`trimprefix("http://x", "http://")`, "x"},
		{`map(list("http://x"), trimprefix_g("http://"))`, "[x]"},
		{`trimsuffix("x:3000", ":3000")`, "x"},
		{`map(list("x/config"), trimsuffix_g("/config"))`, "[x]"},
		{`split("a,b", ",")`, "[a b]"},
		{`flatmap(list("a,b", "c"), split_g(","))`, "[a b c]"},
		{`join(list("a", "b"), "-")`, "a-b"},
		{`index("abcabc", "c")`, "2"},
		{`last_index("abcabc", "c")`, "5"},
		{`index("abc", "z")`, "-1"},
		{`to_upper("ab")`, "AB"},
		{`to_lower("AB")`, "ab"},
		{`has_prefix("abc", "ab")`, "true"},
		{`filter(list("ab", "cd"), has_prefix_g("c"))`, "[cd]"},
		{`has_suffix("abc", "bc")`, "true"},
		{`filter(list("ab", "cd"), has_suffix_g("b"))`, "[ab]"},
		{`contains("abc", "b")`, "true"},
		{`contains(list(1, 2), 3)`, "false"},
		{`filter(list("ab", "cd"), contains_g("d"))`, "[cd]"},
		{`list(1, "a", true)`, "[1 a true]"},
		{`object(b = 1, a = "x")`, "map[a:x b:1]"},
		{`keys(object(b = 1, a = 2))`, "[a b]"},
		{`vals(object(b = 1, a = 2))`, "[2 1]"},
		{`map(list("a", "b"), to_upper)`, "[A B]"},
		{`map(list(object(id = "x")), compose(to_upper, getattr("id")))`, "[X]"},
		{`map(list(object(id = "x")), pipe(getattr("id"), to_upper))`, "[X]"},
		{`map(list(list(1, 2)), getelem(1))`, "[2]"},
		{`and(true, false)`, "false"},
		{`or(true, false)`, "true"},
		{`not(false)`, "true"},
		{`eq(1, 1.0)`, "true"},
		{`eq("a", "b")`, "false"},
		{`gt(2, 1)`, "true"},
		{`ge(1, 1)`, "true"},
		{`lt(1.5, 1)`, "false"},
		{`le(1, 1)`, "true"},
		{`list(1, 2)[1]`, "2"},
		{`object(a = object(b = "c")).a.b`, "c"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			v, err := evalExpr(t, tt.expr)
			if err != nil {
				t.Fatalf("eval: %v", err)
			}
			if got := fmt.Sprint(v); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestEvalNotKnown(t *testing.T) {
	for _, expr := range []string{`datetime("unix")`, `cwd()`, `link("a", "b")`, `resources.x.spec.y`, `elem`, `i`, `variables.v`, `len(datasources.d.f)`, `children.c.x`} {
		if _, err := evalExpr(t, expr); !errors.Is(err, notKnown) {
			t.Errorf("%s: got %v, want notKnown", expr, err)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	for expr, msg := range map[string]string{
		`fromjson("[1]", "/0")`:                             "root must be an object",
		`fromjson("{\"b\":1}", "a")`:                        `no key "a"; the keys there are "b"`,
		`fromjson("{\"a\":1}", "/b")`:                       `no key "b"`,
		`fromjson("{\"a\":[1,2]}", "a/01")`:                 `"01" is not an array index`,
		`fromjson("{\"a\":[1,2]}", "a/+1")`:                 `"+1" is not an array index`,
		`fromjson("{\"a\":[1,2]}", "a/-")`:                  `"-" is not an array index`,
		`fromjson("{\"a\":[1,2]}", "a/2")`:                  "index 2 is out of range for a list of 2 items",
		`fromjson("{\"a\":[1]}", "a/99999999999999999999")`: "index 99999999999999999999 is out of range for a list of 1 item",
		`fromjson("{\"a\":1}", "a/b")`:                      `goes past a scalar`,
		`jsondecode("{")`:                                   "invalid JSON",
		`substr("ab", 3)`:                                   "out of range",
		`join(list(1), ",")`:                                "array of strings",
		`map(list(1), getelem(0))`:                          "must be an array",
		`map(list(object(a = 1)), getattr("b"))`:            `no attribute "b"`,
		`filter(list("a"), to_upper)`:                       "must return a boolean",
		`flatmap(list("a"), to_upper)`:                      "must return an array",
	} {
		_, err := evalExpr(t, expr)
		var ee *evalErr
		if !errors.As(err, &ee) || !errors.Is(err, errCall) || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: got %v, want a call error containing %q", expr, err, msg)
		}
	}
}

// Each value doubles the previous one: v19 is 2^21 items, above
// MaxEvalSize. Validation fails there, once, naming the place; the values
// built on it are not reported again.
func TestEvalSizeBound(t *testing.T) {
	src := "version: 2023-04-20\nvalues:\n  v0: {type: array, value: '${list(1, 2)}'}\n"
	for i := 1; i <= 24; i++ {
		src += "  v" + itoa(i) + ": {type: array, value: '${list(values.v" + itoa(i-1) + ", values.v" + itoa(i-1) + ")}'}\n"
	}
	src += "resources:\n  r: {type: aws/sns/topic, spec: {a: '${values.v24}', b: '${values.v3}'}}\n"
	path := writeBlueprint(t, src)
	_, err := Load(path, Options{})
	wantOneError(t, err, ErrEvalLimit, 22, "list(): evaluates to more than")
	if _, perr := Package(path, Options{}); perr == nil || perr.Error() != err.Error() {
		t.Fatalf("Package: %v, want the error Load gave", perr)
	}
}

// writeBlueprint writes src as bp.yaml in a new folder.
func writeBlueprint(t *testing.T, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bp.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantOneError checks that err is an ErrorList of one error of class at
// line whose message contains msg.
func wantOneError(t *testing.T, err error, class error, line int, msg string) {
	t.Helper()
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("want one error, got:\n%v", err)
	}
	e := list[0]
	if !errors.Is(e, class) || e.Line != line || !strings.Contains(e.Msg, msg) {
		t.Fatalf("got %v (line %d, %s), want %v at line %d containing %q", e, e.Line, Code(e), class, line, msg)
	}
}

func TestInlineBudget(t *testing.T) {
	big := strings.Repeat("x", MaxEvalSize/2)
	src := "version: 2023-04-20\nvariables:\n  big: {type: string, default: " + big + "}\nresources:\n  r:\n    type: aws/sns/topic\n    spec:\n"
	for i := 0; i < 12; i++ {
		src += "      a" + itoa(i) + ": p-${variables.big}\n"
	}
	dir := t.TempDir()
	path := dir + "/bp.yaml"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Package(path, Options{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	out := string(p.Files["bp.yaml"])
	if n := strings.Count(out, "p-${variables.big}"); n != 5 {
		t.Fatalf("%d references left, want 5 (7 inlined within MaxInlineSize)", n)
	}
}

// QA: strings that double with each value are bounded like lists: past
// MaxEvalSize the evaluation fails, at the value's definition (a 60-level
// chain used to grow without bound, 10 GB before it was killed).
func TestEvalStringDoubling(t *testing.T) {
	src := "version: 2023-04-20\nvalues:\n  v0: {type: string, value: xxxxxxxxxxxxxxxx}\n"
	for i := 1; i <= 60; i++ { // v17 is 2 MiB: above MaxEvalSize
		src += "  v" + itoa(i) + ": {type: string, value: '${values.v" + itoa(i-1) + "}${values.v" + itoa(i-1) + "}'}\n"
	}
	src += "resources:\n  r: {type: aws/sns/topic, spec: {a: '${values.v60}', b: '${values.v2}'}}\n"
	_, err := Load(writeBlueprint(t, src), Options{})
	wantOneError(t, err, ErrEvalLimit, 20, "${values.v16}: the string interpolated up to here evaluates to more than")
}

// QA: functions that can grow a value check the size before building it
// (replace in a 512 KiB value with a 512 KiB value used to allocate 256 GiB
// and kill the process); too large is an error.
func TestEvalGrowthBound(t *testing.T) {
	big := strings.Repeat("x", 1<<19)
	chars := make([]any, 0, 1<<11)
	for i := 0; i < 1<<11; i++ {
		chars = append(chars, "x")
	}
	repl, err := callCore("replace_g", []any{"x", big})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []any
	}{
		{"replace", []any{big, "x", big}},
		{"replace", []any{big, "", "yy"}},
		{"join", []any{[]any{big, big, big}, ""}},
		{"join", []any{chars, big}},
		{"map", []any{chars, repl}},
		{"flatmap", []any{chars, fnVal(func(...any) (any, error) { return []any{big}, nil })}},
	} {
		if v, err := callCore(tc.name, tc.args); !errors.Is(err, errTooLarge) {
			t.Errorf("%s: got %d bytes (err %v), want errTooLarge", tc.name, sizeOf(v, MaxEvalSize), err)
		}
	}
	// Below the bound the functions still work.
	if v, err := callCore("replace", []any{"a-b", "-", "+"}); err != nil || v != "a+b" {
		t.Errorf("replace: %v, %v", v, err)
	}
	if v, err := callCore("join", []any{[]any{"a", "b"}, ","}); err != nil || v != "a,b" {
		t.Errorf("join: %v, %v", v, err)
	}
}

// flatList writes a blueprint holding a flow list of n one-letter items
// in its metadata: n+9 YAML nodes in about 2n bytes.
func flatList(n int) string {
	return "version: 2023-04-20\nmetadata:\n  x: [" + strings.TrimSuffix(strings.Repeat("a,", n), ",") + "]\nresources:\n  r: {type: aws/sns/topic, spec: {}}\n"
}

// The YAML nodes one Load holds are bounded (MaxNodes), across the files it
// reads: a 3.8 MB flat list took 19 s and 2.7 GB to build (yaml.v3's
// encoder keeps every event), and 8 includes of it 3.2 GB to validate.
// Validation and packaging refuse it alike, naming the file or include.
func TestNodeLimit(t *testing.T) {
	path := writeBlueprint(t, flatList(MaxNodes))
	_, err := Load(path, Options{})
	// One file over the limit is refused before yaml.v3 decodes it, at
	// the item that passes the limit.
	wantOneError(t, err, ErrTooLarge, 3, fmt.Sprintf("more than %d YAML nodes", MaxNodes))
	if _, perr := Package(path, Options{}); perr == nil || perr.Error() != err.Error() {
		t.Fatalf("Package: %v, want the error Load gave", perr)
	}
	if err := loadString(t, flatList(MaxNodes-100)); err != nil {
		t.Fatalf("a file under the limit: %v", err)
	}

	// Three includes of a file holding a third of the limit or more.
	files := map[string]string{"part.yaml": flatList(MaxNodes/3 + 1)}
	files["main.yaml"] = "version: 2023-04-20" + res + "include:\n  a: {path: part.yaml}\n  b: {path: part.yaml}\n  c: {path: part.yaml}\n  d: {path: part.yaml}\n  e: {path: part.yaml}\n"
	dir := writeFiles(t, files)
	var read int
	_, err = Load(filepath.Join(dir, "main.yaml"), Options{Cwd: dir, Read: func(string) { read++ }})
	wantOneError(t, err, ErrTooLarge, 9, `include "c": the blueprints loaded hold more than`)
	if read != 4 {
		t.Fatalf("read %d files, want 4: none after the limit is passed", read)
	}
}
