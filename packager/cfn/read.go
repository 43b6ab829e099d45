package cfn

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unsafe"

	yaml "go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/internal/yamlpos"
	"github.com/cloud-assembly/assemble/packager/cfn/source"
)

// Limits on untrusted input.
const (
	// MaxFileBytes is the largest template or module file read: the
	// parser's limit and the loader's (source.DefaultMaxFileSize) are one.
	MaxFileBytes = source.DefaultMaxFileSize
	// maxNodeBytes bounds the memory one file's nodes may take once aliases
	// are expanded (a few aliases can stand for an exponential number of
	// nodes): each node costs nodeCost bytes plus its value.
	maxNodeBytes = 48 << 20
	// nodeCost is what one normalized node takes: the yaml.Node and its
	// pointer in its parent's Content.
	nodeCost = int64(unsafe.Sizeof(yaml.Node{})) + 8
)

// Template is a parsed template or module file.
type Template struct {
	Name string     // file name used in messages
	Root *yaml.Node // a mapping node, intrinsics in long form
	JSON bool       // the file was JSON

	size int64 // the memory its nodes take, as the normalizer counted it
}

var shortTag = regexp.MustCompile(`^!([A-Za-z][A-Za-z0-9]*(::[A-Za-z0-9]+)*)$`)

// Parse reads a YAML or JSON template. Short-form tags become their long
// forms ({Ref: X}, {Fn::GetAtt: [A, B]}, ...); aliases and merge keys are
// expanded; duplicate keys are an error.
func Parse(name string, data []byte) (*Template, error) {
	doc, err := decodeDoc(name, data, "template")
	if err != nil {
		return nil, err
	}
	if top := doc.Content[0]; top.Kind != yaml.MappingNode || shortTag.MatchString(top.Tag) {
		return nil, &Error{File: name, Line: top.Line, Col: top.Column, Msg: "a template must be a mapping of sections (Resources, Parameters, ...)", Err: ErrSyntax}
	}
	n := &normalizer{name: name}
	root, err := n.norm(doc.Content[0], 0)
	if err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: name, Line: root.Line, Col: root.Column, Msg: "a template must be a mapping of sections (Resources, Parameters, ...)", Err: ErrSyntax}
	}
	trim := bytes.TrimLeft(data, " \t\r\n\ufeff")
	isJSON := len(trim) > 0 && trim[0] == '{'
	return &Template{Name: name, Root: root, JSON: isJSON, size: n.bytes}, nil
}

// parseValue reads a YAML or JSON file that holds one value of any kind (a
// file !Rain::Include inserts), normalized as Parse normalizes templates,
// and the memory its nodes take.
func parseValue(name string, data []byte) (*yaml.Node, int64, error) {
	doc, err := decodeDoc(name, data, "file")
	if err != nil {
		return nil, 0, err
	}
	n := &normalizer{name: name}
	v, err := n.norm(doc.Content[0], 0)
	if err != nil {
		return nil, 0, err
	}
	return v, n.bytes, nil
}

