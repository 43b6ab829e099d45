package flatten

import (
	"fmt"
	"strings"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/packager/cfn/internal/ynode"
	"go.yaml.in/yaml/v3"
)

// maxNodes is ynode.MaxNodes; tests lower it to keep the limit tests fast.
var maxNodes = ynode.MaxNodes

// Name is the intrinsic function's name in templates.
const Name = "Fn::Flatten"

// Sentinel errors; every error Flatten returns wraps one of them.
var (
	// ErrArgs: the argument is malformed (unknown key, bad path, a
	// Template reference that matches nothing, ...).
	ErrArgs = errcode.New("flatten_argument", "invalid Fn::Flatten argument",
		"Fn::Flatten takes a list (of lists)")
	// ErrUnresolved: the Source, or a value a path must descend into, is an
	// intrinsic function whose value is only known at deploy time.
	ErrUnresolved = errcode.New("flatten_unresolved", "Fn::Flatten source is not resolved",
		"Fn::Flatten's source must be known when packaging (no Ref to a resource)")
	// ErrTooLarge: the argument or the result has more than ynode.MaxNodes
	// nodes (aliases expanded).
	ErrTooLarge = errcode.New("flatten_too_large", "Fn::Flatten result too large",
		"the flattened list is too large; flatten less")
)

type variable struct {
	name string
	path path
	line int
}

type transform struct {
	template *yaml.Node
	vars     []variable
}

type state struct{ budget, limit int }

func (st *state) spend(n *yaml.Node) error {
	c, ok := ynode.Count(n, st.budget)
	if !ok {
		return fmt.Errorf("%w: the result has more than %d nodes", ErrTooLarge, st.limit)
	}
	st.budget -= c
	return nil
}

// Flatten evaluates Fn::Flatten on arg, the node under the Fn::Flatten key,
// whose Source must already be resolved, and returns the resulting list (or,
// with GroupBy, object). The result shares no node with arg.
func Flatten(arg *yaml.Node) (*yaml.Node, error) {
	return Limited(arg, maxNodes)
}

// Limited is Flatten with the result bounded to at most nodes nodes (and
// never more than ynode.MaxNodes): a caller with a budget of its own stops
// Flatten there, with ErrTooLarge.
func Limited(arg *yaml.Node, nodes int) (*yaml.Node, error) {
	a := ynode.Resolve(arg)
	if a == nil {
		return nil, fmt.Errorf("%w: missing argument", ErrArgs)
	}
	if _, ok := ynode.Count(a, maxNodes); !ok {
		return nil, fmt.Errorf("%w: the argument at line %d has more than %d nodes once aliases are expanded", ErrTooLarge, a.Line, maxNodes)
	}
	if ynode.IsIntrinsic(a) {
		return nil, fmt.Errorf("%w: %s at line %d: Fn::Flatten needs a literal list or a Source resolved at packaging time", ErrUnresolved, ynode.Intrinsic(a), a.Line)
	}
	st := &state{budget: min(max(nodes, 0), maxNodes), limit: min(max(nodes, 0), maxNodes)}
	var items []*yaml.Node
	var tr *transform
	var groupBy *yaml.Node
	switch a.Kind {
	case yaml.SequenceNode:
		items = deep(a, nil)
	case yaml.MappingNode:
		var source, pattern, trNode *yaml.Node
		for i := 0; i+1 < len(a.Content); i += 2 {
			k, v := a.Content[i], a.Content[i+1]
			switch k.Value {
			case "Source":
				source = v
			case "Pattern":
				pattern = v
			case "Transform":
				trNode = v
			case "GroupBy":
				groupBy = v
			default:
				return nil, fmt.Errorf("%w: unknown key %q at line %d; use Source, Pattern, Transform and GroupBy", ErrArgs, k.Value, k.Line)
			}
		}
		src := ynode.Resolve(source)
		if src == nil {
			return nil, fmt.Errorf("%w: at line %d: Source is missing", ErrArgs, a.Line)
		}
		if ynode.IsIntrinsic(src) {
			return nil, fmt.Errorf("%w: Source is %s at line %d; it must be known at packaging time (a parameter's Default counts)", ErrUnresolved, ynode.Intrinsic(src), src.Line)
		}
		var err error
		if items, err = sourceItems(src, pattern); err != nil {
			return nil, err
		}
		if trNode != nil {
			if tr, err = parseTransform(trNode); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("%w: at line %d: expected a list, or an object with Source, got %s", ErrArgs, a.Line, ynode.KindName(a))
	}

	out := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: a.Line, Column: a.Column}
	emit := func(n *yaml.Node) error {
		if err := st.spend(n); err != nil {
			return err
		}
		out.Content = append(out.Content, n)
		return nil
	}
	for _, it := range items {
		if tr == nil {
			if err := emit(ynode.Copy(it)); err != nil {
				return nil, err
			}
			continue
		}
		if err := tr.expand(it, emit); err != nil {
			return nil, err
		}
	}
	if groupBy != nil {
		return group(out, groupBy)
	}
	return out, nil
}

