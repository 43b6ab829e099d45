package paramschema

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/packager/cfn/internal/ynode"
	"go.yaml.in/yaml/v3"
)

// maxNodes is ynode.MaxNodes; tests lower it to keep the limit tests fast.
var maxNodes = ynode.MaxNodes

// Sentinel errors; every error of this package wraps one of them.
var (
	// ErrSchema: the ParameterSchema itself is malformed.
	ErrSchema = errcode.New("parameter_schema", "invalid ParameterSchema",
		"fix the module's ParameterSchema at the place shown (it is a JSON Schema)")
	// ErrViolation: a parameter value breaks its schema.
	ErrViolation = errcode.New("parameter_violation", "parameter value violates its schema",
		"give the module a property value its ParameterSchema allows")
	// ErrTooLarge: a schema or value (with its aliases and defaults
	// expanded) has more than ynode.MaxNodes nodes.
	ErrTooLarge = errcode.New("parameter_too_large", "value too large",
		"the value is too large for the ParameterSchema check")
)

// Limits on hostile schemas.
const (
	maxDepth      = 64
	maxPatternLen = 4096
)

// An Error is a schema violation or a malformed schema.
type Error struct {
	Path     string // parameter path, e.g. "Subnets[0].Type"; "" for a schema error outside any parameter
	Rule     string // the keyword involved, e.g. "Required"
	Msg      string // what is wrong
	Line     int    // 1-based line, 0 when unknown
	Column   int    // 1-based column, 0 when unknown
	InSchema bool   // Line and Column are in the ParameterSchema, not in the value
	kind     error  // ErrSchema or ErrViolation
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Rule != "" {
		fmt.Fprintf(&b, " (%s)", e.Rule)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, " at line %d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ", column %d", e.Column)
		}
		if e.InSchema && e.kind == ErrViolation {
			b.WriteString(" of the ParameterSchema")
		}
	}
	return b.String()
}

// Unwrap returns ErrSchema or ErrViolation.
func (e *Error) Unwrap() error { return e.kind }

// The schema types.
const (
	TypeString  = "String"
	TypeNumber  = "Number"
	TypeBoolean = "Boolean"
	TypeObject  = "Object"
	TypeArray   = "Array"
)

// A Schema is one compiled ParameterSchema entry.
type Schema struct {
	node         *yaml.Node
	typ          string
	required     []string
	requiredSelf bool
	minLength    *int
	maxLength    *int
	pattern      *regexp.Regexp
	enum         []*yaml.Node
	minimum      *float64
	maximum      *float64
	exclMinimum  *float64
	exclMaximum  *float64
	minItems     *int
	maxItems     *int
	items        *Schema
	props        []property
	def          *yaml.Node
}

type property struct {
	name   string
	schema *Schema
}

// Type returns the schema's Type keyword, or "".
func (s *Schema) Type() string { return s.typ }

// Default returns the schema's Default, or nil. Do not modify it.
func (s *Schema) Default() *yaml.Node { return s.def }

// A Section is a compiled ParameterSchema section: one schema per parameter.
type Section struct {
	names   []string
	schemas map[string]*Schema
}

// CompileSection compiles a module's ParameterSchema section, a mapping of
// parameter names to schemas. A nil node gives an empty section.
func CompileSection(section *yaml.Node) (*Section, error) {
	sec := &Section{schemas: map[string]*Schema{}}
	n := ynode.Resolve(section)
	if ynode.IsNull(n) {
		return sec, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, schemaErr("", "", n, "ParameterSchema must be an object of parameter names to schemas, got %s", ynode.KindName(n))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name := n.Content[i].Value
		if _, dup := sec.schemas[name]; dup {
			return nil, schemaErr(name, "", n.Content[i], "parameter listed twice")
		}
		s, err := compile(name, n.Content[i+1], 0)
		if err != nil {
			return nil, err
		}
		sec.names = append(sec.names, name)
		sec.schemas[name] = s
	}
	return sec, nil
}

// Names lists the section's parameters in source order.
func (sec *Section) Names() []string { return append([]string(nil), sec.names...) }

// Schema returns the schema of the named parameter, or nil.
func (sec *Section) Schema(name string) *Schema { return sec.schemas[name] }

