package schema

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 15: "a replacementStrategy is not valid for a mutable resource that
// does not need replacement during an update". Every combination of an
// update handler, createOnlyProperties, conditionalCreateOnlyProperties and
// an AWS namespace: an error exactly for a mutable resource with nothing to
// replace, a warning instead for AWS-published types.
func TestReplacementStrategy(t *testing.T) {
	v := mustValidator(t)
	for i := range 16 {
		update, createOnly, condOnly, aws := i&1 != 0, i&2 != 0, i&4 != 0, i&8 != 0
		t.Run(fmt.Sprintf("update=%v,createOnly=%v,conditional=%v,aws=%v", update, createOnly, condOnly, aws), func(t *testing.T) {
			m := base()
			delete(m, "createOnlyProperties")
			m["primaryIdentifier"] = []any{"/properties/Arn"}
			m["handlers"] = handlers(update)
			m["replacementStrategy"] = "delete_then_create"
			if createOnly {
				m["createOnlyProperties"] = []any{"/properties/Name"}
			}
			if condOnly {
				m["conditionalCreateOnlyProperties"] = []any{"/properties/Obj"}
			}
			if aws {
				m["typeName"] = "AWS::Test::Thing"
			}
			breaks := update && !createOnly && !condOnly
			r := validateDoc(t, v, "", m)
			if r.Valid == (breaks && !aws) {
				t.Fatalf("valid=%v; errors %v", r.Valid, r.Errors)
			}
			if breaks && !aws && !has(r.Errors, "/replacementStrategy", "not valid for a mutable resource that does not need replacement") {
				t.Fatalf("errors %v", r.Errors)
			}
			if has(r.Warnings, "/replacementStrategy", "AWS-published types are exempt") != (breaks && aws) {
				t.Fatalf("warnings %v", r.Warnings)
			}
			// Without the strategy every variant is valid: the rule is the
			// strategy's alone.
			delete(m, "replacementStrategy")
			if r := validateDoc(t, v, "", m); !r.Valid {
				t.Fatalf("without replacementStrategy: %v", r.Errors)
			}
		})
	}
}

// Issue 15: propertyTransform values are strings, whatever the key.
func TestPropertyTransform(t *testing.T) {
	v := mustValidator(t)
	tests := []struct {
		name   string
		pt     map[string]any
		valid  bool
		path   string
		errMsg string
		warn   string // a warning at path, an error with Strict
	}{
		{name: "string under a pointer", pt: map[string]any{"/properties/Name": "$lowercase(Name)"}, valid: true},
		{name: "nested pointer through $ref", pt: map[string]any{"/properties/Obj/Key": "$trim(Key)"}, valid: true},
		{name: "number under a pointer", pt: map[string]any{"/properties/Name": 5}, path: "/propertyTransform/~1properties~1Name", errMsg: "want string"},
		{name: "object under a pointer", pt: map[string]any{"/properties/Name": map[string]any{}}, path: "/propertyTransform/~1properties~1Name", errMsg: "want string"},
		{name: "number under another key", pt: map[string]any{"Name": 5}, path: "/propertyTransform/Name", errMsg: "found a number"},
		{name: "key without the leading slash", pt: map[string]any{"properties/Name": "$x"}, valid: true, path: "/propertyTransform/properties~1Name", warn: `must be a JSON pointer starting with "/properties/"`},
		{name: "pointer to no property", pt: map[string]any{"/properties/Nope": "$x"}, valid: true, path: "/propertyTransform/~1properties~1Nope", warn: "does not resolve to a property"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := base()
			m["propertyTransform"] = tt.pt
			r := validateDoc(t, v, "", m)
			if r.Valid != tt.valid {
				t.Fatalf("valid=%v, want %v; errors %v", r.Valid, tt.valid, r.Errors)
			}
			if tt.errMsg != "" && !has(r.Errors, tt.path, tt.errMsg) {
				t.Fatalf("errors %v, want %q at %s", r.Errors, tt.errMsg, tt.path)
			}
			if tt.warn != "" {
				if !has(r.Warnings, tt.path, tt.warn) {
					t.Fatalf("warnings %v, want %q at %s", r.Warnings, tt.warn, tt.path)
				}
				if rs := validateDoc(t, v.Strict(), "", m); rs.Valid || !has(rs.Errors, tt.path, tt.warn) {
					t.Fatalf("strict: valid=%v errors %v, want %q at %s", rs.Valid, rs.Errors, tt.warn, tt.path)
				}
			}
		})
	}
}

