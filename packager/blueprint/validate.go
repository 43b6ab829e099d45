package blueprint

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cloud-assembly/assemble/packager/blueprint/subst"
	"go.yaml.in/yaml/v3"
)

var (
	customTypeRe   = regexp.MustCompile(`^[A-Za-z0-9_-]+(/[A-Za-z0-9_.-]+)+$`)
	resourceTypeRe = regexp.MustCompile(`^[A-Za-z0-9_-]+/[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)?$`)
	dataTypeRe     = regexp.MustCompile(`^[A-Za-z0-9_-]+(/[A-Za-z0-9_-]+)+$`)
)

var (
	variableTypes = []string{"string", "integer", "float", "boolean"}
	valueTypes    = []string{"string", "integer", "float", "boolean", "array", "object"}
	exportTypes   = valueTypes
	dsFieldTypes  = []string{"string", "integer", "float", "boolean", "array"}
	// filterOperators are the data source filter operators, in the
	// specification's order.
	filterOperators = []string{"=", "!=", "in", "not in", "has key", "not has key", "contains", "not contains", "starts with", "not starts with", "ends with", "not ends with"}
)

func typeOfName(name string) Type {
	switch name {
	case "string":
		return TString
	case "integer":
		return TInt
	case "float":
		return TFloat
	case "boolean":
		return TBool
	case "array":
		return TArray
	case "object":
		return TObject
	}
	return TString // custom variable types hold labels (strings)
}

// Variable is a variable definition.
type Variable struct {
	Name    string
	Type    string
	Default *yaml.Node
	Secret  bool
	key     *yaml.Node
	allowed []*yaml.Node
}

// Value is a value definition.
type Value struct {
	Name   string
	Type   string
	Secret bool
	Node   *yaml.Node // the value field
	key    *yaml.Node
	inter  *subst.Interpolated
}

type dataSource struct {
	name    string
	key     *yaml.Node
	exports map[string]string // export name -> type
}

type resource struct {
	name      string
	key       *yaml.Node
	def       *yaml.Node // the definition mapping
	typ       string
	hasEach   bool
	labels    map[string]string
	selector  map[string]string
	dependsOn []*yaml.Node
}

// Include is an include entry.
type Include struct {
	Name      string
	key       *yaml.Node
	Path      *yaml.Node
	Variables *yaml.Node
	Metadata  *yaml.Node
}

// site is one string holding substitutions, with where it sits.
type site struct {
	owner  string // graph node of the element holding it ("values.x", ...)
	node   *yaml.Node
	str    *subst.Interpolated
	inEach bool   // inside a resource with each (not the each field itself)
	field  string // "each", "condition", "value", ... for place rules
	want   Type   // the type a sole substitution must yield (0: any)
	what   string // names the place in type messages
	refs   []string
	bad    bool // resolving it found errors: it is not evaluated
}

type checker struct {
	bp    *Blueprint
	file  string
	src   []byte
	lines []string // c.src split at line breaks, made on first use
	runes map[int][]rune
	errs  *ErrorList
	known map[string]any // variable values known at validation time

	vars    map[string]*Variable
	values  map[string]*Value
	ds      map[string]*dataSource
	res     map[string]*resource
	inc     map[string]*Include
	sites   []*site
	edges   map[string][]edge
	order   []string // graph nodes in source order
	keyNode map[string]*yaml.Node

	ev           *evaluator
	siteOf       map[*yaml.Node]*site
	workReported bool // the evaluation work limit was reported
	json         int8 // isJSON: 0 not yet known, 1 YAML, 2 JSON
}

type edge struct {
	to  string
	why string
}

