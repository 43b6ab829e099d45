package cfn

import (
	"bytes"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/internal/jsontext"
)

// emitter writes a (shortened) node tree as block-style YAML with an indent
// of two, the layout yaml.v3 uses, without keeping the whole document's
// events in memory as yaml.v3's emitter does.
type emitter struct {
	b bytes.Buffer
}

func (e *emitter) indent(n int) {
	for i := 0; i < n; i++ {
		e.b.WriteByte(' ')
	}
}

// shortForm returns the short-form tag and the node to write under it for
// a long-form intrinsic ({Ref: X} gives "!Ref" and X), or "" and n.
func shortForm(n *yaml.Node) (string, *yaml.Node) {
	k, v, ok := single(n)
	if !ok {
		return "", n
	}
	tag, ok := shortForms[k]
	if !ok {
		return "", n
	}
	if k == "Fn::GetAtt" && v.Kind == yaml.SequenceNode && len(v.Content) == 2 && isStr(v.Content[0]) && isStr(v.Content[1]) && v.Content[0].Tag == tagStr && v.Content[1].Tag == tagStr && !strings.Contains(v.Content[0].Value, ".") {
		if _, _, br := bracket(v.Content[0].Value); br && v.Content[1].Value == "" {
			return tag, &yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: v.Content[0].Value}
		}
		if v.Content[1].Value != "" {
			return tag, &yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: v.Content[0].Value + "." + v.Content[1].Value}
		}
	}
	if v.Kind == yaml.ScalarNode && (v.Tag != tagStr || k == "Fn::GetAtt") {
		// keep {Fn::Base64: 123}: a tag would make it a string; keep
		// {Fn::GetAtt: A.B}: !GetAtt A.B reads back as [A, B]
		return "", n
	}
	if t, _ := shortForm(v); t != "" {
		return "", n // a node holds one tag: keep Fn::Base64: !Join [...]
	}
	return tag, v
}

func emptyCollection(n *yaml.Node) string {
	if len(n.Content) == 0 {
		if n.Kind == yaml.MappingNode {
			return "{}"
		}
		if n.Kind == yaml.SequenceNode {
			return "[]"
		}
	}
	return ""
}

// value writes n after a "key:" or "- " already on the line, at the given
// indentation of the enclosing block.
func (e *emitter) value(n *yaml.Node, ind int, inSeq bool) {
	tag, n := shortForm(n)
	if n.Kind == yaml.ScalarNode {
		e.b.WriteByte(' ')
		if tag != "" {
			e.b.WriteString(tag)
			e.b.WriteByte(' ')
		}
		e.scalar(n, ind+2)
		e.b.WriteByte('\n')
		return
	}
	if s := emptyCollection(n); s != "" {
		e.b.WriteByte(' ')
		if tag != "" {
			e.b.WriteString(tag)
			e.b.WriteByte(' ')
		}
		e.b.WriteString(s)
		e.b.WriteByte('\n')
		return
	}
	if tag != "" {
		e.b.WriteByte(' ')
		e.b.WriteString(tag)
	}
	e.b.WriteByte('\n')
	e.block(n, ind+2)
}

// block writes a non-empty mapping or sequence, each entry on its own line
// at indentation ind.
func (e *emitter) block(n *yaml.Node, ind int) {
	_, n = shortForm(n)
	e.entries(n, ind)
}

// entries writes a non-empty mapping or sequence as it is, each entry on
// its own line at indentation ind (block writes an intrinsic's argument).
func (e *emitter) entries(n *yaml.Node, ind int) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			e.indent(ind)
			e.key(n.Content[i])
			e.value(n.Content[i+1], ind, false)
		}
		return
	}
	for _, x := range n.Content {
		e.indent(ind)
		e.item(x, ind)
	}
}

// item writes a sequence item; "- " is written here.
func (e *emitter) item(x *yaml.Node, ind int) {
	e.b.WriteString("-")
	tag, _ := shortForm(x)
	if x.Kind == yaml.ScalarNode || emptyCollection(x) != "" || tag != "" {
		e.value(x, ind, true)
		return
	}
	e.b.WriteByte(' ')
	if x.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(x.Content); i += 2 {
			if i > 0 {
				e.indent(ind + 2)
			}
			e.key(x.Content[i])
			e.value(x.Content[i+1], ind+2, false)
		}
		return
	}
	for i, y := range x.Content {
		if i > 0 {
			e.indent(ind + 2)
		}
		e.item(y, ind+2)
	}
}

