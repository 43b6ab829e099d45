package paramschema

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/packager/cfn/internal/ynode"
	"github.com/cloud-assembly/assemble/packager/cfn/internal/ynodetest"
	"go.yaml.in/yaml/v3"
)

var (
	parse = ynodetest.Parse
	dump  = ynodetest.Dump
)

func TestValidateOK(t *testing.T) {
	tests := []struct {
		name, schema, value, want string
	}{
		{"string", `{Type: String, MinLength: 2, MaxLength: 3}`, `abc`, `abc`},
		{"string unicode length", `{Type: String, MaxLength: 2}`, `"é€"`, `"é€"`},
		{"date is a string", `{Type: String}`, `2024-01-01`, `2024-01-01`},
		{"pattern unanchored", `{Type: String, Pattern: "b+"}`, `abbbc`, `abbbc`},
		{"number", `{Type: Number, Minimum: 1, Maximum: 10}`, `10`, `10`},
		{"numeric string", `{Type: Number, Minimum: 1, Maximum: 10}`, `"5"`, `"5"`},
		{"float exclusive", `{Type: Number, ExclusiveMinimum: 0, ExclusiveMaximum: 1}`, `0.5`, `0.5`},
		{"boolean", `{Type: Boolean}`, `false`, `false`},
		{"boolean string", `{Type: Boolean}`, `"True"`, `"True"`},
		{"enum number by value", `{Type: Number, Enum: [1, 2]}`, `"2.0"`, `"2.0"`},
		{"enum boolean string", `{Type: Boolean, Enum: [true]}`, `"true"`, `"true"`},
		{"enum object", `{Enum: [{a: 1}, {b: 2}]}`, `{b: 2}`, `{b: 2}`},
		{"array", `{Type: Array, MinItems: 1, MaxItems: 2, Items: {Type: String}}`, `[a, b]`, `[a, b]`},
		{"absent without default", `{Type: String}`, ``, `<nil>`},
		{"absent takes default", `{Type: String, Default: x}`, ``, `x`},
		{"null takes default", `{Type: String, Default: x}`, `~`, `x`},
		{"object defaults appended in schema order", `{Type: Object, Properties: {a: {Default: 1}, b: {Type: String}, c: {Default: 3}}}`,
			`{b: x}`, "b: x\na: 1\nc: 3"},
		{"defaults recurse into a default", `{Type: Object, Properties: {S: {Type: Object, Default: {}, Properties: {Theme: {Default: Light}}}}}`,
			`{}`, "S:\n    Theme: Light"},
		{"defaults in list items", `{Type: Array, Items: {Type: Object, Properties: {T: {Default: Private}}}}`,
			`[{A: 1}, {A: 2, T: Public}]`, "- A: 1\n  T: Private\n- A: 2\n  T: Public"},
		{"required satisfied by default", `{Type: Object, Required: [a], Properties: {a: {Default: 1}}}`, `{}`, `a: 1`},
		{"unresolved value skipped", `{Type: Number, Minimum: 5}`, `!Ref Count`, `!Ref Count`},
		{"unresolved long form skipped", `{Type: Object, Required: [a]}`, `{Ref: Config}`, `Ref: Config`},
		{"unresolved inside checked around", `{Type: Array, Items: {Type: Object, Required: [Key, Value], Properties: {Value: {Type: String}}}}`,
			`[{Key: a, Value: !Ref Env}]`, `- Key: a
  Value: !Ref Env`},
		{"extra properties allowed", `{Type: Object, Properties: {a: {Type: String}}}`, `{a: x, b: 2}`, `{a: x, b: 2}`},
		{"required true satisfied", `{Type: String, Required: true}`, `x`, `x`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var value *yaml.Node
			if tt.value != "" {
				value = parse(t, tt.value)
			}
			got, err := Validate("P", parse(t, tt.schema), value)
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			var want *yaml.Node
			if tt.want != "<nil>" {
				want = parse(t, tt.want)
			}
			if !ynode.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("got %s, want %s", dump(t, got), tt.want)
			}
		})
	}
}