func (c *checker) errAt(n *yaml.Node, class error, format string, args ...any) {
	if c.full() {
		return
	}
	e := &Error{File: c.file, Err: class, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	*c.errs = append(*c.errs, e)
}

func (c *checker) errAtOffset(n *yaml.Node, off int, class error, format string, args ...any) {
	if c.full() {
		return
	}
	line, col := c.posOf(n, off)
	*c.errs = append(*c.errs, &Error{File: c.file, Line: line, Column: col, Err: class, Msg: fmt.Sprintf(format, args...)})
}

// MaxErrors bounds the errors one Load reports; the last one says the rest
// were left out.
const MaxErrors = 500

// full reports whether the error list is full, adding the note once.
func (c *checker) full() bool {
	switch n := len(*c.errs); {
	case n < MaxErrors-1:
		return false
	case n == MaxErrors-1:
		*c.errs = append(*c.errs, &Error{File: c.file, Err: ErrSchema, Msg: fmt.Sprintf("too many errors; only the first %d are shown", MaxErrors-1)})
	}
	return true
}

// posOf maps a byte offset in a scalar's value to a line and column in the
// file (best effort for folded and escaped scalars).
func (c *checker) posOf(n *yaml.Node, off int) (int, int) {
	v := n.Value
	if off > len(v) {
		off = len(v)
	}
	before := v[:off]
	switch n.Style {
	case yaml.LiteralStyle, yaml.FoldedStyle:
		line := n.Line + 1 + strings.Count(before, "\n")
		lineStart := strings.LastIndex(before, "\n") + 1
		indent := 0
		if lines := c.srcLines(); line-1 < len(lines) {
			l := lines[line-1]
			indent = len(l) - len(strings.TrimLeft(l, " "))
		}
		return line, indent + 1 + utf8.RuneCountInString(before[lineStart:])
	}
	if strings.Contains(before, "\n") {
		return n.Line, n.Column
	}
	if n.Style == yaml.DoubleQuotedStyle || n.Style == yaml.SingleQuotedStyle {
		if col, ok := c.quotedColumn(n, off); ok {
			return n.Line, col
		}
		return n.Line, n.Column + 1 + utf8.RuneCountInString(before)
	}
	return n.Line, n.Column + utf8.RuneCountInString(before)
}

// srcLines splits the source into lines once.
func (c *checker) srcLines() []string {
	if c.lines == nil {
		c.lines = strings.Split(string(c.src), "\n")
	}
	return c.lines
}

// quotedColumn maps a byte offset in a quoted scalar's value to its column
// in the source line, reading the escapes as written.
func (c *checker) quotedColumn(n *yaml.Node, off int) (int, bool) {
	lines := c.srcLines()
	if n.Line < 1 || n.Line > len(lines) {
		return 0, false
	}
	if c.runes == nil {
		c.runes = map[int][]rune{}
	}
	raw, ok := c.runes[n.Line]
	if !ok {
		raw = []rune(lines[n.Line-1])
		c.runes[n.Line] = raw
	}
	i := n.Column // the rune after the opening quote (Column is 1-based)
	if i > len(raw) {
		return 0, false
	}
	decoded := 0
	for decoded < off {
		if i >= len(raw) {
			return 0, false
		}
		r := raw[i]
		switch {
		case n.Style == yaml.SingleQuotedStyle && r == '\'' && i+1 < len(raw) && raw[i+1] == '\'':
			i += 2
			decoded++
		case n.Style == yaml.DoubleQuotedStyle && r == '\\' && i+1 < len(raw):
			width := map[rune]int{'x': 2, 'u': 4, 'U': 8}[raw[i+1]]
			if width > 0 && i+2+width <= len(raw) {
				v, err := strconv.ParseUint(string(raw[i+2:i+2+width]), 16, 32)
				if err != nil {
					return 0, false
				}
				decoded += utf8.RuneLen(rune(v))
				i += 2 + width
			} else {
				decoded++
				i += 2
			}
		default:
			decoded += utf8.RuneLen(r)
			i++
		}
	}
	return i + 1, decoded == off
}

// --- node helpers ---

func isNull(n *yaml.Node) bool { return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") }
func isStr(n *yaml.Node) bool  { return n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!str" }
func isScalar(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && !isNull(n)
}

func kindName(n *yaml.Node) string {
	switch {
	case n == nil || isNull(n):
		return "null"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!str":
		return "a string"
	case "!!int":
		return "an integer"
	case "!!float":
		return "a float"
	case "!!bool":
		return "a boolean"
	case "!!timestamp":
		return "a date"
	}
	return "a scalar"
}

type pair struct{ key, val *yaml.Node }

// pairs returns a mapping's entries in source order.
func pairs(n *yaml.Node) []pair {
	var out []pair
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, pair{n.Content[i], n.Content[i+1]})
	}
	return out
}

// fields checks a definition mapping: it must be a mapping, hold no unknown
// field and every required one. It returns the fields by name.
func (c *checker) fields(n *yaml.Node, what string, allowed, required []string) map[string]pair {
	if n == nil || n.Kind != yaml.MappingNode {
		c.errAt(n, ErrSchema, "%s must be a mapping, found %s", what, kindName(n))
		return nil
	}
	out := map[string]pair{}
	for _, kv := range pairs(n) {
		k := kv.key.Value
		if !slices.Contains(allowed, k) {
			c.errAt(kv.key, ErrSchema, "unknown field %q in %s; the fields are %s", k, what, quoteList(allowed))
			continue
		}
		out[k] = kv
	}
	for _, r := range required {
		if _, ok := out[r]; !ok {
			c.errAt(n, ErrSchema, "%s is missing the required field %q", what, r)
		}
	}
	return out
}

// str returns the value of a string field, reporting other kinds.
func (c *checker) str(f map[string]pair, name, what string) (string, *yaml.Node, bool) {
	kv, ok := f[name]
	if !ok {
		return "", nil, false
	}
	if !isStr(kv.val) {
		c.errAt(kv.val, ErrSchema, "%s.%s must be a string, found %s", what, name, kindName(kv.val))
		return "", kv.val, false
	}
	return kv.val.Value, kv.val, true
}

func (c *checker) boolField(f map[string]pair, name, what string) bool {
	kv, ok := f[name]
	if !ok {
		return false
	}
	if kv.val.Kind != yaml.ScalarNode || kv.val.Tag != "!!bool" {
		c.errAt(kv.val, ErrSchema, "%s.%s must be true or false, found %s", what, name, kindName(kv.val))
		return false
	}
	return kv.val.Value == "true"
}

// noSubs reports any substitution in n or below it.
func (c *checker) noSubs(n *yaml.Node, where string) {
	if n == nil {
		return
	}
	if n.Kind == yaml.ScalarNode {
		if i := strings.Index(n.Value, "${"); i >= 0 {
			c.errAtOffset(n, i, ErrSubstitutionNotAllowed, "substitutions are not allowed in %s; write a literal value", where)
		}
		return
	}
	for _, ch := range n.Content {
		c.noSubs(ch, where)
	}
}

// subs parses every string in n and below it, recording each one holding a
// substitution as a site.
func (c *checker) subs(n *yaml.Node, owner, field string, inEach bool) {
	if n == nil {
		return
	}
	if n.Kind == yaml.ScalarNode {
		c.subString(n, owner, field, inEach)
		return
	}
	if n.Kind == yaml.MappingNode {
		for _, kv := range pairs(n) {
			c.subs(kv.val, owner, field, inEach)
		}
		return
	}
	for _, ch := range n.Content {
		c.subs(ch, owner, field, inEach)
	}
}

func (c *checker) subString(n *yaml.Node, owner, field string, inEach bool) *site {
	if n.Tag != "!!str" || !strings.Contains(n.Value, "${") {
		return nil
	}
	in, err := subst.ParseString(n.Value)
	if err != nil {
		se := err.(*subst.SyntaxError)
		c.errAtOffset(n, se.Offset, ErrSubstitution, "%s", se.Msg)
		return nil
	}
	s := &site{owner: owner, node: n, str: in, inEach: inEach, field: field}
	c.sites = append(c.sites, s)
	if c.siteOf == nil {
		c.siteOf = map[*yaml.Node]*site{}
	}
	c.siteOf[n] = s
	return s
}

// --- the document walk ---

func (c *checker) checkDocument(root *yaml.Node) {
	c.checkKeysAndTags(root)
	f := c.fields(root, "the blueprint", []string{"version", "transform", "variables", "values", "datasources", "resources", "include", "exports", "metadata"}, []string{"version", "resources"})
	if f == nil {
		return
	}
	if kv, ok := f["version"]; ok {
		if kv.val.Kind != yaml.ScalarNode || kv.val.Value != Version {
			c.errAt(kv.val, ErrVersion, "version %q is not supported; use version: %s", kv.val.Value, Version)
		}
	}
	if kv, ok := f["transform"]; ok {
		c.checkTransform(kv.val)
	}
	c.section(f, "variables", c.checkVariable)
	c.section(f, "values", c.checkValue)
	c.section(f, "datasources", c.checkDataSource)
	// Resources and includes are named before any site is resolved.
	c.section(f, "resources", c.declareResource)
	c.section(f, "include", c.checkInclude)
	c.section(f, "resources", c.checkResource)
	c.section(f, "exports", c.checkExport)
	if kv, ok := f["metadata"]; ok {
		if kv.val.Kind != yaml.MappingNode {
			c.errAt(kv.val, ErrSchema, "metadata must be a mapping, found %s", kindName(kv.val))
		} else {
			c.subs(kv.val, "metadata", "metadata", false)
		}
	}
	if kv, ok := f["resources"]; ok && len(pairs(kv.val)) == 0 && kv.val.Kind != yaml.SequenceNode {
		c.errAt(kv.val, ErrSchema, "resources must define at least one resource")
	}
}

func (c *checker) section(f map[string]pair, name string, each func(key, val *yaml.Node)) {
	kv, ok := f[name]
	if !ok || isNull(kv.val) {
		return
	}
	if kv.val.Kind != yaml.MappingNode {
		c.errAt(kv.val, ErrSchema, "%s must be a mapping of names to definitions, found %s", name, kindName(kv.val))
		return
	}
	for _, e := range pairs(kv.val) {
		each(e.key, e.val)
	}
}

// checkKeysAndTags rejects substitutions in keys, duplicate keys, and YAML
// anchors, aliases and tags anywhere.
func (c *checker) checkKeysAndTags(n *yaml.Node) {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		c.errAt(n, ErrSyntax, "YAML anchors and aliases are not supported in blueprints; repeat the content or use a value")
		return
	}
	if n.Style&yaml.TaggedStyle != 0 {
		c.errAt(n, ErrSyntax, "YAML tags (%s) are not supported in blueprints; remove the tag", n.Tag)
	}
	if n.Kind == yaml.MappingNode {
		seen := map[string]bool{}
		for _, kv := range pairs(n) {
			if kv.key.Kind != yaml.ScalarNode {
				c.errAt(kv.key, ErrSchema, "mapping keys must be strings")
				continue
			}
			if i := strings.Index(kv.key.Value, "${"); i >= 0 {
				c.errAtOffset(kv.key, i, ErrSubstitutionNotAllowed, "substitutions are not allowed in keys; use a literal name")
			}
			if seen[kv.key.Value] {
				c.errAt(kv.key, ErrSchema, "duplicate key %q; each key may appear once", kv.key.Value)
			}
			seen[kv.key.Value] = true
		}
	}
	for _, ch := range n.Content {
		c.checkKeysAndTags(ch)
	}
}