// deep appends the items of list n to items, splicing nested lists (but not
// intrinsic functions that happen to be lists) at any depth.
func deep(n *yaml.Node, items []*yaml.Node) []*yaml.Node {
	for _, e := range n.Content {
		if r := ynode.Resolve(e); r != nil && r.Kind == yaml.SequenceNode && !ynode.IsIntrinsic(r) {
			items = deep(r, items)
			continue
		}
		items = append(items, e)
	}
	return items
}

// sourceItems selects the items of src: the Pattern's matches, or src
// flattened (a list deeply; an object's values, with list values spliced).
func sourceItems(src, pattern *yaml.Node) ([]*yaml.Node, error) {
	if pattern != nil {
		p := ynode.Resolve(pattern)
		if p == nil || p.Kind != yaml.ScalarNode || p.ShortTag() != "!!str" {
			return nil, fmt.Errorf("%w: Pattern at line %d must be a string such as $.a[*].b", ErrArgs, pattern.Line)
		}
		pp, err := parsePath(p.Value)
		if err == nil && pp.root != "" {
			err = fmt.Errorf("path %q: a Pattern starts at $, the Source", p.Value)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: Pattern at line %d: %v", ErrArgs, p.Line, err)
		}
		return pp.eval(src)
	}
	switch src.Kind {
	case yaml.SequenceNode:
		return deep(src, nil), nil
	case yaml.MappingNode:
		var items []*yaml.Node
		for i := 1; i < len(src.Content); i += 2 {
			v := ynode.Resolve(src.Content[i])
			if v != nil && v.Kind == yaml.SequenceNode && !ynode.IsIntrinsic(v) {
				items = deep(v, items)
			} else {
				items = append(items, src.Content[i])
			}
		}
		return items, nil
	}
	return nil, fmt.Errorf("%w: Source at line %d must be a list or an object, got %s", ErrArgs, src.Line, ynode.KindName(src))
}

func parseTransform(n *yaml.Node) (*transform, error) {
	m := ynode.Resolve(n)
	if m == nil || m.Kind != yaml.MappingNode || ynode.IsIntrinsic(m) {
		return nil, fmt.Errorf("%w: Transform at line %d must be an object with Template and Variables", ErrArgs, n.Line)
	}
	tr := &transform{}
	var vars *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch k := m.Content[i]; k.Value {
		case "Template":
			tr.template = m.Content[i+1]
		case "Variables":
			vars = ynode.Resolve(m.Content[i+1])
		default:
			return nil, fmt.Errorf("%w: unknown Transform key %q at line %d; use Template and Variables", ErrArgs, k.Value, k.Line)
		}
	}
	if tr.template == nil {
		return nil, fmt.Errorf("%w: Transform at line %d has no Template", ErrArgs, m.Line)
	}
	if ynode.IsNull(vars) {
		return tr, nil
	}
	if vars.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%w: Variables at line %d must be an object of names to paths", ErrArgs, vars.Line)
	}
	known := map[string]bool{"item": true}
	for i := 0; i+1 < len(vars.Content); i += 2 {
		k, v := vars.Content[i], ynode.Resolve(vars.Content[i+1])
		name := k.Value
		if name == "" || !isIdentString(name) || known[name] {
			return nil, fmt.Errorf("%w: variable name %q at line %d must be a new identifier (letters, digits, _; not item)", ErrArgs, name, k.Line)
		}
		if v == nil || v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
			return nil, fmt.Errorf("%w: variable %s at line %d must be a path such as $item.list[*]", ErrArgs, name, k.Line)
		}
		p, err := parsePath(v.Value)
		if err == nil && !known[p.root] {
			err = fmt.Errorf("path %q must start at $item or an earlier variable", v.Value)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: variable %s at line %d: %v", ErrArgs, name, v.Line, err)
		}
		known[name] = true
		tr.vars = append(tr.vars, variable{name: name, path: p, line: v.Line})
	}
	return tr, nil
}

