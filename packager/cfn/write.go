package cfn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// shortForms are the functions written back in their short YAML form.
var shortForms = map[string]string{
	"Ref": "!Ref", "Fn::Base64": "!Base64", "Fn::Cidr": "!Cidr", "Fn::FindInMap": "!FindInMap",
	"Fn::GetAtt": "!GetAtt", "Fn::GetAZs": "!GetAZs", "Fn::ImportValue": "!ImportValue",
	"Fn::Join": "!Join", "Fn::Select": "!Select", "Fn::Split": "!Split", "Fn::Sub": "!Sub",
	"Fn::Transform": "!Transform", "Fn::And": "!And", "Fn::Equals": "!Equals", "Fn::If": "!If",
	"Fn::Not": "!Not", "Fn::Or": "!Or", "Fn::Length": "!Length", "Fn::ToJsonString": "!ToJsonString",
}

// EncodeYAML writes root as YAML, with intrinsics in their short forms and
// key order kept.
func EncodeYAML(root *yaml.Node) ([]byte, error) {
	e := &emitter{}
	// A template's root is a mapping of sections, never an intrinsic: a
	// section named Fn::Join or Ref is written as a section, so that the
	// output reads back as the template it is.
	tag, n := "", root
	if root.Kind != yaml.MappingNode {
		tag, n = shortForm(root)
	}
	switch {
	case n.Kind == yaml.ScalarNode:
		if tag != "" {
			e.b.WriteString(tag + " ")
		}
		e.scalar(n, 2)
		e.b.WriteByte('\n')
	case emptyCollection(n) != "":
		e.b.WriteString(emptyCollection(n) + "\n")
	default:
		if tag != "" {
			e.b.WriteString(tag + "\n")
		}
		e.entries(n, 0)
	}
	return e.b.Bytes(), nil
}

// shorten returns a copy of n with long-form intrinsics in short form, as
// tagged nodes (for yaml.v3's encoder, in tests).
func shorten(n *yaml.Node) *yaml.Node {
	tag, v := shortForm(n)
	var c yaml.Node
	if tag != "" {
		c = *v
		c.Tag = tag
	} else {
		c = *n
	}
	c.Line, c.Column = 0, 0
	if len(c.Content) > 0 {
		src := c.Content
		c.Content = make([]*yaml.Node, len(src))
		for i, x := range src {
			c.Content[i] = shorten(x)
		}
	}
	return &c
}

// EncodeJSON writes root as indented JSON with intrinsics in long form.
func EncodeJSON(root *yaml.Node) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeJSON(&buf, root, 0); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, n *yaml.Node, depth int) error {
	ind := func(d int) {
		b.WriteByte('\n')
		for i := 0; i < d; i++ {
			b.WriteString("  ")
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			ind(depth + 1)
			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteString(": ")
			if err := writeJSON(b, n.Content[i+1], depth+1); err != nil {
				return err
			}
		}
		ind(depth)
		b.WriteByte('}')
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, x := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			ind(depth + 1)
			if err := writeJSON(b, x, depth+1); err != nil {
				return err
			}
		}
		ind(depth)
		b.WriteByte(']')
	case yaml.ScalarNode:
		b.Write(jsonScalar(n))
	default:
		return fmt.Errorf("write json: unexpected node kind %d", n.Kind)
	}
	return nil
}

func jsonScalar(n *yaml.Node) []byte {
	str := func() []byte {
		s, _ := json.Marshal(n.Value)
		return s
	}
	switch n.Tag {
	case tagNull:
		return []byte("null")
	case tagBool:
		var v bool
		if n.Decode(&v) == nil {
			return []byte(strconv.FormatBool(v))
		}
	case tagInt:
		var v int64
		if n.Decode(&v) == nil {
			return []byte(strconv.FormatInt(v, 10))
		}
		var u uint64
		if n.Decode(&u) == nil {
			return []byte(strconv.FormatUint(u, 10))
		}
	case tagFloat:
		if json.Valid([]byte(n.Value)) {
			return []byte(n.Value)
		}
		var v float64
		if n.Decode(&v) == nil {
			if s, err := json.Marshal(v); err == nil {
				return s
			}
		}
	}
	return str()
}