func TestValidateDoesNotModifyInput(t *testing.T) {
	value := parse(t, `{a: 1}`)
	got, err := Validate("P", parse(t, `{Properties: {b: {Default: 2}}}`), value)
	if err != nil {
		t.Fatal(err)
	}
	if len(value.Content) != 2 || len(got.Content) != 4 {
		t.Errorf("input %s, output %s: the input must stay as it was", dump(t, value), dump(t, got))
	}
}

func TestViolations(t *testing.T) {
	tests := []struct {
		name, schema, value string
		path, rule, msg     string
	}{
		{"type string", `{Type: String}`, `5`, "P", "Type", `expected a String, got a number "5"; quote it`},
		{"type number", `{Type: Number}`, `not-a-number`, "P", "Type", `expected a Number, got a string "not-a-number"`},
		{"number words rejected", `{Type: Number}`, `Infinity`, "P", "Type", "expected a Number"},
		{"type boolean", `{Type: Boolean}`, `yes`, "P", "Type", "expected a Boolean"},
		{"type object", `{Type: Object}`, `[a]`, "P", "Type", "expected a Object, got a list"},
		{"type array", `{Type: Array}`, `{a: 1}`, "P", "Type", "expected a Array, got an object"},
		{"min length", `{MinLength: 3}`, `ab`, "P", "MinLength", "at least 3"},
		{"max length", `{MaxLength: 1}`, `ab`, "P", "MaxLength", "at most 1"},
		{"pattern", `{Pattern: "^[a-z]+$"}`, `aB`, "P", "Pattern", `does not match the pattern "^[a-z]+$"`},
		{"enum", `{Enum: [Light, Dark]}`, `Blue`, "P", "Enum", `"Blue" is not one of ["Light", "Dark"]`},
		{"minimum", `{Type: Number, Minimum: 1}`, `0`, "P", "Minimum", "less than the minimum 1"},
		{"maximum", `{Type: Number, Maximum: 10}`, `"11"`, "P", "Maximum", "greater than the maximum 10"},
		{"exclusive minimum", `{ExclusiveMinimum: 1}`, `1`, "P", "ExclusiveMinimum", "greater than 1"},
		{"exclusive maximum", `{ExclusiveMaximum: 1}`, `1.0`, "P", "ExclusiveMaximum", "less than 1"},
		{"min items", `{MinItems: 1}`, `[]`, "P", "MinItems", "0 items, at least 1"},
		{"max items", `{MaxItems: 1}`, `[a, b]`, "P", "MaxItems", "2 items, at most 1"},
		{"one item", `{MinItems: 2}`, `[a]`, "P", "MinItems", "list has 1 item, at least 2"},
		{"one character", `{MinLength: 2}`, `x`, "P", "MinLength", `"x" is 1 character long, at least 2`},
		{"item path", `{Items: {Type: String}}`, `[a, 5]`, "P[1]", "Type", "expected a String"},
		{"required property path", `{Type: Array, Items: {Type: Object, Required: [CidrBlock, Type]}}`, "- CidrBlock: x\n- CidrBlock: y",
			"P[0].Type", "Required", "required property is missing"},
		{"required self property", `{Properties: {a: {Required: true}}}`, `{b: 1}`, "P.a", "Required", "required property is missing"},
		{"required self absent", `{Required: true}`, ``, "P", "Required", "a value is required"},
		{"nested property path", `{Properties: {a: {Properties: {b: {Type: Number}}}}}`, `{a: {b: x}}`, "P.a.b", "Type", "expected a Number"},
		{"null item is not absent", `{Items: {Type: String, Default: x}}`, `[~]`, "P[0]", "Type", "expected a String, got null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var value *yaml.Node
			if tt.value != "" {
				value = parse(t, tt.value)
			}
			_, err := Validate("P", parse(t, tt.schema), value)
			var e *Error
			if !errors.Is(err, ErrViolation) || !errors.As(err, &e) {
				t.Fatalf("err = %v, want a violation", err)
			}
			if e.Path != tt.path || e.Rule != tt.rule {
				t.Errorf("path %q rule %q, want %q %q (%v)", e.Path, e.Rule, tt.path, tt.rule, err)
			}
			if !strings.Contains(err.Error(), tt.msg) || !strings.Contains(err.Error(), " at line ") {
				t.Errorf("err = %q, want it to contain %q and a line", err, tt.msg)
			}
		})
	}
}