func isIdentString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isIdent(s[i]) {
			return false
		}
	}
	return s[0] < '0' || s[0] > '9'
}

type binding struct {
	name string
	node *yaml.Node
}

func lookup(binds []binding, name string) *yaml.Node {
	for _, b := range binds {
		if b.name == name {
			return b.node
		}
	}
	return nil
}

// expand emits the Template once per combination of the variables' values
// for item; the first variable is the outermost loop.
func (tr *transform) expand(item *yaml.Node, emit func(*yaml.Node) error) error {
	binds := make([]binding, 1, len(tr.vars)+1)
	binds[0] = binding{"item", item}
	var rec func(k int) error
	rec = func(k int) error {
		if k == len(tr.vars) {
			out, err := instantiate(tr.template, binds)
			if err != nil {
				return err
			}
			return emit(out)
		}
		v := tr.vars[k]
		matches, err := v.path.eval(lookup(binds, v.path.root))
		if err != nil {
			return fmt.Errorf("variable %s at line %d: %w", v.name, v.line, err)
		}
		for _, m := range matches {
			binds = append(binds[:k+1], binding{v.name, m})
			if err := rec(k + 1); err != nil {
				return err
			}
		}
		return nil
	}
	return rec(0)
}

// instantiate copies the template, replacing variable references in its
// strings.
func instantiate(t *yaml.Node, binds []binding) (*yaml.Node, error) {
	n := ynode.Resolve(t)
	if n == nil {
		return ynode.Copy(t), nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		custom := strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") // !Sub and friends
		if strings.IndexByte(n.Value, '$') < 0 || (!custom && n.ShortTag() != "!!str") {
			return ynode.Copy(n), nil
		}
		return substitute(n, binds)
	case yaml.SequenceNode, yaml.MappingNode:
		c := *n
		c.Anchor, c.Alias = "", nil
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 0 {
				c.Content[i] = ynode.Copy(ch) // keys are not templates
				continue
			}
			v, err := instantiate(ch, binds)
			if err != nil {
				return nil, err
			}
			c.Content[i] = v
		}
		return &c, nil
	}
	return ynode.Copy(n), nil
}

// A ref is one variable reference found in a template string.
type ref struct {
	start, end int
	path       path
	escape     bool // "$$", standing for "$"
}

// scanRef reads the reference starting at s[i] == '$', if it is one: "$$",
// "${name.path}" or "$name.path" whose name is bound.
func scanRef(s string, i int, binds []binding) (ref, bool) {
	if i+1 < len(s) && s[i+1] == '$' {
		return ref{start: i, end: i + 2, escape: true}, true
	}
	if i+1 < len(s) && s[i+1] == '{' {
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return ref{}, false
		}
		p, err := parsePath("$" + s[i+2:i+2+end])
		if err != nil || lookup(binds, p.root) == nil {
			return ref{}, false // ${AWS::Region} and the like stay as written
		}
		return ref{start: i, end: i + 3 + end, path: p}, true
	}
	j := i + 1
	for j < len(s) && isIdent(s[j]) {
		j++
	}
	if j == i+1 {
		return ref{}, false
	}
	for j < len(s) {
		if s[j] == '.' && j+1 < len(s) && s[j+1] == '*' {
			j += 2
		} else if s[j] == '.' && j+1 < len(s) && isIdent(s[j+1]) {
			j++
			for j < len(s) && isIdent(s[j]) {
				j++
			}
		} else if s[j] == '[' {
			k := strings.IndexByte(s[j:], ']')
			if k < 0 || !isIndex(s[j+1:j+k]) {
				break
			}
			j += k + 1
		} else {
			break
		}
	}
	p, err := parsePath(s[i:j])
	if err != nil || lookup(binds, p.root) == nil {
		return ref{}, false
	}
	return ref{start: i, end: j, path: p}, true
}

