package blueprint

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// workLimitBlueprint builds a 128 Ki-item list from a doubling string, then
// filters it in 20,000 places: each value is small and the work is not.
func workLimitBlueprint() string {
	var b strings.Builder
	b.WriteString("version: 2023-04-20\nvalues:\n  s0: {type: string, value: 'a,b'}\n")
	for i := 1; i <= 17; i++ {
		fmt.Fprintf(&b, "  s%d: {type: string, value: '${values.s%d},${values.s%d}'}\n", i, i-1, i-1)
	}
	b.WriteString("  items: {type: array, value: '${split(values.s17, \",\")}'}\n")
	b.WriteString("resources:\n  r:\n    type: aws/sns/topic\n    spec:\n")
	for i := range 20000 {
		fmt.Fprintf(&b, "      a%d: '${len(filter(values.items, has_prefix_g(\"x\")))}'\n", i)
	}
	return b.String()
}

// Issue 15 item 5: evaluation is bounded by the work done, not only by
// sizes and depth: the blueprint fails once, with ErrEvalLimit.
func TestEvalWorkLimit(t *testing.T) {
	path := writeBlueprint(t, workLimitBlueprint())
	_, err := Load(path, Options{})
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 || !errors.Is(list[0], ErrEvalLimit) || !strings.Contains(list[0].Msg, fmt.Sprintf("takes more than %d steps", MaxEvalWork)) {
		t.Fatalf("want one work-limit error, got:\n%.2000v", err)
	}
	if list[0].Line < 24 {
		t.Fatalf("reported at line %d, want a resource field", list[0].Line)
	}
}

// BenchmarkEvalWorkLimit times how long the work-limit blueprint takes to
// fail validation.
func BenchmarkEvalWorkLimit(b *testing.B) {
	path := filepath.Join(b.TempDir(), "bp.yaml")
	writeFileB(b, path, workLimitBlueprint())
	for b.Loop() {
		if _, err := Load(path, Options{}); !errors.Is(err, ErrEvalLimit) {
			b.Fatalf("got %v, want ErrEvalLimit", err)
		}
	}
}

// Issue 15 item 1: values given with --var (Options.Variables) are
// evaluated by validation too; without one the variable is a deploy-time
// input and the blueprint is valid.
func TestValidateWithVariables(t *testing.T) {
	src := "version: 2023-04-20\nvariables:\n  cfg: {type: string}\nresources:\n  r:\n    type: aws/sns/topic\n    spec:\n      host: ${fromjson(variables.cfg, \"host\")}\n"
	path := writeBlueprint(t, src)
	if _, err := Load(path, Options{}); err != nil {
		t.Fatalf("without a value: %v", err)
	}
	_, err := Load(path, Options{Variables: map[string]any{"cfg": `{"port": 1}`}})
	wantOneError(t, err, ErrFunction, 8, `fromjson(): json pointer "host": no key "host"`)
	if _, perr := Package(path, Options{Variables: map[string]any{"cfg": `{"port": 1}`}}); perr == nil || perr.Error() != err.Error() {
		t.Fatalf("Package: %v, want the error Load gave", perr)
	}
	p, err := Package(path, Options{Variables: map[string]any{"cfg": `{"host": "db"}`}})
	if err != nil || !strings.Contains(string(p.Files[p.Main]), "host: db") {
		t.Fatalf("want host inlined, got %v:\n%s", err, p.Files["bp.yaml"])
	}
}

// An include passes what the parent evaluates (a function call on known
// values), so the child is checked with it.
func TestIncludeVariablesEvaluated(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"app.yaml":  "version: 2023-04-20\nvariables:\n  env: {type: string, default: prod}\ninclude:\n  core:\n    path: core.yaml\n    variables:\n      name: ${to_upper(variables.env)}\nresources:\n  r: {type: aws/sns/topic, spec: {}}\n",
		"core.yaml": "version: 2023-04-20\nvariables:\n  name: {type: string}\nresources:\n  q: {type: aws/sqs/queue, spec: {a: '${substr(variables.name, 2)}', b: '${substr(variables.name, 9)}'}}\n",
	})
	bp, err := Load(filepath.Join(dir, "app.yaml"), Options{Cwd: dir})
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 || !errors.Is(list[0], ErrFunction) || filepath.Base(list[0].File) != "core.yaml" || !strings.Contains(list[0].Msg, "start 9 is out of range for a string of 4 characters") {
		t.Fatalf("want one error in core.yaml, got:\n%v", err)
	}
	if got := bp.Children["core"].Blueprint.Known["name"]; got != "PROD" {
		t.Fatalf("child variable name = %v, want PROD", got)
	}
}

