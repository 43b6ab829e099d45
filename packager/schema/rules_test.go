package schema

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/internal/testenv/scaling"
)

// base returns a small valid resource type schema to mutate.
func base() map[string]any {
	return map[string]any{
		"typeName":    "Test::Rule::Thing",
		"description": "fixture for one rule",
		"definitions": map[string]any{
			"Inner": map[string]any{
				"type":                 "object",
				"additionalProperties": false,
				"properties":           map[string]any{"Key": map[string]any{"type": "string"}},
			},
		},
		"properties": map[string]any{
			"Name": map[string]any{"type": "string"},
			"Arn":  map[string]any{"type": "string"},
			"Obj":  map[string]any{"$ref": "#/definitions/Inner"},
			"List": map[string]any{"type": "array", "insertionOrder": false, "items": map[string]any{"$ref": "#/definitions/Inner"}},
			"Tags": map[string]any{"type": "array", "insertionOrder": false, "items": map[string]any{"type": "string"}},
		},
		"primaryIdentifier":    []any{"/properties/Name"},
		"createOnlyProperties": []any{"/properties/Name"},
		"readOnlyProperties":   []any{"/properties/Arn"},
		"additionalProperties": false,
	}
}

func mustValidator(t *testing.T) *Validator {
	t.Helper()
	v, err := DefaultValidator()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func validateDoc(t *testing.T, v *Validator, file string, doc map[string]any) Result {
	t.Helper()
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return v.Validate(file, b)
}

// has reports whether issues hold one at path whose message contains sub.
func has(issues []Issue, path, sub string) bool {
	for _, is := range issues {
		if is.Path == path && strings.Contains(is.Message, sub) {
			return true
		}
	}
	return false
}

func TestBaseIsValid(t *testing.T) {
	r := validateDoc(t, mustValidator(t), "", base())
	if !r.Valid || len(r.Errors) != 0 {
		t.Fatalf("base schema: %v", r.Errors)
	}
	if len(r.Warnings) != 0 {
		t.Fatalf("base schema warnings: %v", r.Warnings)
	}
}

// TestRules checks each rule beyond the meta-schema: which error, where.
func TestRules(t *testing.T) {
	v := mustValidator(t)
	tests := []struct {
		name   string
		mutate func(m map[string]any)
		path   string
		msg    string
	}{
		{"meta-schema: description required", func(m map[string]any) { delete(m, "description") }, "/", "missing property 'description'"},
		{"createOnly overlaps conditionalCreateOnly", func(m map[string]any) {
			m["conditionalCreateOnlyProperties"] = []any{"/properties/Name"}
		}, "/createOnlyProperties/0", "both createOnlyProperties and conditionalCreateOnlyProperties"},
		{"readOnly overlaps conditionalCreateOnly", func(m map[string]any) {
			m["conditionalCreateOnlyProperties"] = []any{"/properties/Arn"}
		}, "/readOnlyProperties/0", "both readOnlyProperties and conditionalCreateOnlyProperties"},
		{"arrayType on a string", func(m map[string]any) {
			m["properties"].(map[string]any)["Name"] = map[string]any{"type": "string", "arrayType": "Standard"}
		}, "/properties/Name/arrayType", "arrayType applies only to properties of type array"},
		{"tagProperty outside /properties", func(m map[string]any) {
			m["tagging"] = map[string]any{"taggable": true, "tagProperty": "/Tags"}
			m["handlers"] = handlers(true)
		}, "/tagging/tagProperty", `must be a JSON pointer starting with "/properties/"`},
		{"tagProperty names no property", func(m map[string]any) {
			m["tagging"] = map[string]any{"taggable": true, "tagProperty": "/properties/Labels"}
			m["handlers"] = handlers(true)
		}, "/tagging/tagProperty", "does not resolve to a property"},
		{"unresolvable local $ref", func(m map[string]any) {
			m["properties"].(map[string]any)["Obj"] = map[string]any{"$ref": "#/definitions/Missing"}
		}, "/properties/Obj/$ref", `unresolvable $ref "#/definitions/Missing"`},
		{"reserved remote", func(m map[string]any) {
			m["remote"] = map[string]any{"schema0": map[string]any{}}
		}, "/remote", "reserved for CloudFormation use"},
		{"schema above 60 KiB", func(m map[string]any) {
			m["description"] = strings.Repeat("x", MaxSchemaSize)
		}, "/", "above the 61440-byte limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := base()
			tt.mutate(m)
			r := validateDoc(t, v, "", m)
			if r.Valid {
				t.Fatalf("valid, want error %q at %s", tt.msg, tt.path)
			}
			if !has(r.Errors, tt.path, tt.msg) {
				t.Fatalf("errors %v, want %q at %s", r.Errors, tt.msg, tt.path)
			}
			if err := r.Err(); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Err() = %v, want ErrInvalid", err)
			}
		})
	}
}