func (c *checker) checkTransform(n *yaml.Node) {
	c.noSubs(n, "transform")
	switch {
	case isStr(n):
	case n.Kind == yaml.SequenceNode:
		for _, item := range n.Content {
			if !isStr(item) {
				c.errAt(item, ErrSchema, "transform list items must be strings, found %s", kindName(item))
			}
		}
	default:
		c.errAt(n, ErrSchema, "transform must be a string or a list of strings, found %s", kindName(n))
	}
}

func (c *checker) addNode(id string, key *yaml.Node) {
	if _, ok := c.keyNode[id]; !ok {
		c.order = append(c.order, id)
		c.keyNode[id] = key
	}
}

func (c *checker) checkVariable(key, val *yaml.Node) {
	what := fmt.Sprintf("variable %q", key.Value)
	c.noSubs(val, "variable definitions")
	f := c.fields(val, what, []string{"type", "description", "secret", "default", "allowedValues"}, []string{"type"})
	if f == nil {
		return
	}
	v := &Variable{Name: key.Value, key: key}
	c.vars[v.Name] = v
	c.bp.Variables = append(c.bp.Variables, v)
	typ, tn, ok := c.str(f, "type", what)
	if !ok {
		v.Type = "string"
		return
	}
	if typ == "bool" {
		// The reference implementation's fixtures write "bool"; it is read
		// as "boolean".
		typ = "boolean"
	}
	v.Type = typ
	if !slices.Contains(variableTypes, typ) && !customTypeRe.MatchString(typ) {
		c.errAt(tn, ErrSchema, "%s has type %q; use string, integer, float, boolean or a custom type {provider}/{type}", what, typ)
	}
	c.str(f, "description", what)
	v.Secret = c.boolField(f, "secret", what)
	if kv, ok := f["allowedValues"]; ok {
		switch {
		case typ == "boolean":
			c.errAt(kv.key, ErrSchema, "%s is a boolean: boolean variables do not support allowedValues", what)
		case kv.val.Kind != yaml.SequenceNode || len(kv.val.Content) == 0:
			c.errAt(kv.val, ErrSchema, "%s.allowedValues must be a non-empty list, found %s", what, kindName(kv.val))
		default:
			for _, a := range kv.val.Content {
				if !scalarHasType(a, typ) {
					c.errAt(a, ErrSchema, "%s.allowedValues holds %s %q; every allowed value must be of type %s", what, kindName(a), a.Value, typ)
				}
			}
			v.allowed = kv.val.Content
		}
	}
	if kv, ok := f["default"]; ok {
		d := kv.val
		if !scalarHasType(d, typ) {
			c.errAt(d, ErrSchema, "%s.default is %s; it must be of type %s", what, kindName(d), typ)
		} else if v.allowed != nil && !slices.ContainsFunc(v.allowed, func(a *yaml.Node) bool { return sameScalar(a, d, typ) }) {
			c.errAt(d, ErrSchema, "%s.default %q is not one of its allowedValues", what, d.Value)
		}
		v.Default = d
	}
}

