package flatten

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cloud-assembly/assemble/packager/cfn/internal/ynode"
	"go.yaml.in/yaml/v3"
)

type segKind int

const (
	segKey   segKind = iota // .name or ['name']
	segWild                 // .* or [*]
	segIndex                // [N]
)

type segment struct {
	kind  segKind
	key   string
	index int
}

// A path is a parsed JSONPath-like expression: $root followed by segments.
type path struct {
	src  string
	root string // "" for "$", "item" for "$item", ...
	segs []segment
}

func isIdent(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// parsePath parses "$root.a[*].b[0]['c d'].*".
func parsePath(s string) (path, error) {
	p := path{src: s}
	if !strings.HasPrefix(s, "$") {
		return p, fmt.Errorf("path %q must start with $", s)
	}
	i := 1
	for i < len(s) && isIdent(s[i]) {
		i++
	}
	p.root = s[1:i]
	for i < len(s) {
		switch s[i] {
		case '.':
			i++
			if i < len(s) && s[i] == '*' {
				p.segs = append(p.segs, segment{kind: segWild})
				i++
				continue
			}
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' && s[j] != ']' {
				j++
			}
			if j == i {
				return p, fmt.Errorf("path %q: empty name at offset %d", s, i)
			}
			p.segs = append(p.segs, segment{kind: segKey, key: s[i:j]})
			i = j
		case '[':
			end := strings.IndexByte(s[i:], ']')
			if end < 0 {
				return p, fmt.Errorf("path %q: unclosed [ at offset %d", s, i)
			}
			inner := s[i+1 : i+end]
			switch {
			case inner == "*":
				p.segs = append(p.segs, segment{kind: segWild})
			case len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0]:
				p.segs = append(p.segs, segment{kind: segKey, key: inner[1 : len(inner)-1]})
			default:
				n, err := strconv.Atoi(inner)
				if err != nil || n < 0 || inner[0] == '+' {
					return p, fmt.Errorf("path %q: [%s] is not *, an index or a quoted name", s, inner)
				}
				p.segs = append(p.segs, segment{kind: segIndex, index: n})
			}
			i += end + 1
		default:
			return p, fmt.Errorf("path %q: unexpected %q at offset %d; use .name, .*, [*] or [N]", s, s[i], i)
		}
	}
	return p, nil
}

// eval returns the nodes the path's segments select from root, in document
// order. Descending into an unresolved intrinsic function is an error.
func (p path) eval(root *yaml.Node) ([]*yaml.Node, error) {
	cur := []*yaml.Node{root}
	for _, sg := range p.segs {
		var next []*yaml.Node
		for _, n := range cur {
			n = ynode.Resolve(n)
			if n == nil {
				continue
			}
			if ynode.IsIntrinsic(n) {
				return nil, fmt.Errorf("%w: %s reaches %s at line %d; its value is only known at deploy time", ErrUnresolved, p.src, ynode.Intrinsic(n), n.Line)
			}
			switch sg.kind {
			case segKey:
				if v := ynode.Get(n, sg.key); v != nil {
					next = append(next, v)
				}
			case segIndex:
				if n.Kind == yaml.SequenceNode && sg.index < len(n.Content) {
					next = append(next, n.Content[sg.index])
				}
			case segWild:
				switch n.Kind {
				case yaml.SequenceNode:
					next = append(next, n.Content...)
				case yaml.MappingNode:
					for i := 1; i < len(n.Content); i += 2 {
						next = append(next, n.Content[i])
					}
				}
			}
		}
		cur = next
	}
	return cur, nil
}
