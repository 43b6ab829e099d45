package registry

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"

	"go.yaml.in/yaml/v3"
)

// Schema returns the module schema for the fragment, exactly as
// cloudformation-cli's generator writes schema.json: the same keys in the
// same order, 4-space indentation, non-ASCII escaped, and a final newline.
// The fragment must pass Validate and typeName must be a module type name.
func (f *Fragment) Schema(typeName string, limits Limits) ([]byte, error) {
	if err := CheckTypeName(typeName); err != nil {
		return nil, err
	}
	if err := f.Validate(limits); err != nil {
		return nil, err
	}
	props := &omap{}
	if _, params := f.section("Parameters"); params != nil {
		pp := &omap{}
		for _, p := range pairs(params) {
			props := &omap{}
			props.set("Type", (&omap{}).set("type", "string"))
			required := []any{"Type"}
			entry := &omap{}
			entry.set("type", "object")
			entry.set("properties", props)
			entry.set("required", nil) // placed here, filled below
			if _, d := lookup(p[1], "Description"); d != nil && !isNull(d) {
				dv, err := checkedValue(d)
				if err != nil {
					return nil, fmt.Errorf("%s: parameter %s: %w", f.File, p[0].Value, err)
				}
				entry.set("description", dv)
				props.set("Description", (&omap{}).set("type", "string"))
				required = append(required, "Description")
			}
			entry.set("required", required)
			pp.set(p[0].Value, entry)
		}
		props.set("Parameters", (&omap{}).set("type", "object").set("properties", pp))
	}
	_, res := f.section("Resources")
	rp := &omap{}
	for _, p := range pairs(res) {
		_, t := lookup(p[1], "Type")
		tv, err := checkedValue(t)
		if err != nil {
			return nil, fmt.Errorf("%s: resource %s: %w", f.File, p[0].Value, err)
		}
		tp := &omap{}
		tp.set("Type", (&omap{}).set("type", "string").set("const", tv))
		tp.set("Properties", (&omap{}).set("type", "object"))
		rp.set(p[0].Value, (&omap{}).set("type", "object").set("properties", tp))
	}
	props.set("Resources", (&omap{}).set("properties", rp).set("type", "object").set("additionalProperties", false))

	schema := &omap{}
	schema.set("typeName", typeName)
	schema.set("description", "Schema for Module Fragment of type "+typeName)
	schema.set("properties", props)
	schema.set("additionalProperties", true)

	var b bytes.Buffer
	encode(&b, schema, 0)
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// omap is a JSON object that keeps insertion order; setting an existing
// key replaces its value in place, as a Python dict does.
type omap struct {
	keys []string
	vals []any
}

func (m *omap) set(k string, v any) *omap {
	for i, key := range m.keys {
		if key == k {
			m.vals[i] = v
			return m
		}
	}
	m.keys = append(m.keys, k)
	m.vals = append(m.vals, v)
	return m
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// maxValueNodes bounds the nodes one converted value may expand to, so
// that YAML aliases cannot blow a small fragment up (a "billion laughs").
const maxValueNodes = 100_000

// errTooLarge reports a value whose aliases expand beyond maxValueNodes.
var errTooLarge = fmt.Errorf("%w: a value expands to more than %d nodes through YAML aliases", ErrInvalidFragment, maxValueNodes)

// checkedValue converts n, or fails if it expands beyond maxValueNodes.
func checkedValue(n *yaml.Node) (any, error) {
	budget := maxValueNodes
	v := value(n, &budget)
	if budget < 0 {
		return nil, errTooLarge
	}
	return v, nil
}

// value converts a YAML node to a JSON value as cfn's YAML loader does:
// short-form intrinsics (!Ref, !Sub, ...) become their long form. Each node
// visited spends one unit of budget; at zero it stops expanding.
func value(n *yaml.Node, budget *int) any {
	if n == nil {
		return nil
	}
	if *budget--; *budget < 0 {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		return value(n.Alias, budget)
	}
	if tag := n.Tag; strings.HasPrefix(tag, "!") && !strings.HasPrefix(tag, "!!") {
		name := tag[1:]
		plain := *n
		plain.Tag = ""
		if n.Kind == yaml.ScalarNode {
			plain.Tag = "!!str"
		}
		v := value(&plain, budget)
		switch name {
		case "Ref", "Condition":
			return (&omap{}).set(name, v)
		case "GetAtt":
			if s, ok := v.(string); ok {
				parts := strings.SplitN(s, ".", 2)
				arr := make([]any, len(parts))
				for i, p := range parts {
					arr[i] = p
				}
				v = arr
			}
		}
		return (&omap{}).set("Fn::"+name, v)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			return value(n.Content[0], budget)
		}
		return nil
	case yaml.MappingNode:
		m := &omap{}
		for _, p := range pairs(n) {
			m.set(p[0].Value, value(p[1], budget))
		}
		return m
	case yaml.SequenceNode:
		arr := make([]any, len(n.Content))
		for i, e := range n.Content {
			arr[i] = value(e, budget)
		}
		return arr
	}
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return i
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil {
			return f
		}
	}
	return n.Value
}

// encode writes v as Python's json.dumps(v, indent=4) does.
func encode(b *bytes.Buffer, v any, level int) {
	switch t := v.(type) {
	case *omap:
		if len(t.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, k := range t.keys {
			if i > 0 {
				b.WriteString(",\n")
			}
			indent(b, level+1)
			quote(b, k)
			b.WriteString(": ")
			encode(b, t.vals[i], level+1)
		}
		b.WriteByte('\n')
		indent(b, level)
		b.WriteByte('}')
	case []any:
		if len(t) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range t {
			if i > 0 {
				b.WriteString(",\n")
			}
			indent(b, level+1)
			encode(b, e, level+1)
		}
		b.WriteByte('\n')
		indent(b, level)
		b.WriteByte(']')
	case []string:
		arr := make([]any, len(t))
		for i, s := range t {
			arr[i] = s
		}
		encode(b, arr, level)
	case string:
		quote(b, t)
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	case int64:
		b.WriteString(strconv.FormatInt(t, 10))
	case float64:
		b.WriteString(pyFloat(t))
	default:
		quote(b, fmt.Sprint(t))
	}
}

func indent(b *bytes.Buffer, level int) {
	for i := 0; i < level; i++ {
		b.WriteString("    ")
	}
}

// quote writes s as a JSON string with Python's ensure_ascii escaping.
func quote(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r >= ' ' && r <= '~':
				b.WriteRune(r)
			case r > 0xFFFF:
				hi, lo := utf16.EncodeRune(r)
				fmt.Fprintf(b, `\u%04x\u%04x`, hi, lo)
			default:
				fmt.Fprintf(b, `\u%04x`, r)
			}
		}
	}
	b.WriteByte('"')
}

// pyFloat formats f as Python's float repr does.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	i := strings.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if exp < -4 || exp >= 16 {
		mant, x := e[:i], e[i+1:]
		if len(x) == 2 { // e+5 -> e+05
			x = x[:1] + "0" + x[1:]
		}
		return mant + "e" + x
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