func handlers(update bool) map[string]any {
	h := map[string]any{
		"create": map[string]any{"permissions": []any{"test:Create"}},
		"read":   map[string]any{"permissions": []any{"test:Read"}},
		"delete": map[string]any{"permissions": []any{"test:Delete"}},
	}
	if update {
		h["update"] = map[string]any{"permissions": []any{"test:Update"}}
	}
	return h
}

// TestPointers: pointers that name no property are warnings by default
// (as in the reference tools) and errors in strict mode; nested pointers
// through $ref, items and "*" resolve.
func TestPointers(t *testing.T) {
	v := mustValidator(t)
	for _, list := range []string{"primaryIdentifier", "readOnlyProperties", "writeOnlyProperties", "createOnlyProperties", "conditionalCreateOnlyProperties", "deprecatedProperties"} {
		t.Run(list, func(t *testing.T) {
			m := base()
			m[list] = []any{"/properties/Nope"}
			r := validateDoc(t, v, "", m)
			if !r.Valid || !has(r.Warnings, "/"+list+"/0", `"/properties/Nope" does not resolve`) {
				t.Fatalf("default: valid=%v errors=%v warnings=%v", r.Valid, r.Errors, r.Warnings)
			}
			r = validateDoc(t, v.Strict(), "", m)
			if r.Valid || !has(r.Errors, "/"+list+"/0", `"/properties/Nope" does not resolve`) {
				t.Fatalf("strict: valid=%v errors=%v", r.Valid, r.Errors)
			}
		})
	}
	t.Run("additionalIdentifiers", func(t *testing.T) {
		m := base()
		m["additionalIdentifiers"] = []any{[]any{"/properties/Arn"}, []any{"/properties/Gone"}}
		r := validateDoc(t, v.Strict(), "", m)
		if r.Valid || !has(r.Errors, "/additionalIdentifiers/1/0", "does not resolve") || len(r.Errors) != 1 {
			t.Fatalf("errors %v", r.Errors)
		}
	})
	t.Run("nested pointers resolve", func(t *testing.T) {
		m := base()
		m["writeOnlyProperties"] = []any{"/properties/Obj/Key", "/properties/List/*/Key", "/properties/List/0/Key", "/properties/Obj/properties/Key"}
		r := validateDoc(t, v.Strict(), "", m)
		if !r.Valid {
			t.Fatalf("errors %v", r.Errors)
		}
	})
	t.Run("malformed pointer", func(t *testing.T) {
		m := base()
		m["deprecatedProperties"] = []any{"/definitions/Inner/properties/Key"}
		r := validateDoc(t, v.Strict(), "", m)
		if !has(r.Errors, "/deprecatedProperties/0", `must be a JSON pointer starting with "/properties/"`) {
			t.Fatalf("errors %v", r.Errors)
		}
	})
	t.Run("tagProperty of a non-taggable type", func(t *testing.T) {
		m := base()
		m["tagging"] = map[string]any{"taggable": false, "tagProperty": "/properties/Labels"}
		if r := validateDoc(t, v, "", m); !r.Valid {
			t.Fatalf("errors %v", r.Errors)
		}
	})
}