// Validate checks the named parameter's value (nil when the module's user
// gave none) against its schema and returns the value with defaults applied;
// it returns nil when the value is absent and has no Default. A parameter
// without a schema is returned as it is.
func (sec *Section) Validate(name string, value *yaml.Node) (*yaml.Node, error) {
	s := sec.schemas[name]
	if s == nil {
		return value, nil
	}
	return s.Validate(name, value)
}

// Compile compiles one schema; name is the parameter it is for, used in
// error messages.
func Compile(name string, schema *yaml.Node) (*Schema, error) {
	return compile(name, schema, 0)
}

// Validate compiles schema and checks value against it, as
// Schema.Validate does.
func Validate(name string, schema, value *yaml.Node) (*yaml.Node, error) {
	s, err := compile(name, schema, 0)
	if err != nil {
		return nil, err
	}
	return s.Validate(name, value)
}

// Validate checks value (nil when absent) against s and returns a copy of it
// with defaults applied, or nil when it is absent and has no Default. path
// names the value in errors.
func (s *Schema) Validate(path string, value *yaml.Node) (*yaml.Node, error) {
	st := &state{budget: maxNodes}
	if err := st.spend(path, value); err != nil {
		return nil, err
	}
	return s.apply(st, path, ynode.Copy(ynode.Resolve(value)), false)
}

// state bounds the nodes one validation may create.
type state struct{ budget int }

func (st *state) spend(path string, n *yaml.Node) error {
	c, ok := ynode.Count(n, st.budget)
	if !ok {
		e := &Error{Path: path, Msg: fmt.Sprintf("more than %d nodes once aliases and defaults are expanded", maxNodes), kind: ErrTooLarge}
		if n = ynode.Resolve(n); n != nil {
			e.Line, e.Column = n.Line, n.Column
		}
		return e
	}
	st.budget -= c
	return nil
}

func schemaErr(path, rule string, at *yaml.Node, format string, args ...any) *Error {
	e := &Error{Path: path, Rule: rule, Msg: fmt.Sprintf(format, args...), InSchema: true, kind: ErrSchema}
	if at != nil {
		e.Line, e.Column = at.Line, at.Column
	}
	return e
}

func violation(path, rule string, at *yaml.Node, inSchema bool, format string, args ...any) *Error {
	e := &Error{Path: path, Rule: rule, Msg: fmt.Sprintf(format, args...), InSchema: inSchema, kind: ErrViolation}
	if at != nil {
		e.Line, e.Column = at.Line, at.Column
	}
	return e
}

var keywords = []string{"Type", "Required", "MinLength", "MaxLength", "Pattern", "Enum", "Minimum", "Maximum",
	"ExclusiveMinimum", "ExclusiveMaximum", "MinItems", "MaxItems", "Items", "Properties", "Default", "Description"}