func TestViolationPosition(t *testing.T) {
	value := parse(t, "Subnets:\n  - CidrBlock: 10.0.0.0/24\n    AvailabilityZone: a\n  - CidrBlock: x\n")
	schema := parse(t, "Type: Array\nItems:\n  Type: Object\n  Required: [CidrBlock, Type]\n")
	_, err := Validate("Subnets", schema, ynode.Get(value, "Subnets"))
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v", err)
	}
	if e.Line != 2 || e.Column != 5 || e.InSchema {
		t.Errorf("position %d:%d (in schema %v), want 2:5 in the value", e.Line, e.Column, e.InSchema)
	}
	if want := "Subnets[0].Type: required property is missing (Required) at line 2, column 5"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	// A violation in a default points into the schema.
	_, err = Validate("P", parse(t, "Type: Object\nProperties:\n  a:\n    Type: Array\n    MinItems: 1\n"), parse(t, `{a: []}`))
	if !errors.As(err, &e) || e.InSchema || e.Line != 1 {
		t.Errorf("err = %v: want a violation at line 1 of the value", err)
	}
}

func TestSchemaErrors(t *testing.T) {
	tests := []struct {
		name, schema, msg string
		line              int
	}{
		{"unknown type", `{Type: Map}`, `unknown type "Map"`, 1},
		{"unknown keyword", "Type: String\nMinLenght: 3\n", `unknown keyword "MinLenght"`, 2},
		{"not an object", `[Type, String]`, "a schema must be an object", 1},
		{"bad count", `{MinLength: -1}`, "non-negative integer", 1},
		{"count not integer", `{MaxItems: two}`, "non-negative integer", 1},
		{"bad number", `{Minimum: low}`, "Minimum must be a number", 1},
		{"bad pattern", `{Pattern: "(?<=a)b"}`, "not a valid RE2", 1},
		{"pattern not string", `{Pattern: [a]}`, "Pattern must be a string", 1},
		{"empty enum", `{Enum: []}`, "non-empty list", 1},
		{"bad required", `{Required: yes-please}`, "Required must be a list", 1},
		{"bad properties", `{Properties: [a]}`, "Properties must be an object", 1},
		{"bad nested", "Items:\n  Properties:\n    a: {Type: Strin}\n", `unknown type "Strin"`, 3},
		{"default breaks schema", "Type: String\nEnum: [a, b]\nDefault: c\n", "Default does not satisfy its schema", 3},
		{"nested default breaks schema", "Properties:\n  n: {Type: Number, Default: x}\n", "Default does not satisfy", 2},
		{"keyword twice", "Type: String\nType: Number\n", "keyword given twice", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile("P", parse(t, tt.schema))
			var e *Error
			if !errors.Is(err, ErrSchema) || !errors.As(err, &e) {
				t.Fatalf("err = %v, want a schema error", err)
			}
			if !strings.Contains(err.Error(), tt.msg) || e.Line != tt.line {
				t.Errorf("err = %q (line %d), want %q at line %d", err, e.Line, tt.msg, tt.line)
			}
		})
	}
}