// scalarHasType reports whether a YAML node is a literal of a variable type.
func scalarHasType(n *yaml.Node, typ string) bool {
	if n == nil || n.Kind != yaml.ScalarNode {
		return false
	}
	switch typ {
	case "integer":
		return n.Tag == "!!int"
	case "float":
		return n.Tag == "!!float" || n.Tag == "!!int"
	case "boolean":
		return n.Tag == "!!bool"
	default: // string and custom types
		return n.Tag == "!!str"
	}
}

func sameScalar(a, b *yaml.Node, typ string) bool {
	switch typ {
	case "integer", "float":
		x, err1 := strconv.ParseFloat(strings.ReplaceAll(a.Value, "_", ""), 64)
		y, err2 := strconv.ParseFloat(strings.ReplaceAll(b.Value, "_", ""), 64)
		return err1 == nil && err2 == nil && x == y
	}
	return a.Value == b.Value
}

// goHasType reports whether a Go value (from Options.Variables or an include)
// fits a variable type.
func goHasType(v any, typ string) bool {
	switch v.(type) {
	case string:
		return typ != "integer" && typ != "float" && typ != "boolean"
	case int64:
		return typ == "integer" || typ == "float"
	case float64:
		f := v.(float64)
		return typ == "float" || (typ == "integer" && f == math.Trunc(f))
	case bool:
		return typ == "boolean"
	}
	return false
}

