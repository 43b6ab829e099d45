package schema

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/internal/projectfs"
)

// loopSchema is the 400-byte schema of issue 19 item 9: a definition whose
// oneOf refers to itself twice, and a property-list pointer into it that
// does not resolve. Followed naively, each level doubles the paths.
const loopSchema = `{
  "typeName": "Test::Loop::Thing",
  "description": "a self-referring definition",
  "definitions": {"D": {"oneOf": [{"$ref": "#/definitions/D"}, {"$ref": "#/definitions/D"}]}},
  "properties": {"Name": {"type": "string"}, "A": {"$ref": "#/definitions/D"}},
  "primaryIdentifier": ["/properties/Name"],
  "createOnlyProperties": ["/properties/Name"],
  "readOnlyProperties": ["/properties/A/x/y/z"],
  "additionalProperties": false
}`

// doublingSchema returns a chain of n definitions, each of whose oneOf
// names the next twice, and a pointer through all of them that fails at the
// end: 2^n paths without memoising.
func doublingSchema(n int) string {
	var defs []string
	for i := 0; i < n; i++ {
		next := fmt.Sprintf(`{"$ref": "#/definitions/D%d"}`, i+1)
		defs = append(defs, fmt.Sprintf(`"D%d": {"oneOf": [%s, %s]}`, i, next, next))
	}
	defs = append(defs, fmt.Sprintf(`"D%d": {"type": "object", "properties": {"Leaf": {"type": "string"}}}`, n))
	return `{
  "typeName": "Test::Chain::Thing",
  "description": "a chain of doubling definitions",
  "definitions": {` + strings.Join(defs, ", ") + `},
  "properties": {"Name": {"type": "string"}, "A": {"$ref": "#/definitions/D0"}},
  "primaryIdentifier": ["/properties/Name"],
  "createOnlyProperties": ["/properties/Name"],
  "readOnlyProperties": ["/properties/A/Missing"],
  "additionalProperties": false
}`
}

// within runs f, failing the test if it has not returned after d (the
// exponential walk of issue 19 item 9 ran for minutes).
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
	}
}

// Issue 19 item 9: resolving a property-list pointer through $refs and
// combinators takes work linear in the schema, not exponential: the
// self-referring definition and the doubling chain end at once with the
// usual "does not resolve" warning (an error with Strict).
func TestPointerWalkIsLinear(t *testing.T) {
	v := mustValidator(t)
	cases := map[string]string{"self-referring oneOf": loopSchema, "doubling chain of 40": doublingSchema(40)}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			var r Result
			within(t, 20*time.Second, func() { r = v.Validate("loop.json", []byte(doc)) })
			if !r.Valid || !has(r.Warnings, "/readOnlyProperties/0", "does not resolve to a property") {
				t.Fatalf("valid=%v errors=%v warnings=%v, want a warning that the pointer does not resolve", r.Valid, r.Errors, r.Warnings)
			}
			within(t, 20*time.Second, func() { r = v.Strict().Validate("loop.json", []byte(doc)) })
			if r.Valid || !has(r.Errors, "/readOnlyProperties/0", "does not resolve to a property") {
				t.Fatalf("strict: valid=%v errors=%v", r.Valid, r.Errors)
			}
		})
	}
}

// The work of resolving one pointer grows linearly with the chain: the
// walk visits each (schema, remaining pointer) pair once.
func TestPointerWalkVisits(t *testing.T) {
	visits := func(n int) int {
		doc, err := decodeJSON([]byte(doublingSchema(n)))
		if err != nil {
			t.Fatal(err)
		}
		c := &checker{root: doc.(map[string]any), res: &Result{}}
		if c.resolveProperty("/properties/A/Missing") {
			t.Fatal("the pointer resolved")
		}
		if !c.resolveProperty("/properties/A/Leaf") {
			t.Fatal("the pointer through the chain did not resolve")
		}
		return c.visits
	}
	a, b := visits(20), visits(40)
	if b > 2*a+8 {
		t.Fatalf("visits: %d for 20 levels, %d for 40: not linear", a, b)
	}
}