func compile(path string, node *yaml.Node, depth int) (*Schema, error) {
	n := ynode.Resolve(node)
	if n == nil {
		return nil, schemaErr(path, "", node, "missing schema")
	}
	if depth == 0 {
		if err := (&state{budget: maxNodes}).spend(path, n); err != nil {
			return nil, err
		}
	}
	if depth > maxDepth {
		return nil, schemaErr(path, "", n, "schema nested deeper than %d levels", maxDepth)
	}
	if n.Kind != yaml.MappingNode || ynode.IsIntrinsic(n) {
		return nil, schemaErr(path, "", n, "a schema must be an object of keywords, got %s", ynode.KindName(n))
	}
	s := &Schema{node: n}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], ynode.Resolve(n.Content[i+1])
		kw := key.Value
		if seen[kw] {
			return nil, schemaErr(path, kw, key, "keyword given twice")
		}
		seen[kw] = true
		if val == nil {
			return nil, schemaErr(path, kw, key, "keyword without a value")
		}
		var err error
		switch kw {
		case "Type":
			switch val.Value {
			case TypeString, TypeNumber, TypeBoolean, TypeObject, TypeArray:
				if val.Kind == yaml.ScalarNode && val.ShortTag() == "!!str" {
					s.typ = val.Value
					break
				}
				fallthrough
			default:
				err = schemaErr(path, kw, val, "unknown type %q; use String, Number, Boolean, Object or Array", val.Value)
			}
		case "Required":
			err = s.compileRequired(path, val)
		case "MinLength":
			s.minLength, err = count(path, kw, val)
		case "MaxLength":
			s.maxLength, err = count(path, kw, val)
		case "MinItems":
			s.minItems, err = count(path, kw, val)
		case "MaxItems":
			s.maxItems, err = count(path, kw, val)
		case "Minimum":
			s.minimum, err = number(path, kw, val)
		case "Maximum":
			s.maximum, err = number(path, kw, val)
		case "ExclusiveMinimum":
			s.exclMinimum, err = number(path, kw, val)
		case "ExclusiveMaximum":
			s.exclMaximum, err = number(path, kw, val)
		case "Pattern":
			if val.Kind != yaml.ScalarNode || val.ShortTag() != "!!str" {
				err = schemaErr(path, kw, val, "Pattern must be a string, got %s", ynode.KindName(val))
			} else if len(val.Value) > maxPatternLen {
				err = schemaErr(path, kw, val, "Pattern longer than %d bytes", maxPatternLen)
			} else if s.pattern, err = regexp.Compile(val.Value); err != nil {
				err = schemaErr(path, kw, val, "Pattern is not a valid RE2 regular expression: %v", err)
			}
		case "Enum":
			if val.Kind != yaml.SequenceNode || ynode.IsIntrinsic(val) || len(val.Content) == 0 {
				err = schemaErr(path, kw, val, "Enum must be a non-empty list of values")
			} else {
				s.enum = val.Content
			}
		case "Items":
			s.items, err = compile(path+"[]", val, depth+1)
		case "Properties":
			err = s.compileProperties(path, val, depth)
		case "Default":
			s.def = val
		case "Description":
		default:
			err = schemaErr(path, "", key, "unknown keyword %q; known keywords: %s", kw, strings.Join(keywords, ", "))
		}
		if err != nil {
			return nil, err
		}
	}
	if s.def != nil && !ynode.IsNull(s.def) {
		if _, err := s.apply(&state{budget: maxNodes}, path, ynode.Copy(s.def), true); err != nil {
			var e *Error
			if errors.As(err, &e) && e.kind == ErrViolation {
				return nil, schemaErr(e.Path, "Default", s.def, "Default does not satisfy its schema: %s", e.Msg+" ("+e.Rule+")")
			}
			return nil, err
		}
	}
	return s, nil
}

func (s *Schema) compileRequired(path string, val *yaml.Node) error {
	if val.Kind == yaml.ScalarNode && val.ShortTag() == "!!bool" {
		return val.Decode(&s.requiredSelf)
	}
	if val.Kind != yaml.SequenceNode || ynode.IsIntrinsic(val) {
		return schemaErr(path, "Required", val, "Required must be a list of property names or a boolean, got %s", ynode.KindName(val))
	}
	for _, it := range val.Content {
		it = ynode.Resolve(it)
		if it == nil || it.Kind != yaml.ScalarNode || it.ShortTag() != "!!str" {
			return schemaErr(path, "Required", val, "Required must list property names as strings")
		}
		s.required = append(s.required, it.Value)
	}
	return nil
}