// Property: normalize is idempotent, keeps the type and shape of its
// argument, and yields NFC strings equal to the input's NFC form.
func TestNormalizeProperty(t *testing.T) {
	pool := []rune{'a', 'e', 'é', '\u0301', '\u0308', 'ñ', 'n', '\u0303', 'Å', 'A', '\u030a', ' '}
	rng := rand.New(rand.NewPCG(15, 6))
	str := func() string {
		r := make([]rune, rng.IntN(6))
		for i := range r {
			r[i] = pool[rng.IntN(len(pool))]
		}
		return string(r)
	}
	var value func(depth int) any
	value = func(depth int) any {
		switch n := rng.IntN(6); {
		case depth > 0 && n == 0:
			l := make([]any, rng.IntN(3))
			for i := range l {
				l[i] = value(depth - 1)
			}
			return l
		case depth > 0 && n == 1:
			m := map[string]any{}
			for range rng.IntN(3) {
				m[norm.NFC.String(str())] = value(depth - 1)
			}
			return m
		case n == 2:
			return int64(rng.IntN(9))
		case n == 3:
			return rng.IntN(2) == 0
		}
		return str()
	}
	var sameShape func(a, b any) bool
	sameShape = func(a, b any) bool {
		switch x := a.(type) {
		case string:
			y, ok := b.(string)
			return ok && y == norm.NFC.String(x) && norm.NFC.IsNormalString(y)
		case []any:
			y, ok := b.([]any)
			if !ok || len(x) != len(y) {
				return false
			}
			for i := range x {
				if !sameShape(x[i], y[i]) {
					return false
				}
			}
			return true
		case map[string]any:
			y, ok := b.(map[string]any)
			if !ok || len(x) != len(y) {
				return false
			}
			for k, v := range x {
				if !sameShape(v, y[norm.NFC.String(k)]) {
					return false
				}
			}
			return true
		}
		return equal(a, b)
	}
	for i := range 2000 {
		v := value(3)
		once, err := callCore("normalize", []any{v})
		if err != nil {
			t.Fatalf("case %d: normalize(%v): %v", i, v, err)
		}
		twice, err := callCore("normalize", []any{once})
		if err != nil || !equal(once, twice) {
			t.Fatalf("case %d: not idempotent: %v then %v (%v)", i, once, twice, err)
		}
		if !sameShape(v, once) {
			t.Fatalf("case %d: normalize(%#v) = %#v", i, v, once)
		}
	}
	// Keys that become equal once normalized are an error.
	_, err := callCore("normalize", []any{map[string]any{"e\u0301": 1, "é": 2}})
	if !errors.Is(err, errCall) {
		t.Fatalf("colliding keys: got %v, want a call error", err)
	}
}

// Property: a fromjson path without its leading "/" reads from the root,
// as the same path with it does.
func TestFromJSONRootPath(t *testing.T) {
	doc := `{"host": "db", "ports": [80, 443], "nested": {"a/b": {"~k": true}}, "": "empty"}`
	for _, p := range []string{"host", "ports", "ports/1", "nested", "nested/a~1b", "nested/a~1b/~0k", "", "missing", "ports/9", "host/x"} {
		v1, err1 := callCore("fromjson", []any{doc, p})
		v2, err2 := callCore("fromjson", []any{doc, "/" + p})
		if p == "" {
			v2, err2 = callCore("fromjson", []any{doc, ""}) // "" is the whole document
		}
		if (err1 == nil) != (err2 == nil) || err1 == nil && !equal(v1, v2) {
			t.Errorf("fromjson(doc, %q) = %v, %v; with a leading slash %v, %v", p, v1, err1, v2, err2)
		}
	}
}

// Property: substr, index, last_index and len count characters alike, on
// strings with multi-byte characters.
func TestStringFunctionsCountCharacters(t *testing.T) {
	pool := []rune("aé€𝄞b")
	rng := rand.New(rand.NewPCG(15, 7))
	for i := range 3000 {
		r := make([]rune, rng.IntN(8))
		for j := range r {
			r[j] = pool[rng.IntN(len(pool))]
		}
		s := string(r)
		n := int64(utf8.RuneCountInString(s))
		if l, _ := callCore("len", []any{s}); l != n {
			t.Fatalf("len(%q) = %v, want %d", s, l, n)
		}
		a := rng.Int64N(n + 1)
		b := a + rng.Int64N(n-a+1)
		sub, err := callCore("substr", []any{s, a, b})
		if err != nil {
			t.Fatalf("substr(%q, %d, %d): %v", s, a, b, err)
		}
		idx, _ := callCore("index", []any{s, sub})
		got, err := callCore("substr", []any{s, idx, idx.(int64) + b - a})
		if err != nil || got != sub || idx.(int64) > a {
			t.Fatalf("case %d: index(%q, %q) = %v, substr there = %q (%v)", i, s, sub, idx, got, err)
		}
		last, _ := callCore("last_index", []any{s, sub})
		if got, _ := callCore("substr", []any{s, last, last.(int64) + b - a}); got != sub || last.(int64) < a {
			t.Fatalf("case %d: last_index(%q, %q) = %v", i, s, sub, last)
		}
		if _, err := callCore("substr", []any{s, n + 1}); !errors.Is(err, errCall) {
			t.Fatalf("substr past the end of %q: %v", s, err)
		}
	}
}

func writeFileB(b *testing.B, path, src string) {
	b.Helper()
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
}

// A value passed as text (--var, a droplet's variables) that does not read
// as the variable's type is named by what it does read as.
func TestPassedVariableKindNamed(t *testing.T) {
	src := "version: 2023-04-20\nvariables:\n  n: {type: integer}\n  b: {type: boolean}\nresources:\n  r: {type: aws/sns/topic, spec: {}}\n"
	path := writeBlueprint(t, src)
	for _, c := range []struct {
		name, value, want string
	}{
		{"n", "1.5", "is a float (1.5): pass an integer"},
		{"n", "many", "is a string (many): pass an integer"},
		{"n", "true", "is a boolean (true): pass an integer"},
		{"b", "7", "is an integer (7): pass a boolean"},
	} {
		_, err := Load(path, Options{Variables: map[string]any{c.name: c.value}})
		var list ErrorList
		if !errors.As(err, &list) || len(list) != 1 || !errors.Is(list[0], ErrSchema) || !strings.HasSuffix(list[0].Msg, c.want) {
			t.Errorf("%s=%s: got %v, want one ErrSchema ending %q", c.name, c.value, err, c.want)
		}
	}
}