func (e *emitter) key(k *yaml.Node) {
	if k.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 && plainSafe(k.Value) {
		e.b.WriteString(k.Value)
	} else {
		e.b.Write(doubleQuote(k.Value))
	}
	e.b.WriteByte(':')
}

// scalar writes a scalar value; ind is the indentation of a block scalar's
// lines.
func (e *emitter) scalar(n *yaml.Node, ind int) {
	v := n.Value
	str := n.Tag == tagStr || n.Tag == ""
	if !str {
		if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 || n.Tag == tagNull && v == "" {
			if n.Tag == tagNull {
				e.b.WriteString("null")
				return
			}
		}
		if plainSafeTyped(v) {
			e.b.WriteString(v)
			return
		}
		e.b.WriteString(n.Tag + " ")
		e.b.Write(doubleQuote(v))
		return
	}
	if strings.Contains(v, "\n") && literalSafe(v) {
		e.literal(v, ind)
		return
	}
	switch {
	case n.Style&yaml.SingleQuotedStyle != 0 && !strings.ContainsAny(v, "\n\r\t") && printable(v):
		e.b.WriteByte('\'')
		e.b.WriteString(strings.ReplaceAll(v, "'", "''"))
		e.b.WriteByte('\'')
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 && plainSafe(v):
		e.b.WriteString(v)
	default:
		e.b.Write(doubleQuote(v))
	}
}

// literal writes a block scalar (|, |-, |+).
func (e *emitter) literal(v string, ind int) {
	body := strings.TrimRight(v, "\n")
	trail := len(v) - len(body)
	e.b.WriteByte('|')
	switch {
	case trail == 0:
		e.b.WriteByte('-')
	case trail > 1:
		e.b.WriteByte('+')
	}
	lines := strings.Split(body, "\n")
	for _, l := range lines {
		e.b.WriteByte('\n')
		if l != "" {
			e.indent(ind)
			e.b.WriteString(l)
		}
	}
	for i := 1; i < trail; i++ {
		e.b.WriteByte('\n')
	}
}

// literalSafe reports whether v can be written as a block scalar.
func literalSafe(v string) bool {
	if v == "" || v[0] == ' ' || v[0] == '\n' || !printable(v) || strings.Contains(v, "\r") {
		return false
	}
	for _, l := range strings.Split(v, "\n") {
		if strings.HasSuffix(l, " ") || strings.HasSuffix(l, "\t") {
			return false
		}
	}
	return true
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r == 0xfeff || r == '\u2028' || r == '\u2029' || r >= 0x80 && r < 0xa0 {
			return false
		}
	}
	return true
}

func doubleQuote(s string) []byte {
	b, _ := jsontext.Marshal(s) // a Go string always encodes
	return b
}

// plainSafeTyped reports whether a non-string scalar's text can be written
// plain (it came from a plain scalar of that type).
func plainSafeTyped(v string) bool {
	return v != "" && !strings.ContainsAny(v, "\n\r\t:#,[]{}&*!|>'\"%@`") && v[0] != ' ' && v[len(v)-1] != ' ' && printable(v)
}

// plainSafe reports whether string s reads back as the same string when
// written plain, under both YAML 1.1 and 1.2 rules.
func plainSafe(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' || !printable(s) {
		return false
	}
	if strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@`=~<") {
		return false
	}
	if strings.ContainsAny(s, "\n\r\t") || strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return false
	}
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null":
		return false
	}
	return !numberLike(s)
}

// numberLike reports whether s could read as a number, a timestamp or a
// YAML 1.1 sexagesimal, infinity or NaN.
func numberLike(s string) bool {
	t := strings.TrimLeft(s, "+-")
	if t == "" {
		return true
	}
	if t[0] == '.' { // .5, .inf, .nan
		l := strings.ToLower(t)
		return l == ".inf" || l == ".nan" || len(t) > 1 && t[1] >= '0' && t[1] <= '9'
	}
	if t[0] < '0' || t[0] > '9' {
		return false
	}
	for _, r := range t {
		if !(r >= '0' && r <= '9' || strings.ContainsRune("._:eExXoObBabcdefABCDEF+-TtZz ", r)) {
			return false
		}
	}
	return true
}