func isIndex(s string) bool {
	if s == "*" {
		return true
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// substitute replaces the references in scalar n. A plain string that is
// exactly one reference becomes the referenced value itself, with its type
// (a string stays a string, a number a number, an object an object; a
// wildcard gives a list); otherwise values are spliced in as text.
func substitute(n *yaml.Node, binds []binding) (*yaml.Node, error) {
	s := n.Value
	if r, ok := scanRef(s, 0, binds); ok && !r.escape && r.end == len(s) && n.ShortTag() == "!!str" {
		matches, err := resolveRef(n, r, binds)
		if err != nil {
			return nil, err
		}
		if len(matches) == 1 {
			return ynode.Copy(matches[0]), nil
		}
		list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: n.Line, Column: n.Column}
		for _, m := range matches {
			list.Content = append(list.Content, ynode.Copy(m))
		}
		return list, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '$' {
			b.WriteByte(s[i])
			i++
			continue
		}
		r, ok := scanRef(s, i, binds)
		if !ok {
			b.WriteByte('$')
			i++
			continue
		}
		i = r.end
		if r.escape {
			b.WriteByte('$')
			continue
		}
		matches, err := resolveRef(n, r, binds)
		if err != nil {
			return nil, err
		}
		if len(matches) != 1 {
			return nil, fmt.Errorf("%w: %s at line %d matches %d values; only a whole-string reference can be a list", ErrArgs, s[r.start:r.end], n.Line, len(matches))
		}
		m := ynode.Resolve(matches[0])
		if m.Kind != yaml.ScalarNode || ynode.IsIntrinsic(m) {
			return nil, fmt.Errorf("%w: %s at line %d is %s, which cannot be spliced into a string", ErrArgs, s[r.start:r.end], n.Line, ynode.KindName(m))
		}
		b.WriteString(m.Value)
	}
	c := ynode.Copy(n)
	c.Value = b.String()
	if c.Tag == "" || c.ShortTag() == "!!str" {
		c.Tag = "!!str"
	}
	return c, nil
}

func resolveRef(n *yaml.Node, r ref, binds []binding) ([]*yaml.Node, error) {
	matches, err := r.path.eval(lookup(binds, r.path.root))
	if err != nil {
		return nil, err
	}
	var out []*yaml.Node
	for _, m := range matches {
		if m = ynode.Resolve(m); m != nil {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s in the Template at line %d matches nothing in the item at line %d", ErrArgs, r.path.src, n.Line, lineOf(lookup(binds, "item")))
	}
	return out, nil
}

func lineOf(n *yaml.Node) int {
	if n = ynode.Resolve(n); n != nil {
		return n.Line
	}
	return 0
}

// group turns the list into an object of lists keyed by each item's GroupBy
// value, in order of first appearance.
func group(list, by *yaml.Node) (*yaml.Node, error) {
	b := ynode.Resolve(by)
	if b == nil || b.Kind != yaml.ScalarNode || b.ShortTag() != "!!str" || b.Value == "" {
		return nil, fmt.Errorf("%w: GroupBy at line %d must be a property name or a path such as $.a.b", ErrArgs, by.Line)
	}
	p := path{src: b.Value, segs: []segment{{kind: segKey, key: b.Value}}}
	if strings.HasPrefix(b.Value, "$") {
		var err error
		if p, err = parsePath(b.Value); err == nil && p.root != "" {
			err = fmt.Errorf("path %q: a GroupBy path starts at $, the item", b.Value)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: GroupBy at line %d: %v", ErrArgs, b.Line, err)
		}
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: list.Line, Column: list.Column}
	groups := map[string]*yaml.Node{}
	for i, it := range list.Content {
		matches, err := p.eval(it)
		if err != nil {
			return nil, err
		}
		if len(matches) != 1 || ynode.Resolve(matches[0]).Kind != yaml.ScalarNode || ynode.IsIntrinsic(matches[0]) {
			return nil, fmt.Errorf("%w: GroupBy %s at line %d: item %d (line %d) has no single scalar value there", ErrArgs, b.Value, b.Line, i, lineOf(it))
		}
		key := ynode.Resolve(matches[0]).Value
		g := groups[key]
		if g == nil {
			g = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: it.Line, Column: it.Column}
			groups[key] = g
			out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, g)
		}
		g.Content = append(g.Content, it)
	}
	return out, nil
}