func (c *checker) checkValue(key, val *yaml.Node) {
	what := fmt.Sprintf("value %q", key.Value)
	id := "values." + key.Value
	c.addNode(id, key)
	f := c.fields(val, what, []string{"type", "value", "description", "secret"}, []string{"type", "value"})
	v := &Value{Name: key.Value, key: key, Type: "string"}
	c.values[v.Name] = v
	c.bp.Values = append(c.bp.Values, v)
	if f == nil {
		return
	}
	if kv, ok := f["type"]; ok {
		c.noSubs(kv.val, "a value's type")
		if typ, tn, ok := c.str(f, "type", what); ok {
			if !slices.Contains(valueTypes, typ) {
				c.errAt(tn, ErrSchema, "%s has unsupported type %q; choose from string, integer, float, boolean, array and object", what, typ)
			} else {
				v.Type = typ
			}
		}
	}
	if kv, ok := f["description"]; ok {
		c.str(f, "description", what)
		c.subs(kv.val, id, "description", false)
	}
	v.Secret = c.boolField(f, "secret", what)
	kv, ok := f["value"]
	if !ok {
		return
	}
	v.Node = kv.val
	if kv.val.Kind != yaml.ScalarNode || isNull(kv.val) {
		c.errAt(kv.val, ErrSchema, "%s.value must be a string (objects and arrays come from a ${..} substitution), found %s", what, kindName(kv.val))
		return
	}
	s := c.subString(kv.val, id, "value", false)
	if s != nil {
		v.inter = s.str
		s.want, s.what = typeOfName(v.Type), what
		if s.str.Single() == nil && v.Type != "string" {
			c.errAt(kv.val, ErrType, "%s has type %s but its value mixes text and substitutions, which yields a string", what, v.Type)
		}
		return
	}
	// A literal value must parse as its type.
	lit := kv.val.Value
	okLit := true
	switch v.Type {
	case "integer":
		_, err := strconv.ParseInt(lit, 10, 64)
		okLit = err == nil
	case "float":
		_, err := strconv.ParseFloat(lit, 64)
		okLit = err == nil
	case "boolean":
		okLit = lit == "true" || lit == "false"
	case "array", "object":
		c.errAt(kv.val, ErrType, "%s has type %s; array and object values must come from a ${..} substitution", what, v.Type)
		return
	}
	if !okLit {
		c.errAt(kv.val, ErrType, "%s.value %q does not parse as %s", what, lit, v.Type)
	}
}

func (c *checker) checkDataSource(key, val *yaml.Node) {
	what := fmt.Sprintf("data source %q", key.Value)
	id := "datasources." + key.Value
	c.addNode(id, key)
	d := &dataSource{name: key.Value, key: key, exports: map[string]string{}}
	c.ds[d.name] = d
	f := c.fields(val, what, []string{"type", "metadata", "filter", "exports", "description"}, []string{"type", "filter", "exports"})
	if f == nil {
		return
	}
	if kv, ok := f["type"]; ok {
		c.noSubs(kv.val, "a data source's type")
		if typ, tn, ok := c.str(f, "type", what); ok && !dataTypeRe.MatchString(typ) {
			c.errAt(tn, ErrSchema, "%s has type %q; data source types are namespaced by provider, as in aws/vpc", what, typ)
		}
	}
	if kv, ok := f["description"]; ok {
		c.str(f, "description", what)
		c.subs(kv.val, id, "description", false)
	}
	if kv, ok := f["metadata"]; ok {
		mf := c.fields(kv.val, what+" metadata", []string{"displayName", "annotations", "custom"}, nil)
		if mf != nil {
			c.str(mf, "displayName", what+" metadata")
			if a, ok := mf["annotations"]; ok {
				c.scalarMap(a.val, what+" metadata.annotations")
			}
			c.subs(kv.val, id, "metadata", false)
		}
	}
	if kv, ok := f["exports"]; ok {
		d.exports = c.checkDataSourceExports(kv.val, what)
	}
	if kv, ok := f["filter"]; ok {
		c.checkFilter(kv.val, id, what)
	}
}

