package cfn

import (
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// Tags of the core YAML types, as yaml.v3 writes them in Node.Tag.
const (
	tagStr   = "!!str"
	tagInt   = "!!int"
	tagBool  = "!!bool"
	tagNull  = "!!null"
	tagFloat = "!!float"
	tagMap   = "!!map"
	tagSeq   = "!!seq"
)

func strNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: s}
}

func intNode(i int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tagInt, Value: strconv.Itoa(i)}
}

func mapNode(kv ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: tagMap, Content: kv}
}

func seqNode(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: tagSeq, Content: items}
}

// fn returns the single-key mapping {name: arg}, placed at at's position.
func fn(name string, arg *yaml.Node, at *yaml.Node) *yaml.Node {
	k := strNode(name)
	m := mapNode(k, arg)
	if at != nil {
		m.Line, m.Column = at.Line, at.Column
		k.Line, k.Column = at.Line, at.Column
	}
	return m
}

// mapGet returns the value for key in mapping m, or nil.
func mapGet(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// keys lists the keys of the mapping m, in order (none when m is not a
// mapping).
func keys(m *yaml.Node) []string {
	var out []string
	for k := range entries(m) {
		out = append(out, k.Value)
	}
	return out
}

// mapKey returns the key node for key in mapping m, or nil.
func mapKey(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i]
		}
	}
	return nil
}

// mapSet replaces the value of key in m, or appends the pair.
func mapSet(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, strNode(key), v)
}

// mapDelete removes key from m.
func mapDelete(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
			return
		}
	}
}

// single returns the key and value of a one-key mapping.
func single(n *yaml.Node) (string, *yaml.Node, bool) {
	if n == nil || n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		return "", nil, false
	}
	return n.Content[0].Value, n.Content[1], true
}

// isScalar reports whether n is a plain value (not a mapping or list).
func isScalar(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode
}

// isStr reports whether n is a scalar string.
func isStr(n *yaml.Node) bool {
	return isScalar(n) && (n.Tag == tagStr || n.Tag == "")
}

// clone deep-copies n.
func clone(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, x := range n.Content {
			c.Content[i] = clone(x)
		}
	}
	return &c
}

// equal compares two trees as data: kinds, scalar tags and values, and
// mapping pairs in order.
func equal(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || len(a.Content) != len(b.Content) {
		return false
	}
	if a.Kind == yaml.ScalarNode {
		if normTag(a) == tagNull && normTag(b) == tagNull {
			return true // null, ~ and an empty value are the same
		}
		return normTag(a) == normTag(b) && a.Value == b.Value
	}
	for i := range a.Content {
		if !equal(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

func normTag(n *yaml.Node) string {
	if n.Tag == "" {
		return tagStr
	}
	return n.Tag
}