func TestRelativeRefs(t *testing.T) {
	v := mustValidator(t)
	dir := t.TempDir()
	common := `{"definitions": {"Port": {"type": "integer"}}}`
	if err := os.WriteFile(filepath.Join(dir, "common.json"), []byte(common), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		ref, msg string
	}{
		{"common.json#/definitions/Port", ""},
		{"./common.json#/definitions/Port", ""},
		{"common.json#/definitions/Nope", `common.json has no location "/definitions/Nope"`},
		{"missing.json#/definitions/Port", "does not exist"},
		{"../outside.json#/x", "must name a file in the schema's folder"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			m := base()
			m["properties"].(map[string]any)["Port"] = map[string]any{"$ref": tt.ref}
			r := validateDoc(t, v, filepath.Join(dir, "schema.json"), m)
			if tt.msg == "" {
				if !r.Valid {
					t.Fatalf("errors %v", r.Errors)
				}
				return
			}
			if r.Valid || !has(r.Errors, "/properties/Port/$ref", tt.msg) {
				t.Fatalf("errors %v, want %q", r.Errors, tt.msg)
			}
		})
	}
}

func TestPatterns(t *testing.T) {
	v := mustValidator(t)
	tests := []struct {
		name, pattern string
		warn          bool
	}{
		{"lookahead", `^(?!aws:)[a-z]+$`, false},
		{"lookbehind", `(?<!-)$`, false},
		{"unicode escape", `^[\u0020-\u007E]*$`, false},
		{"surrogate pair range", `^[\u0020-\uD7FF\uE000-\uFFFD\uD800\uDC00-\uDBFF\uDFFF\t]*$`, false},
		{"nested quantifier", `^[a-z]*{1,10}$`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := base()
			m["properties"].(map[string]any)["Name"] = map[string]any{"type": "string", "pattern": tt.pattern}
			r := validateDoc(t, v, "", m)
			if !r.Valid {
				t.Fatalf("a pattern never makes a schema invalid; errors %v", r.Errors)
			}
			if got := has(r.Warnings, "/properties/Name/pattern", "could not compile regular expression"); got != tt.warn {
				t.Fatalf("warning=%v, want %v; warnings %v", got, tt.warn, r.Warnings)
			}
		})
	}
}

func TestSizeLimitExemptsAWS(t *testing.T) {
	m := base()
	m["typeName"] = "AWS::Test::Thing"
	m["description"] = strings.Repeat("x", MaxSchemaSize)
	r := validateDoc(t, mustValidator(t), "", m)
	if !r.Valid || !has(r.Warnings, "/", "AWS-published types are exempt") {
		t.Fatalf("valid=%v errors=%v warnings=%v", r.Valid, r.Errors, r.Warnings)
	}
}

func TestLintWarnings(t *testing.T) {
	m := base()
	m["properties"].(map[string]any)["lowerCase"] = map[string]any{"type": "string"}
	m["properties"].(map[string]any)["Unordered"] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	m["properties"].(map[string]any)["NextToken"] = map[string]any{"type": "string"}
	m["handlers"] = map[string]any{"read": map[string]any{"permissions": []any{"s3:*"}}}
	r := validateDoc(t, mustValidator(t), "", m)
	if !r.Valid {
		t.Fatalf("lint findings must not invalidate: %v", r.Errors)
	}
	for _, w := range []struct{ path, msg string }{
		{"/properties/lowerCase", "start with an upper-case letter"},
		{"/properties/Unordered", "without insertionOrder"},
		{"/properties", "LIST API inputs"},
		{"/handlers/read/permissions/0", "instead of the wildcard"},
	} {
		if !has(r.Warnings, w.path, w.msg) {
			t.Errorf("no warning %q at %s; warnings %v", w.msg, w.path, r.Warnings)
		}
	}
}

func TestParseErrors(t *testing.T) {
	v := mustValidator(t)
	tests := []struct{ in, msg string }{
		{"", "empty file"},
		{"{\n  \"typeName\": \"A::B::C\",\n  oops\n}", "line 3:"},
		{"{} {}", "unexpected data after the JSON document"},
	}
	for _, tt := range tests {
		r := v.Validate("x.json", []byte(tt.in))
		if r.Valid || len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, tt.msg) {
			t.Errorf("%q: %v, want %q", tt.in, r.Errors, tt.msg)
		}
	}
}