// The rule, not the cases: a propertyTransform of generated keys and
// values is valid exactly when every value is a string.
func TestPropertyTransformProperty(t *testing.T) {
	v := mustValidator(t)
	keys := []string{"/properties/Name", "/properties/Arn", "/properties/Obj/Key", "properties/Name", "Name", "/properties/List/*/Key"}
	vals := []any{"$x", "", 1, 2.5, true, nil, []any{"$x"}, map[string]any{"a": "b"}}
	rng := rand.New(rand.NewPCG(15, 15))
	for i := range 300 {
		pt := map[string]any{}
		allStrings := true
		for range 1 + rng.IntN(4) {
			val := vals[rng.IntN(len(vals))]
			pt[keys[rng.IntN(len(keys))]] = val
		}
		for _, val := range pt {
			if _, ok := val.(string); !ok {
				allStrings = false
			}
		}
		m := base()
		m["propertyTransform"] = pt
		if r := validateDoc(t, v, "", m); r.Valid != allStrings {
			t.Fatalf("case %d %v: valid=%v, want %v; errors %v", i, pt, r.Valid, allStrings, r.Errors)
		}
	}
}

// The hand-written fixtures in fixtures/resource-schemas give the verdicts
// their index.tsv lists.
func TestFixtureSchemas(t *testing.T) {
	dir := filepath.Join("..", "..", "fixtures", "resource-schemas")
	f, err := os.Open(filepath.Join(dir, "index.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v := mustValidator(t)
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	n := 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) != 4 {
			t.Fatalf("index.tsv: %q has %d columns, want 4", sc.Text(), len(cols))
		}
		n++
		t.Run(cols[0], func(t *testing.T) {
			r := v.ValidateFile(filepath.Join(dir, cols[0]))
			if got := map[bool]string{true: "valid", false: "invalid"}[r.Valid]; got != cols[1] {
				t.Fatalf("%s, index says %s; errors %v", got, cols[1], r.Errors)
			}
			if cols[1] == "invalid" && !has(r.Errors, cols[2], cols[3]) {
				t.Fatalf("errors %v, want %q at %s", r.Errors, cols[3], cols[2])
			}
		})
	}
	if n == 0 {
		t.Fatal("no fixtures listed")
	}
}

// The specification: "it is not valid to use both properties and
// patternProperties together in the same shape". The meta-schema says so
// with a bare "not"; the error names the rule, wherever the shape is.
func TestPropertiesAndPatternProperties(t *testing.T) {
	v := mustValidator(t)
	both := func() map[string]any {
		return map[string]any{
			"type":                 "object",
			"properties":           map[string]any{"A": map[string]any{"type": "string"}},
			"patternProperties":    map[string]any{"^b": map[string]any{"type": "string"}},
			"additionalProperties": false,
		}
	}
	m := base()
	m["properties"].(map[string]any)["Both"] = both()
	m["definitions"].(map[string]any)["Deep"] = map[string]any{"type": "object", "additionalProperties": false, "properties": map[string]any{"In": both()}}
	r := validateDoc(t, v, "", m)
	for _, path := range []string{"/properties/Both", "/definitions/Deep/properties/In"} {
		if !has(r.Errors, path, "properties and patternProperties can not be used together") {
			t.Errorf("no error at %s naming the rule: %v", path, r.Errors)
		}
	}
}