// checkDataSourceExports checks a data source's exports and returns their
// types by name.
func (c *checker) checkDataSourceExports(n *yaml.Node, what string) map[string]string {
	out := map[string]string{}
	c.noSubs(n, "data source exports")
	if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		c.errAt(n, ErrSchema, "%s.exports must be a non-empty mapping of field names to definitions, found %s", what, kindName(n))
	}
	for _, e := range pairs(n) {
		ew := fmt.Sprintf("%s export %q", what, e.key.Value)
		ef := c.fields(e.val, ew, []string{"type", "aliasFor", "description"}, []string{"type"})
		if ef == nil {
			continue
		}
		typ, tn, ok := c.str(ef, "type", ew)
		if ok && !slices.Contains(dsFieldTypes, typ) {
			c.errAt(tn, ErrSchema, "%s has unsupported field type %q; you can choose from string, integer, float, boolean and array", ew, typ)
		}
		c.str(ef, "aliasFor", ew)
		c.str(ef, "description", ew)
		out[e.key.Value] = typ
	}
	return out
}

func (c *checker) scalarMap(n *yaml.Node, what string) {
	if n.Kind != yaml.MappingNode {
		c.errAt(n, ErrSchema, "%s must be a mapping, found %s", what, kindName(n))
		return
	}
	for _, kv := range pairs(n) {
		if !isScalar(kv.val) {
			c.errAt(kv.val, ErrSchema, "%s.%s must be a string, integer, float or boolean, found %s", what, kv.key.Value, kindName(kv.val))
		}
	}
}

// isJSON reports whether the blueprint's source is a JSON document, whose
// unquoted scalars are numbers, booleans or null, never strings.
func (c *checker) isJSON() bool {
	if c.json == 0 {
		c.json = 1
		if json.Valid(c.src) {
			c.json = 2
		}
	}
	return c.json == 2
}

func (c *checker) stringMap(n *yaml.Node, what string) map[string]string {
	out := map[string]string{}
	if n.Kind != yaml.MappingNode {
		c.errAt(n, ErrSchema, "%s must be a mapping of strings, found %s", what, kindName(n))
		return out
	}
	for _, kv := range pairs(n) {
		if !isScalar(kv.val) || kv.val.Tag == "!!null" {
			c.errAt(kv.val, ErrSchema, "%s.%s must be a string, found %s", what, kv.key.Value, kindName(kv.val))
			continue
		}
		if c.isJSON() && kv.val.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
			// In JSON an unquoted value is a number, a boolean or null,
			// never a string (a YAML plain scalar is read as a string).
			c.errAt(kv.val, ErrSchema, "%s.%s must be a string, found %s; quote it (\"%s\")", what, kv.key.Value, kindName(kv.val), kv.val.Value)
			continue
		}
		out[kv.key.Value] = kv.val.Value
	}
	return out
}

func (c *checker) checkFilter(n *yaml.Node, id, what string) {
	fw := what + " filter"
	f := c.fields(n, fw, []string{"field", "operator", "search"}, []string{"field", "operator", "search"})
	if f == nil {
		return
	}
	if kv, ok := f["field"]; ok {
		c.noSubs(kv.val, "a data source filter field")
		if s, fn, ok := c.str(f, "field", fw); ok && s == "" {
			c.errAt(fn, ErrSchema, "%s.field must not be empty", fw)
		}
	}
	op := ""
	if kv, ok := f["operator"]; ok {
		c.noSubs(kv.val, "a data source filter operator")
		if s, on, ok := c.str(f, "operator", fw); ok {
			if !slices.Contains(filterOperators, s) {
				c.errAt(on, ErrSchema, "unsupported filter operator %q in %s; you can choose from %s", s, fw, quoteList(filterOperators))
			} else {
				op = s
			}
		}
	}
	kv, ok := f["search"]
	if !ok {
		return
	}
	search := kv.val
	// The search value's type: a list, a scalar of a literal type, or what a
	// sole substitution yields (checked once references resolve).
	var got Type
	switch {
	case search.Kind == yaml.SequenceNode:
		for _, item := range search.Content {
			if !isScalar(item) {
				c.errAt(item, ErrSchema, "%s.search list items must be strings, integers, floats or booleans, found %s", fw, kindName(item))
			}
		}
		got = TArray
		c.subs(search, id, "filter.search", false)
	case isScalar(search):
		got = scalarType(search)
		if s := c.subString(search, id, "filter.search", false); s != nil && s.str.Single() != nil {
			got = 0 // decided after resolution
			if op != "" {
				s.want, s.what = searchTypes(op), fmt.Sprintf("the search value of filter operator %q in %s", op, fw)
			}
		}
	default:
		c.errAt(search, ErrSchema, "%s.search must be a scalar or a list of scalars, found %s", fw, kindName(search))
		return
	}
	if got != 0 && op != "" {
		if want := searchTypes(op); got&want == 0 {
			c.errAt(search, ErrType, "filter operator %q in %s needs a search value of type %s, found %s", op, fw, want, got)
		}
	}
}

// searchTypes gives the search value types an operator accepts.
func searchTypes(op string) Type {
	prim := TString | TInt | TFloat | TBool
	switch strings.TrimPrefix(op, "not ") {
	case "=", "!=":
		return prim | TArray
	case "in":
		return TArray
	case "has key", "starts with", "ends with":
		return TString
	case "contains":
		return prim
	}
	return TAny
}