// Issue 19 item 12: a relative $ref follows the rule for every path a
// project names (internal/projectfs): a link out of the schema's folder is
// refused (it could probe which JSON pointers exist in any file CI reads),
// a FIFO is refused at once (it hung), a link inside the folder is
// followed.
func TestRelativeRefsStayInFolder(t *testing.T) {
	v := mustValidator(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.json")
	if err := os.WriteFile(secret, []byte(`{"definitions": {"Port": {"type": "integer"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "common.json"), []byte(`{"definitions": {"Port": {"type": "integer"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"link.json": secret, "alias.json": "common.json", "outdir": outside} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	fifo := runtime.GOOS != "windows"
	if fifo {
		if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		ref, msg string
		err      error
	}{
		{"alias.json#/definitions/Port", "", nil},
		{"link.json#/definitions/Port", "leads outside the folder", projectfs.ErrOutside},
		{"outdir/secret.json#/definitions/Port", "leads outside the folder", projectfs.ErrOutside},
		{"fifo.json#/definitions/Port", "not a regular file (a FIFO)", projectfs.ErrNotRegular},
		{".#/definitions/Port", "not a regular file (a folder)", projectfs.ErrNotRegular},
	}
	for _, tt := range tests {
		if strings.HasPrefix(tt.ref, "fifo") && !fifo {
			continue
		}
		t.Run(tt.ref, func(t *testing.T) {
			m := base()
			m["properties"].(map[string]any)["Port"] = map[string]any{"$ref": tt.ref}
			var r Result
			within(t, 10*time.Second, func() { r = validateDoc(t, v, filepath.Join(dir, "schema.json"), m) })
			if tt.msg == "" {
				if !r.Valid {
					t.Fatalf("errors %v", r.Errors)
				}
				return
			}
			if r.Valid || !has(r.Errors, "/properties/Port/$ref", tt.msg) {
				t.Fatalf("errors %v, want %q", r.Errors, tt.msg)
			}
			c := &checker{file: filepath.Join(dir, "schema.json"), res: &Result{}}
			defer c.close()
			file, _, _ := strings.Cut(tt.ref, "#")
			if _, err := c.loadExternal(file); !errors.Is(err, tt.err) {
				t.Fatalf("loadExternal: %v, want %v", err, tt.err)
			}
		})
	}
}

// naiveResolve is the pointer walk without memoising (the walk before issue
// 19), with a step budget: ok is false when it ran out or hit its depth
// limit, and its answer then says nothing.
func naiveResolve(c *checker, p string, steps *int) (found, ok bool) {
	segs := strings.Split(strings.TrimPrefix(p, "/properties/"), "/")
	for i := range segs {
		segs[i] = unescape(segs[i])
	}
	props, _ := c.root["properties"].(map[string]any)
	cur, has := props[segs[0]]
	if !has {
		return false, true
	}
	ok = true
	var walk func(node any, segs []string, depth int) bool
	walk = func(node any, segs []string, depth int) bool {
		if len(segs) == 0 {
			return true
		}
		if *steps--; *steps < 0 || depth > 40 {
			ok = false
			return false
		}
		m, isMap := node.(map[string]any)
		if !isMap {
			return false
		}
		s, isSchema := c.deref(m)
		if !isSchema {
			return false
		}
		seg := segs[0]
		if seg == "properties" && len(segs) > 1 {
			if props, isMap := s["properties"].(map[string]any); isMap {
				if child, has := props[segs[1]]; has && walk(child, segs[2:], depth+1) {
					return true
				}
			}
		}
		if props, isMap := s["properties"].(map[string]any); isMap {
			if child, has := props[seg]; has && walk(child, segs[1:], depth+1) {
				return true
			}
		}
		if items, has := s["items"]; has {
			if seg == "*" || isIndex(seg) {
				if walk(items, segs[1:], depth+1) {
					return true
				}
			} else if walk(items, segs, depth+1) {
				return true
			}
		}
		if pp, isMap := s["patternProperties"].(map[string]any); isMap {
			for _, k := range slices.Sorted(maps.Keys(pp)) {
				if c.matches(k, seg) && walk(pp[k], segs[1:], depth+1) {
					return true
				}
			}
		}
		for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
			if arr, isList := s[kw].([]any); isList {
				for _, b := range arr {
					if walk(b, segs, depth+1) {
						return true
					}
				}
			}
		}
		return false
	}
	found = walk(cur, segs[1:], 0)
	return found, ok
}

// objects counts the JSON objects in v.
func objects(v any) int {
	n := 0
	switch t := v.(type) {
	case map[string]any:
		n++
		for _, e := range t {
			n += objects(e)
		}
	case []any:
		for _, e := range t {
			n += objects(e)
		}
	}
	return n
}

// FuzzResolveProperty: the memoised pointer walk visits each (schema, rest
// of the pointer) pair at most once, and gives the answer of the walk
// without memo wherever that one finishes (issue 19 item 9).
func FuzzResolveProperty(f *testing.F) {
	f.Add([]byte(loopSchema), "/properties/A/x/y/z")
	f.Add([]byte(doublingSchema(8)), "/properties/A/Leaf")
	f.Add([]byte(doublingSchema(8)), "/properties/A/Missing")
	f.Add([]byte(`{"definitions": {"T": {"type": "object", "properties": {"K": {"type": "string"}}}, "L": {"type": "array", "items": {"$ref": "#/definitions/T"}}}, "properties": {"A": {"anyOf": [{"$ref": "#/definitions/L"}, {"patternProperties": {"^x+$": {"$ref": "#/definitions/T"}}}]}}}`), "/properties/A/*/K")
	f.Add([]byte(`{"properties": {"A": {"properties": {"B": {"items": {"properties": {"C": {}}}}}}}}`), "/properties/A/properties/B/0/C")
	f.Fuzz(func(t *testing.T, data []byte, pointer string) {
		doc, err := decodeJSON(data)
		if err != nil {
			return
		}
		root, isMap := doc.(map[string]any)
		if !isMap || !strings.HasPrefix(pointer, "/properties/") || len(pointer) > 200 {
			return
		}
		c := &checker{root: root, res: &Result{}, regex: NewRegexBudget(time.Minute)}
		got := c.resolveProperty(pointer)
		segs := strings.Count(pointer, "/")
		if limit := (objects(root) + 1) * (segs + 1); c.visits > limit {
			t.Fatalf("%d visits for %d objects and %d segments", c.visits, objects(root), segs)
		}
		steps := 100_000
		want, ok := naiveResolve(c, pointer, &steps)
		if ok && c.regexErr == nil && got != want {
			t.Fatalf("memoised walk says %v, the plain walk %v", got, want)
		}
	})
}

// A schema file that is a FIFO (named on the command line, or in a catalog
// folder) is refused at once, not waited on.
func TestSchemaFileFIFO(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	var r Result
	within(t, 10*time.Second, func() { r = mustValidator(t).ValidateFile(filepath.Join(dir, "fifo.json")) })
	if r.Valid || len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, "not a regular file (a FIFO)") {
		t.Fatalf("valid=%v errors=%v", r.Valid, r.Errors)
	}
	var err error
	within(t, 10*time.Second, func() { _, err = LoadCatalog(dir) })
	if !errors.Is(err, ErrCatalog) || !strings.Contains(err.Error(), "not a regular file (a FIFO)") {
		t.Fatalf("LoadCatalog: %v", err)
	}
}