func (s *Schema) compileProperties(path string, val *yaml.Node, depth int) error {
	if val.Kind != yaml.MappingNode || ynode.IsIntrinsic(val) {
		return schemaErr(path, "Properties", val, "Properties must be an object of property names to schemas, got %s", ynode.KindName(val))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(val.Content); i += 2 {
		name := val.Content[i].Value
		if seen[name] {
			return schemaErr(path+"."+name, "Properties", val.Content[i], "property listed twice")
		}
		seen[name] = true
		ps, err := compile(path+"."+name, val.Content[i+1], depth+1)
		if err != nil {
			return err
		}
		s.props = append(s.props, property{name, ps})
	}
	return nil
}

func count(path, kw string, val *yaml.Node) (*int, error) {
	var v int
	if val.Kind != yaml.ScalarNode || val.ShortTag() != "!!int" || val.Decode(&v) != nil || v < 0 {
		return nil, schemaErr(path, kw, val, "%s must be a non-negative integer, got %q", kw, val.Value)
	}
	return &v, nil
}

func number(path, kw string, val *yaml.Node) (*float64, error) {
	f, ok := ynode.Number(val)
	if !ok {
		return nil, schemaErr(path, kw, val, "%s must be a number, got %s", kw, ynode.KindName(val))
	}
	return &f, nil
}

// decimal is what Number accepts in a string.
var decimal = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// numberOf returns v's numeric value: a number, or (when numericStrings) a
// string holding a decimal number.
func numberOf(v *yaml.Node, numericStrings bool) (float64, bool) {
	if f, ok := ynode.Number(v); ok {
		return f, true
	}
	if numericStrings && v.Kind == yaml.ScalarNode && v.ShortTag() == "!!str" && decimal.MatchString(v.Value) {
		f, err := strconv.ParseFloat(v.Value, 64)
		return f, err == nil
	}
	return 0, false
}

func boolOf(v *yaml.Node) (bool, bool) {
	if v.Kind != yaml.ScalarNode {
		return false, false
	}
	switch v.ShortTag() {
	case "!!bool":
		var b bool
		return b, v.Decode(&b) == nil
	case "!!str":
		switch strings.ToLower(v.Value) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

func isString(v *yaml.Node) bool {
	return v.Kind == yaml.ScalarNode && (v.ShortTag() == "!!str" || v.ShortTag() == "!!timestamp")
}

// apply validates v (a private copy, or nil) in place and returns it with
// defaults applied. fromSchema says v came from a Default, so positions are
// in the schema.
func (s *Schema) apply(st *state, path string, v *yaml.Node, fromSchema bool) (*yaml.Node, error) {
	if ynode.IsNull(v) {
		if s.def == nil || ynode.IsNull(s.def) {
			if s.requiredSelf {
				return nil, violation(path, "Required", s.node, true, "a value is required")
			}
			return v, nil
		}
		if err := st.spend(path, s.def); err != nil {
			return nil, err
		}
		v, fromSchema = ynode.Copy(s.def), true
	}
	if ynode.IsIntrinsic(v) {
		return v, nil // resolved only at deploy time: nothing to check
	}
	if err := s.checkType(path, v, fromSchema); err != nil {
		return nil, err
	}
	switch v.Kind {
	case yaml.ScalarNode:
		if err := s.checkScalar(path, v, fromSchema); err != nil {
			return nil, err
		}
	case yaml.SequenceNode:
		if err := s.checkList(st, path, v, fromSchema); err != nil {
			return nil, err
		}
	case yaml.MappingNode:
		if err := s.checkObject(st, path, v, fromSchema); err != nil {
			return nil, err
		}
	}
	if s.enum != nil && !s.inEnum(v) {
		return nil, violation(path, "Enum", v, fromSchema, "%s is not one of %s", show(v), showList(s.enum))
	}
	return v, nil
}

func (s *Schema) checkType(path string, v *yaml.Node, fromSchema bool) error {
	ok := true
	hint := ""
	switch s.typ {
	case "":
	case TypeString:
		ok = isString(v)
		if !ok && v.Kind == yaml.ScalarNode {
			hint = "; quote it to pass it as a string"
		}
	case TypeNumber:
		_, ok = numberOf(v, true)
	case TypeBoolean:
		_, ok = boolOf(v)
	case TypeObject:
		ok = v.Kind == yaml.MappingNode
	case TypeArray:
		ok = v.Kind == yaml.SequenceNode
	}
	if !ok {
		what := ynode.KindName(v)
		if v.Kind == yaml.ScalarNode {
			what += " " + show(v)
		}
		return violation(path, "Type", v, fromSchema, "expected a %s, got %s%s", s.typ, what, hint)
	}
	return nil
}

func (s *Schema) checkScalar(path string, v *yaml.Node, fromSchema bool) error {
	if isString(v) && s.typ != TypeNumber && s.typ != TypeBoolean {
		n := utf8.RuneCountInString(v.Value)
		if s.minLength != nil && n < *s.minLength {
			return violation(path, "MinLength", v, fromSchema, "%s is %s long, at least %d required", show(v), plural.Count(n, "character"), *s.minLength)
		}
		if s.maxLength != nil && n > *s.maxLength {
			return violation(path, "MaxLength", v, fromSchema, "%s is %s long, at most %d allowed", show(v), plural.Count(n, "character"), *s.maxLength)
		}
		if s.pattern != nil && !s.pattern.MatchString(v.Value) {
			return violation(path, "Pattern", v, fromSchema, "%s does not match the pattern %q", show(v), s.pattern.String())
		}
	}
	f, ok := numberOf(v, s.typ == TypeNumber)
	if !ok {
		return nil
	}
	num := strconv.FormatFloat(f, 'g', -1, 64)
	switch {
	case s.minimum != nil && f < *s.minimum:
		return violation(path, "Minimum", v, fromSchema, "%s is less than the minimum %s", num, fmtNum(*s.minimum))
	case s.maximum != nil && f > *s.maximum:
		return violation(path, "Maximum", v, fromSchema, "%s is greater than the maximum %s", num, fmtNum(*s.maximum))
	case s.exclMinimum != nil && f <= *s.exclMinimum:
		return violation(path, "ExclusiveMinimum", v, fromSchema, "%s must be greater than %s", num, fmtNum(*s.exclMinimum))
	case s.exclMaximum != nil && f >= *s.exclMaximum:
		return violation(path, "ExclusiveMaximum", v, fromSchema, "%s must be less than %s", num, fmtNum(*s.exclMaximum))
	}
	return nil
}

func (s *Schema) checkList(st *state, path string, v *yaml.Node, fromSchema bool) error {
	n := len(v.Content)
	if s.minItems != nil && n < *s.minItems {
		return violation(path, "MinItems", v, fromSchema, "list has %s, at least %d required", plural.Count(n, "item"), *s.minItems)
	}
	if s.maxItems != nil && n > *s.maxItems {
		return violation(path, "MaxItems", v, fromSchema, "list has %s, at most %d allowed", plural.Count(n, "item"), *s.maxItems)
	}
	if s.items == nil {
		return nil
	}
	for i, it := range v.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		if ynode.IsNull(it) {
			// A null item is a value, not an absent one: no default.
			if err := s.items.checkType(p, it, fromSchema); err != nil {
				return err
			}
			continue
		}
		out, err := s.items.apply(st, p, it, fromSchema)
		if err != nil {
			return err
		}
		v.Content[i] = out
	}
	return nil
}

func (s *Schema) checkObject(st *state, path string, v *yaml.Node, fromSchema bool) error {
	for _, p := range s.props {
		pp := path + "." + p.name
		i := index(v, p.name)
		if i < 0 {
			out, err := p.schema.apply(st, pp, nil, true)
			if err != nil {
				var e *Error
				if errors.As(err, &e) && e.kind == ErrViolation && e.Rule == "Required" && e.Path == pp {
					// Report a missing mandatory property where the object is.
					e.Line, e.Column, e.InSchema = v.Line, v.Column, fromSchema
					e.Msg = "required property is missing"
				}
				return err
			}
			if out != nil {
				key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: p.name, Line: out.Line, Column: out.Column}
				v.Content = append(v.Content, key, out)
			}
			continue
		}
		out, err := p.schema.apply(st, pp, v.Content[i+1], fromSchema)
		if err != nil {
			return err
		}
		if out == nil { // an explicit null without a default stays null
			continue
		}
		v.Content[i+1] = out
	}
	for _, name := range s.required {
		if i := index(v, name); i < 0 || ynode.IsNull(v.Content[i+1]) {
			return violation(path+"."+name, "Required", v, fromSchema, "required property is missing")
		}
	}
	return nil
}

func index(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

func (s *Schema) inEnum(v *yaml.Node) bool {
	cv := v
	switch s.typ {
	case TypeNumber:
		if f, ok := numberOf(v, true); ok {
			cv = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(f, 'g', -1, 64)}
		}
	case TypeBoolean:
		if b, ok := boolOf(v); ok {
			cv = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
		}
	}
	for _, e := range s.enum {
		if ynode.Equal(cv, e) {
			return true
		}
	}
	return false
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// show quotes a scalar for a message, shortened.
func show(v *yaml.Node) string {
	if v.Kind != yaml.ScalarNode {
		return ynode.KindName(v)
	}
	s := v.Value
	if len(s) > 64 {
		s = s[:61] + "..."
	}
	return strconv.Quote(s)
}

func showList(vals []*yaml.Node) string {
	parts := make([]string, 0, len(vals))
	for _, v := range vals {
		if v = ynode.Resolve(v); v != nil {
			parts = append(parts, show(v))
		}
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