func scalarType(n *yaml.Node) Type {
	switch n.Tag {
	case "!!int":
		return TInt
	case "!!float":
		return TFloat
	case "!!bool":
		return TBool
	}
	return TString
}

func (c *checker) declareResource(key, val *yaml.Node) {
	r := &resource{name: key.Value, key: key, def: val}
	c.res[r.name] = r
	c.addNode("resources."+r.name, key)
	if val.Kind == yaml.MappingNode {
		for _, kv := range pairs(val) {
			if kv.key.Value == "each" && !isNull(kv.val) {
				r.hasEach = true
			}
		}
	}
}

func (c *checker) checkResource(key, val *yaml.Node) {
	what := fmt.Sprintf("resource %q", key.Value)
	id := "resources." + key.Value
	r := c.res[key.Value]
	f := c.fields(val, what, []string{"type", "description", "metadata", "condition", "each", "linkSelector", "spec", "dependsOn"}, []string{"type", "spec"})
	if f == nil {
		return
	}
	if kv, ok := f["type"]; ok {
		c.noSubs(kv.val, "a resource's type")
		if typ, tn, ok := c.str(f, "type", what); ok {
			r.typ = typ
			if !resourceTypeRe.MatchString(typ) {
				c.errAt(tn, ErrSchema, "%s has type %q; use {provider}/{service}/{resourceType} or {provider}/{resourceType}, as in aws/lambda/function", what, typ)
			}
		}
	}
	if kv, ok := f["description"]; ok {
		c.str(f, "description", what)
		c.subs(kv.val, id, "description", r.hasEach)
	}
	if kv, ok := f["metadata"]; ok {
		mw := what + " metadata"
		mf := c.fields(kv.val, mw, []string{"displayName", "annotations", "labels", "custom"}, nil)
		if mf != nil {
			if d, ok := mf["displayName"]; ok {
				c.str(mf, "displayName", mw)
				c.subs(d.val, id, "metadata", r.hasEach)
			}
			if a, ok := mf["annotations"]; ok {
				c.scalarMap(a.val, mw+".annotations")
				c.subs(a.val, id, "metadata", r.hasEach)
			}
			if l, ok := mf["labels"]; ok {
				c.noSubs(l.val, "resource labels")
				r.labels = c.stringMap(l.val, mw+".labels")
			}
			if cu, ok := mf["custom"]; ok {
				if cu.val.Kind != yaml.MappingNode {
					c.errAt(cu.val, ErrSchema, "%s.custom must be a mapping, found %s", mw, kindName(cu.val))
				}
				c.subs(cu.val, id, "metadata", r.hasEach)
			}
		}
	}
	if kv, ok := f["condition"]; ok {
		c.checkCondition(kv.val, id, what+" condition", r.hasEach, true)
	}
	if kv, ok := f["each"]; ok {
		s := (*site)(nil)
		if isStr(kv.val) {
			s = c.subString(kv.val, id, "each", false)
		}
		switch {
		case s == nil && isStr(kv.val) && strings.Contains(kv.val.Value, "${"):
			// syntax error already reported
		case s == nil || s.str.Single() == nil:
			c.errAt(kv.val, ErrEachType, "%s: each must be one ${..} substitution yielding an array, as in each: ${values.items}", what)
		default:
			s.want, s.what = TArray, fmt.Sprintf("`each` property in resource template %q", key.Value)
		}
	}
	if kv, ok := f["linkSelector"]; ok {
		c.noSubs(kv.val, "a resource's linkSelector")
		lf := c.fields(kv.val, what+" linkSelector", []string{"byLabel"}, []string{"byLabel"})
		if bl, ok := lf["byLabel"]; ok {
			r.selector = c.stringMap(bl.val, what+" linkSelector.byLabel")
		}
	}
	if kv, ok := f["spec"]; ok {
		if kv.val.Kind != yaml.MappingNode {
			c.errAt(kv.val, ErrSchema, "%s.spec must be a mapping, found %s", what, kindName(kv.val))
		}
		c.subs(kv.val, id, "spec", r.hasEach)
	}
	if kv, ok := f["dependsOn"]; ok {
		c.noSubs(kv.val, "dependsOn")
		items := []*yaml.Node{kv.val}
		if kv.val.Kind == yaml.SequenceNode {
			items = kv.val.Content
		}
		for _, it := range items {
			if !isStr(it) {
				c.errAt(it, ErrSchema, "%s.dependsOn must name resources (a string or a list of strings), found %s", what, kindName(it))
				continue
			}
			r.dependsOn = append(r.dependsOn, it)
		}
	}
}