func TestSection(t *testing.T) {
	sec, err := CompileSection(parse(t, "B: {Type: String}\nA: {Type: Number, Default: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sec.Names(), ","); got != "B,A" {
		t.Errorf("Names = %s, want source order B,A", got)
	}
	if v, err := sec.Validate("A", nil); err != nil || v.Value != "1" {
		t.Errorf("Validate(A, nil) = %v, %v; want the default 1", v, err)
	}
	free := parse(t, "[x]")
	if v, err := sec.Validate("Unschemed", free); err != nil || v != free {
		t.Errorf("a parameter without schema must pass unchanged")
	}
	if _, err := CompileSection(parse(t, "[a]")); !errors.Is(err, ErrSchema) {
		t.Errorf("CompileSection(list) = %v, want ErrSchema", err)
	}
	if sec, err := CompileSection(nil); err != nil || len(sec.Names()) != 0 {
		t.Errorf("CompileSection(nil) = %v, %v", sec, err)
	}
}

// corpusCase validates the Properties a peer-suite template passes to its
// module against the module's ParameterSchema.
func corpusCase(t *testing.T, template, module string) (map[string]*yaml.Node, error) {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "..", "shared", "corpus", "modules", "aws-cli")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("peer corpus not present:", err)
	}
	read := func(name string) *yaml.Node {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return parse(t, string(b))
	}
	tmpl, mod := read(template), read(module)
	mods := ynode.Get(tmpl, "Modules")
	props := ynode.Get(mods.Content[1], "Properties")
	sec, err := CompileSection(ynode.Get(mod, "ParameterSchema"))
	if err != nil {
		t.Fatalf("ParameterSchema of %s: %v", module, err)
	}
	out := map[string]*yaml.Node{}
	for _, name := range sec.Names() {
		v, err := sec.Validate(name, ynode.Get(props, name))
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

func TestCorpusParameterSchema(t *testing.T) {
	got, err := corpusCase(t, "parameter-schema-template.yaml", "parameter-schema-module.yaml")
	if err != nil {
		t.Fatalf("valid properties rejected: %v", err)
	}
	vpc := got["VpcConfig"]
	if v := ynode.Get(vpc, "EnableDnsSupport"); v == nil || v.Value != "true" {
		t.Errorf("VpcConfig.EnableDnsSupport = %v, want true", dump(t, v))
	}
	tags := ynode.Get(vpc, "Tags")
	if tags == nil || len(tags.Content) != 2 || ynode.Get(tags.Content[0], "Value").Tag != "!Ref" {
		t.Errorf("Tags = %s, want both tags with the !Ref Environment kept", dump(t, tags))
	}
	if n := len(got["Subnets"].Content); n != 2 {
		t.Errorf("Subnets has %d items, want 2", n)
	}
}

func TestCorpusParameterSchemaInvalid(t *testing.T) {
	_, err := corpusCase(t, "parameter-schema-invalid-template.yaml", "parameter-schema-module.yaml")
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrViolation) {
		t.Fatalf("err = %v, want a violation", err)
	}
	// EnableDnsSupport: "true" is a Boolean the CloudFormation way, and
	// 10.0.0.0/8 matches the module's pattern; the missing Type is the error.
	if e.Path != "Subnets[0].Type" || e.Rule != "Required" || e.Line != 17 {
		t.Errorf("err = %v; want Subnets[0].Type Required at line 17", err)
	}
}

func TestCorpusInvalidParameterSchema(t *testing.T) {
	_, err := corpusCase(t, "invalid-parameter-schema-template.yaml", "invalid-parameter-schema-module.yaml")
	if !errors.Is(err, ErrViolation) || !strings.Contains(err.Error(), "Username") || !strings.Contains(err.Error(), "at line 5") {
		t.Fatalf("err = %v, want a violation naming Username at line 5", err)
	}
}

func TestCorpusInvalidParameterType(t *testing.T) {
	_, err := corpusCase(t, "invalid-parameter-type-template.yaml", "invalid-parameter-type-module.yaml")
	if !errors.Is(err, ErrViolation) || !strings.Contains(err.Error(), "Number") || !strings.Contains(err.Error(), "at line 5") {
		t.Fatalf("err = %v, want a Number violation at line 5", err)
	}
}

func TestTooLarge(t *testing.T) {
	defer func(n int) { maxNodes = n }(maxNodes)
	maxNodes = 20000
	// Five levels of ten aliases stand for 10^5 nodes.
	src := "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
	prev := "a"
	for _, l := range []string{"b", "c", "d", "e"} {
		src += l + ": &" + l + " [" + strings.Repeat("*"+prev+",", 9) + "*" + prev + "]\n"
		prev = l
	}
	_, err := Validate("P", parse(t, "{Type: Object}"), parse(t, src))
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("value: err = %v, want ErrTooLarge", err)
	}
	// A default copied into every item of a list counts too.
	big := "Items:\n  Properties:\n    p:\n      Default: &d [" + strings.Repeat("x,", 199) + "x]\n"
	value := "[" + strings.Repeat("{},", 199) + "{}]"
	if _, err := Validate("P", parse(t, big), parse(t, value)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("defaults: err = %v, want ErrTooLarge", err)
	}
}