// decodeDoc decodes the one YAML document of a file, within the size and
// node bounds; what names the file in messages.
func decodeDoc(name string, data []byte, what string) (*yaml.Node, error) {
	if len(data) > MaxFileBytes {
		return nil, &Error{File: name, Msg: fmt.Sprintf("file is larger than %d bytes", MaxFileBytes), Err: ErrTooLarge}
	}
	if pos, bin, isBin := yamlpos.Binary(data); isBin {
		return nil, &Error{File: name, Line: pos.Line, Col: pos.Column, Msg: "not a YAML or JSON " + what + ": " + bin, Err: ErrSyntax}
	}
	// yaml.v3 keeps a node for every value: bound them before it runs.
	if le := yamlpos.CheckNodes(data); le != nil {
		return nil, &Error{File: name, Line: le.Pos.Line, Col: le.Pos.Column, Msg: le.Reason(), Err: ErrTooLarge}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if err.Error() == "EOF" {
			return nil, emptyDoc(name, what)
		}
		return nil, syntaxError(name, data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		msg := "more than one YAML document; keep one template per file"
		if what != "template" {
			msg = "more than one YAML document; a file holds one value"
		}
		return nil, &Error{File: name, Line: extra.Line, Col: extra.Column, Msg: msg, Err: ErrSyntax}
	} else if err.Error() != "EOF" {
		return nil, syntaxError(name, data, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, emptyDoc(name, what)
	}
	return &doc, nil
}

func emptyDoc(name, what string) error {
	msg := "empty template; write at least a Resources section"
	if what != "template" {
		msg = "empty " + what + "; write the YAML or JSON value to insert"
	}
	return &Error{File: name, Msg: msg, Err: ErrSyntax}
}

// syntaxError places a YAML syntax error where the parser failed.
func syntaxError(name string, data []byte, err error) error {
	pos, msg := yamlpos.Locate(data, err)
	return &Error{File: name, Line: pos.Line, Col: pos.Column, Msg: msg, Err: ErrSyntax}
}

// colonTag reads the tag !Name: (a short form followed by a stray colon,
// as in "!Equals:" on a line of its own) as !Name, for the intrinsic
// functions only: rain read such templates, and its suite has one.
func colonTag(tag string) (string, bool) {
	name, ok := strings.CutSuffix(tag, ":")
	if !ok || !shortTag.MatchString(name) {
		return "", false
	}
	name = name[1:]
	if _, known := shortForms["Fn::"+name]; known || name == "Ref" || name == "Condition" {
		return name, true
	}
	return "", false
}

type normalizer struct {
	name  string
	bytes int64
}

func (n *normalizer) errAt(at *yaml.Node, format string, args ...any) error {
	return &Error{File: n.name, Line: at.Line, Col: at.Column, Msg: fmt.Sprintf(format, args...), Err: ErrSyntax}
}

// norm returns a fresh, normalized copy of x.
func (n *normalizer) norm(x *yaml.Node, depth int) (*yaml.Node, error) {
	n.bytes += nodeCost + int64(len(x.Value))
	if n.bytes > maxNodeBytes {
		return nil, &Error{File: n.name, Line: x.Line, Col: x.Column, Msg: fmt.Sprintf("more than %d MiB of nodes once aliases are expanded", maxNodeBytes>>20), Err: ErrTooLarge}
	}
	if depth > 1000 {
		return nil, n.errAt(x, "nesting deeper than 1000 levels")
	}
	switch x.Kind {
	case yaml.AliasNode:
		if x.Alias == nil {
			return nil, n.errAt(x, "unknown alias")
		}
		c, err := n.norm(x.Alias, depth+1)
		if err == nil {
			// The copy stands where the alias is written: what is said about
			// it (a function call it makes, say) names that place.
			c.Line, c.Column = x.Line, x.Column
		}
		return c, err
	case yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode:
	default:
		return nil, n.errAt(x, "unexpected YAML node")
	}
	out := &yaml.Node{Kind: x.Kind, Style: x.Style &^ (yaml.TaggedStyle | yaml.FlowStyle), Tag: x.Tag, Value: x.Value, Line: x.Line, Column: x.Column}
	if b, ok := yaml11Bool(x); ok {
		out.Tag, out.Value = tagBool, b
	}
	switch x.Kind {
	case yaml.SequenceNode:
		out.Content = make([]*yaml.Node, 0, len(x.Content))
		for _, c := range x.Content {
			v, err := n.norm(c, depth+1)
			if err != nil {
				return nil, err
			}
			out.Content = append(out.Content, v)
		}
	case yaml.MappingNode:
		if err := n.mapping(out, x, depth); err != nil {
			return nil, err
		}
	}
	if m := shortTag.FindStringSubmatch(x.Tag); m != nil {
		return n.longForm(m[1], out)
	}
	if name, ok := colonTag(x.Tag); ok {
		return n.longForm(name, out)
	}
	switch out.Tag {
	case tagStr, tagInt, tagBool, tagNull, tagFloat, tagMap, tagSeq, "!!timestamp", "!!binary", "":
	default:
		return nil, n.errAt(x, "unsupported tag %s", x.Tag)
	}
	return out, nil
}

// yaml11Bool returns "true" or "false" for a plain, untagged scalar that
// YAML 1.1 reads as a boolean and YAML 1.2 as a string (yes, No, ON,
// off...): CloudFormation reads templates as YAML 1.1, as the aws-cli
// does, so Enabled: yes is the boolean true, not the string "yes". Mapping
// keys stay strings.
func yaml11Bool(x *yaml.Node) (string, bool) {
	if x.Kind != yaml.ScalarNode || x.Tag != tagStr || x.Style != 0 {
		return "", false
	}
	switch x.Value {
	case "yes", "Yes", "YES", "on", "On", "ON":
		return "true", true
	case "no", "No", "NO", "off", "Off", "OFF":
		return "false", true
	}
	return "", false
}

// mapping fills out with x's pairs, expanding merge keys (<<).
func (n *normalizer) mapping(out, x *yaml.Node, depth int) error {
	seen := map[string]bool{}
	add := func(k, v *yaml.Node, merged bool) error {
		if seen[k.Value] {
			if merged {
				return nil // explicit keys win over merged ones
			}
			return n.errAt(k, "duplicate key %q", k.Value)
		}
		seen[k.Value] = true
		out.Content = append(out.Content, k, v)
		return nil
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(x.Content); i += 2 {
		kx := x.Content[i]
		if kx.Kind == yaml.ScalarNode && kx.Tag == "!!merge" {
			merges = append(merges, x.Content[i+1])
			continue
		}
		if kx.Kind == yaml.AliasNode && kx.Alias != nil && kx.Alias.Kind == yaml.ScalarNode {
			at := kx // an alias key stands for the key it names, placed where it is used
			kx = &yaml.Node{Kind: yaml.ScalarNode, Tag: kx.Alias.Tag, Style: kx.Alias.Style, Value: kx.Alias.Value, Line: at.Line, Column: at.Column}
		}
		if kx.Kind != yaml.ScalarNode {
			return n.errAt(kx, "mapping keys must be plain strings")
		}
		if kx.Tag != tagStr && kx.Tag != tagInt && kx.Tag != tagBool && kx.Tag != tagFloat && kx.Tag != tagNull && kx.Tag != "" {
			return n.errAt(kx, "mapping keys cannot carry the tag %s", kx.Tag)
		}
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: kx.Value, Line: kx.Line, Column: kx.Column}
		if kx.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 || kx.Tag != tagStr {
			k.Style = kx.Style & (yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle)
		}
		v, err := n.norm(x.Content[i+1], depth+1)
		if err != nil {
			return err
		}
		if err := add(k, v, false); err != nil {
			return err
		}
	}
	for _, mv := range merges {
		src, err := n.norm(mv, depth+1)
		if err != nil {
			return err
		}
		var maps []*yaml.Node
		switch src.Kind {
		case yaml.MappingNode:
			maps = []*yaml.Node{src}
		case yaml.SequenceNode:
			maps = src.Content
		}
		for _, m := range maps {
			if m.Kind != yaml.MappingNode {
				return n.errAt(mv, "a merge key (<<) needs a mapping or a list of mappings")
			}
			for i := 0; i+1 < len(m.Content); i += 2 {
				if err := add(m.Content[i], m.Content[i+1], true); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// longForm turns the short form !name v into {Fn::name: v}.
func (n *normalizer) longForm(name string, v *yaml.Node) (*yaml.Node, error) {
	long := name
	if name != "Ref" && name != "Condition" && !strings.HasPrefix(name, "Fn::") && !strings.HasPrefix(name, "Rain::") {
		long = "Fn::" + name
	}
	if v.Kind == yaml.ScalarNode {
		v.Tag = tagStr
		if long == "Fn::GetAtt" {
			a, b, ok := cutName(v.Value)
			if _, _, br := bracket(v.Value); !ok && br {
				a, b, ok = v.Value, "", true // Map[key]: the whole entry
			}
			if !ok || a == "" || (b == "" && a != v.Value) {
				return nil, n.errAt(v, "!GetAtt %q needs the form Resource.Attribute", v.Value)
			}
			an, bn := strNode(a), strNode(b)
			an.Line, an.Column, bn.Line, bn.Column = v.Line, v.Column, v.Line, v.Column
			v = seqNode(an, bn)
			v.Line, v.Column = an.Line, an.Column
		}
	} else if v.Kind == yaml.MappingNode {
		v.Tag = tagMap
	} else {
		v.Tag = tagSeq
	}
	return fn(long, v, v), nil
}