// checkCondition checks a condition: a substitution string, or a mapping
// with exactly one of and, or, not.
func (c *checker) checkCondition(n *yaml.Node, id, what string, inEach, top bool) {
	if isStr(n) {
		s := c.subString(n, id, "condition", inEach)
		if s == nil && !strings.Contains(n.Value, "${") {
			c.errAt(n, ErrSchema, "%s %q must be a ${..} substitution yielding a boolean, or a mapping with and, or, not", what, n.Value)
		} else if s != nil && s.str.Single() == nil {
			c.errAt(n, ErrType, "%s mixes text and substitutions, which yields a string; use one ${..} yielding a boolean", what)
		} else if s != nil {
			s.want, s.what = TBool, what
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		c.errAt(n, ErrSchema, "%s must be a ${..} substitution or a mapping with and, or, not, found %s", what, kindName(n))
		return
	}
	var set []string
	for _, kv := range pairs(n) {
		switch kv.key.Value {
		case "and", "or":
			set = append(set, kv.key.Value)
			if kv.val.Kind != yaml.SequenceNode {
				c.errAt(kv.val, ErrSchema, "%s.%s must be a list of conditions, found %s", what, kv.key.Value, kindName(kv.val))
				continue
			}
			for _, item := range kv.val.Content {
				c.checkCondition(item, id, what, inEach, false)
			}
		case "not":
			set = append(set, "not")
			c.checkCondition(kv.val, id, what, inEach, false)
		default:
			c.errAt(kv.key, ErrSchema, "unknown field %q in %s; a condition has one of \"and\", \"or\" or \"not\"", kv.key.Value, what)
		}
	}
	if len(set) != 1 {
		c.errAt(n, ErrSchema, "an invalid resource condition has been provided in %s, only one of \"and\", \"or\" or \"not\" can be set (found %d)", what, len(set))
	}
}

func (c *checker) checkInclude(key, val *yaml.Node) {
	what := fmt.Sprintf("include %q", key.Value)
	id := "children." + key.Value
	c.addNode(id, key)
	in := &Include{Name: key.Value, key: key}
	c.inc[in.Name] = in
	c.bp.Includes = append(c.bp.Includes, in)
	f := c.fields(val, what, []string{"path", "variables", "metadata", "description"}, []string{"path"})
	if f == nil {
		return
	}
	if _, pn, ok := c.str(f, "path", what); ok {
		in.Path = pn
		if strings.TrimSpace(pn.Value) == "" {
			c.errAt(pn, ErrSchema, "%s.path must not be empty", what)
		}
	}
	if kv, ok := f["variables"]; ok {
		c.scalarMap(kv.val, what+" variables")
		in.Variables = kv.val
	}
	if kv, ok := f["metadata"]; ok {
		if kv.val.Kind != yaml.MappingNode {
			c.errAt(kv.val, ErrSchema, "%s.metadata must be a mapping, found %s", what, kindName(kv.val))
		}
		in.Metadata = kv.val
	}
	c.str(f, "description", what)
	c.subs(val, id, "include", false)
}

func (c *checker) checkExport(key, val *yaml.Node) {
	what := fmt.Sprintf("export %q", key.Value)
	f := c.fields(val, what, []string{"type", "field", "description"}, []string{"type", "field"})
	if f == nil {
		return
	}
	want := TAny
	if kv, ok := f["type"]; ok {
		c.noSubs(kv.val, "an export's type")
		if typ, tn, ok := c.str(f, "type", what); ok {
			if !slices.Contains(exportTypes, typ) {
				c.errAt(tn, ErrSchema, "%s has unsupported type %q; choose from string, integer, float, boolean, array and object", what, typ)
			} else {
				want = typeOfName(typ)
			}
		}
	}
	if kv, ok := f["description"]; ok {
		c.str(f, "description", what)
		c.subs(kv.val, "exports."+key.Value, "description", false)
	}
	kv, ok := f["field"]
	if !ok {
		return
	}
	c.noSubs(kv.val, "an export's field (write the reference without ${..})")
	if !isStr(kv.val) || strings.Contains(kv.val.Value, "${") {
		if !isStr(kv.val) {
			c.errAt(kv.val, ErrSchema, "%s.field must be a reference such as resources.x.state.y, found %s", what, kindName(kv.val))
		}
		return
	}
	node, err := subst.Parse(kv.val.Value)
	if err != nil {
		se := err.(*subst.SyntaxError)
		c.errAtOffset(kv.val, se.Offset, ErrSubstitution, "%s.field: %s", what, se.Msg)
		return
	}
	switch node.(type) {
	case *subst.Call, *subst.Literal, *subst.Elem, *subst.ElemIndex:
		c.errAt(kv.val, ErrSchema, "%s.field must reference a variable, value, resource, data source or child field; to compute, define a value and export it", what)
		return
	}
	s := &site{owner: "exports." + key.Value, node: kv.val, str: &subst.Interpolated{Parts: []subst.Part{{Sub: node}}}, field: "export", want: want, what: what + ".field"}
	c.sites = append(c.sites, s)
}