func TestValidateFileTooLarge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(p, make([]byte, MaxFileSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustValidator(t).ValidateFile(p)
	if r.Valid || !has(r.Errors, "", "file too large") {
		t.Fatalf("errors %v", r.Errors)
	}
}

// TestHookSchemas: a schema shaped like a hook (no properties, a
// typeConfiguration) is checked against the hook meta-schema.
func TestHookSchemas(t *testing.T) {
	v := mustValidator(t)
	hook := map[string]any{
		"typeName":    "Test::Hook::Check",
		"description": "a hook",
		"typeConfiguration": map[string]any{
			"properties":           map[string]any{"Level": map[string]any{"type": "string"}},
			"additionalProperties": false,
		},
		"handlers": map[string]any{
			"preCreate": map[string]any{"targetNames": []any{"AWS::S3::Bucket"}, "permissions": []any{"s3:*"}},
		},
		"additionalProperties": false,
	}
	r := validateDoc(t, v, "", hook)
	if !r.Valid || !has(r.Warnings, "/handlers/preCreate/permissions/0", "instead of the wildcard") {
		t.Fatalf("valid=%v errors=%v warnings=%v", r.Valid, r.Errors, r.Warnings)
	}
	delete(hook["typeConfiguration"].(map[string]any), "additionalProperties")
	r = validateDoc(t, v, "", hook)
	if r.Valid || !has(r.Errors, "/typeConfiguration", "missing property 'additionalProperties'") {
		t.Fatalf("errors %v", r.Errors)
	}
}

// TestMatchECMATimeout: a pattern that backtracks catastrophically counts as
// no match once its budget has really elapsed, and is not retried forever.
func TestMatchECMATimeout(t *testing.T) {
	re, err := compileECMA(`^(a+)+$`)
	if err != nil {
		t.Fatal(err)
	}
	re.MatchTimeout = 50 * time.Millisecond
	evil := strings.Repeat("a", 40) + "!"
	if matchECMA(re, evil) {
		t.Fatal("a timed-out match counted as a match")
	}
	// One attempt, not retried: matchECMA takes about as long as one
	// MatchString that times out (a retry would take twice as long).
	scaling.AtMost(t, "one timed-out attempt, then matchECMA", 1.7, func() { re.MatchString(evil) }, func() { matchECMA(re, evil) })
	if !matchECMA(re, "aaa") {
		t.Fatal("a plain match failed")
	}
}

// TestBeyondSpecRules: the checks cloudformation-resource-schema makes and
// neither the specification nor cloudformation-cli does are warnings, and
// errors in strict mode (issue 19 item 16).
func TestBeyondSpecRules(t *testing.T) {
	v := mustValidator(t)
	tests := []struct {
		name   string
		mutate func(m map[string]any)
		path   string
		msg    string
	}{
		{"tagUpdatable without update handler", func(m map[string]any) {
			m["tagging"] = map[string]any{"taggable": true, "tagUpdatable": true, "tagProperty": "/properties/Tags"}
			m["handlers"] = handlers(false)
		}, "/tagging/tagUpdatable", "no update handler"},
		{"taggable and tagging both present", func(m map[string]any) {
			m["taggable"] = true
			m["tagging"] = map[string]any{"taggable": false}
		}, "/taggable", "remove taggable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := base()
			tt.mutate(m)
			r := validateDoc(t, v, "", m)
			if !r.Valid || !has(r.Warnings, tt.path, tt.msg) {
				t.Fatalf("default: valid=%v errors=%v warnings=%v, want valid with warning %q at %s", r.Valid, r.Errors, r.Warnings, tt.msg, tt.path)
			}
			r = validateDoc(t, v.Strict(), "", m)
			if r.Valid || !has(r.Errors, tt.path, tt.msg) {
				t.Fatalf("strict: valid=%v errors=%v, want error %q at %s", r.Valid, r.Errors, tt.msg, tt.path)
			}
			if err := r.Err(); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Err() = %v, want ErrInvalid", err)
			}
		})
	}
}
