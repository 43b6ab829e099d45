package merge

import (
	"fmt"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/packager/cfn/internal/ynode"
	"go.yaml.in/yaml/v3"
)

// Sentinel errors; every error Merge returns wraps one of them.
var (
	// ErrArgs: the argument of Fn::Merge is not a list of objects or a list
	// of lists.
	ErrArgs = errcode.New("merge_argument", "invalid Fn::Merge argument",
		"Fn::Merge takes a list of objects")
	// ErrUnresolved: an argument is an intrinsic function that cannot be
	// resolved at packaging time.
	ErrUnresolved = errcode.New("merge_unresolved", "Fn::Merge argument is not resolved",
		"Fn::Merge's arguments must be known when packaging (no Ref to a resource)")
	// ErrTooLarge: the argument has more than ynode.MaxNodes nodes once its
	// aliases are expanded.
	ErrTooLarge = errcode.New("merge_too_large", "Fn::Merge argument too large",
		"the merged object is too large; merge less")
)

// Name is the intrinsic function's name in templates.
const Name = "Fn::Merge"

// Merge evaluates Fn::Merge on args, the node under the Fn::Merge key, and
// returns the merged object or list. Errors name the offending argument and
// its line.
func Merge(args *yaml.Node) (*yaml.Node, error) {
	n := ynode.Resolve(args)
	if n == nil {
		return nil, fmt.Errorf("%w: missing argument", ErrArgs)
	}
	if _, ok := ynode.Count(n, ynode.MaxNodes); !ok {
		return nil, fmt.Errorf("%w: the argument at line %d has more than %d nodes once aliases are expanded", ErrTooLarge, n.Line, ynode.MaxNodes)
	}
	if ynode.IsIntrinsic(n) {
		return nil, fmt.Errorf("%w: %s at line %d: Fn::Merge needs a literal list of objects or lists", ErrUnresolved, ynode.Intrinsic(n), n.Line)
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("%w: at line %d: expected a list of objects or lists, got %s", ErrArgs, n.Line, ynode.KindName(n))
	}
	var out *yaml.Node
	for i, raw := range n.Content {
		a := ynode.Resolve(raw)
		if ynode.IsNull(a) {
			continue
		}
		if ynode.IsIntrinsic(a) {
			return nil, fmt.Errorf("%w: argument %d (%s) at line %d: pass a resolved object or list", ErrUnresolved, i+1, ynode.Intrinsic(a), a.Line)
		}
		if a.Kind != yaml.MappingNode && a.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("%w: argument %d at line %d: expected an object or a list, got %s", ErrArgs, i+1, a.Line, ynode.KindName(a))
		}
		if err := checkKeys(a, 0); err != nil {
			return nil, fmt.Errorf("%w: argument %d: %v", ErrArgs, i+1, err)
		}
		if out == nil {
			out = ynode.Copy(a)
			out.Style = 0
			continue
		}
		if a.Kind != out.Kind {
			return nil, fmt.Errorf("%w: argument %d at line %d: cannot merge %s into %s", ErrArgs, i+1, a.Line, ynode.KindName(a), ynode.KindName(out))
		}
		if a.Kind == yaml.SequenceNode {
			out.Content = append(out.Content, ynode.Copy(a).Content...)
		} else {
			mergeMaps(out, a)
		}
	}
	if out == nil {
		return nil, fmt.Errorf("%w: at line %d: no object or list to merge", ErrArgs, n.Line)
	}
	return out, nil
}

// mergeMaps merges src into dst, which is a private copy. Keys are
// compared by the text they stand for, so an alias key (*k) meets the key
// it names.
func mergeMaps(dst, src *yaml.Node) {
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := ynode.Resolve(src.Content[i]), src.Content[i+1]
		j := indexOf(dst, k.Value)
		if j < 0 {
			dst.Content = append(dst.Content, ynode.Copy(k), ynode.Copy(v))
			continue
		}
		dst.Content[j+1] = values(dst.Content[j+1], v)
	}
}

// values merges b into a copy of a with Fn::Merge's rules for one key:
// objects merge recursively, lists concatenate, otherwise b wins. Intrinsic
// function calls count as plain values. The result shares no node with b;
// it may share nodes with a.
func values(a, b *yaml.Node) *yaml.Node {
	ra, rb := ynode.Resolve(a), ynode.Resolve(b)
	if ra == nil || rb == nil || ynode.IsIntrinsic(ra) || ynode.IsIntrinsic(rb) || ra.Kind != rb.Kind {
		return ynode.Copy(b)
	}
	switch ra.Kind {
	case yaml.MappingNode:
		c := *ra
		c.Content = append([]*yaml.Node(nil), ra.Content...)
		mergeMaps(&c, rb)
		return &c
	case yaml.SequenceNode:
		c := *ra
		c.Content = append(append([]*yaml.Node(nil), ra.Content...), ynode.Copy(rb).Content...)
		return &c
	}
	return ynode.Copy(b)
}

func indexOf(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if ynode.Key(m.Content[i]) == key {
			return i
		}
	}
	return -1
}

// checkKeys rejects duplicate keys in the objects of n, which would make
// "later wins" ambiguous, and keys that are not plain values. An alias key
// counts as the key it names.
func checkKeys(n *yaml.Node, depth int) error {
	n = ynode.Resolve(n)
	if n == nil || depth > 1000 {
		return nil
	}
	if n.Kind == yaml.MappingNode {
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := ynode.Resolve(n.Content[i])
			if k == nil || k.Kind != yaml.ScalarNode {
				return fmt.Errorf("the key at line %d is not a plain value", n.Content[i].Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("duplicate key %q at line %d", k.Value, k.Line)
			}
			seen[k.Value] = true
		}
	}
	for _, c := range n.Content {
		if err := checkKeys(c, depth+1); err != nil {
			return err
		}
	}
	return nil
}
