// Package ynode holds the small yaml.Node helpers shared by the cfn
// sub-packages (paramschema, flatten, merge): following aliases, spotting
// unresolved intrinsic functions, deep copies and data equality.
package ynode

import (
	"math"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxAliasDepth bounds alias chains, so a hostile document cannot loop.
const maxAliasDepth = 64

// Resolve unwraps document and alias nodes and returns the node they stand
// for. It returns nil for nil, for an alias without a target and for alias
// chains longer than maxAliasDepth.
func Resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && i < maxAliasDepth; i++ {
		switch n.Kind {
		case yaml.DocumentNode:
			if len(n.Content) != 1 {
				return nil
			}
			n = n.Content[0]
		case yaml.AliasNode:
			n = n.Alias
		case 0:
			return nil // the zero Node, as yaml.Unmarshal leaves it for an empty document
		default:
			return n
		}
	}
	return nil
}

// IsIntrinsic reports whether n is a CloudFormation intrinsic function call
// that is still unresolved: a short-form tag (!Ref, !GetAtt, !Sub, ...) or a
// one-key mapping whose key is "Ref", "Condition" or starts with "Fn::".
func IsIntrinsic(n *yaml.Node) bool {
	n = Resolve(n)
	if n == nil {
		return false
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		return true
	}
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		return false
	}
	k := n.Content[0].Value
	return k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::")
}

// Intrinsic returns the name of the intrinsic n calls ("Ref", "Fn::GetAtt",
// "!Sub" for a short-form tag), or "" when n is not one.
func Intrinsic(n *yaml.Node) string {
	n = Resolve(n)
	if !IsIntrinsic(n) {
		return ""
	}
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		return n.Tag
	}
	return n.Content[0].Value
}

// Copy returns a deep copy of n with aliases expanded, so that the result
// shares no node with n. Line and column numbers are kept.
func Copy(n *yaml.Node) *yaml.Node {
	return copyDepth(n, 0)
}

func copyDepth(n *yaml.Node, depth int) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		if r := Resolve(n); r != nil && depth < maxAliasDepth {
			return copyDepth(r, depth+1)
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null", Line: n.Line, Column: n.Column}
	}
	c := *n
	c.Alias = nil
	c.Anchor = ""
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			c.Content[i] = copyDepth(ch, depth)
		}
	}
	return &c
}

// Tag returns n's resolved short tag ("!!str", "!!int", "!!map", ... or a
// custom tag such as "!Ref").
func Tag(n *yaml.Node) string {
	n = Resolve(n)
	if n == nil {
		return ""
	}
	return n.ShortTag()
}

// IsNull reports whether n is absent or an explicit null.
func IsNull(n *yaml.Node) bool {
	n = Resolve(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// Number returns the numeric value of a scalar tagged !!int or !!float.
func Number(n *yaml.Node) (float64, bool) {
	n = Resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return 0, false
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsNaN(f) {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

// Key returns the text of mapping key k; an alias key (*a) stands for the
// key it names.
func Key(k *yaml.Node) string {
	if r := Resolve(k); r != nil {
		return r.Value
	}
	return ""
}

// Get returns the value under key in mapping m, or nil.
func Get(m *yaml.Node, key string) *yaml.Node {
	m = Resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if Key(m.Content[i]) == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Equal reports whether a and b hold the same data: same kinds, scalars with
// the same tag and value (numbers compared by value, so 1 equals 1.0),
// sequences element by element and mappings with the same keys and values in
// any order.
func Equal(a, b *yaml.Node) bool {
	return equalDepth(a, b, 0)
}

func equalDepth(a, b *yaml.Node, depth int) bool {
	a, b = Resolve(a), Resolve(b)
	if a == nil || b == nil {
		return a == b
	}
	if depth > 10000 {
		return false
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case yaml.ScalarNode:
		if x, ok := Number(a); ok {
			y, ok := Number(b)
			return ok && x == y
		}
		return a.ShortTag() == b.ShortTag() && a.Value == b.Value
	case yaml.SequenceNode:
		if a.ShortTag() != b.ShortTag() || len(a.Content) != len(b.Content) {
			return false
		}
		for i := range a.Content {
			if !equalDepth(a.Content[i], b.Content[i], depth+1) {
				return false
			}
		}
		return true
	case yaml.MappingNode:
		if a.ShortTag() != b.ShortTag() || len(a.Content) != len(b.Content) {
			return false
		}
		for i := 0; i+1 < len(a.Content); i += 2 {
			bv := Get(b, Key(a.Content[i]))
			if bv == nil || !equalDepth(a.Content[i+1], bv, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// KindName names n's kind for error messages: "a string", "a number",
// "a boolean", "null", "an object", "a list", "an intrinsic function".
func KindName(n *yaml.Node) string {
	n = Resolve(n)
	if n == nil {
		return "nothing"
	}
	if IsIntrinsic(n) {
		return "an intrinsic function (" + Intrinsic(n) + ")"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!str":
		return "a string"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "null"
	}
	return "a scalar (" + n.ShortTag() + ")"
}

// MaxNodes bounds the nodes a value may have once its aliases are expanded:
// a few aliases can stand for an exponential number of nodes.
const MaxNodes = 1 << 20

// Count returns the number of nodes in n with aliases expanded, counting no
// further than limit; ok is false when n has more than limit nodes.
func Count(n *yaml.Node, limit int) (count int, ok bool) {
	var walk func(n *yaml.Node, depth int) bool
	walk = func(n *yaml.Node, depth int) bool {
		if depth > maxAliasDepth*16 {
			return false
		}
		if n = Resolve(n); n == nil {
			return true
		}
		if count++; count > limit {
			return false
		}
		for _, c := range n.Content {
			if !walk(c, depth+1) {
				return false
			}
		}
		return true
	}
	ok = walk(n, 0)
	return count, ok
}
