package cfn

import (
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/internal/plural"
)

// group is a set of instances made by ForEach (modules or resources),
// addressed as Name[index], Name[identifier] and Name[*].
type group struct {
	ids   []string
	names []string // local names of the instances, in order
}

// maxForEach bounds the items of one ForEach.
const maxForEach = 100_000

type feItem struct {
	id    string
	value *yaml.Node // $Value: the item, the object, or the map entry's value
}

// forEachItems resolves a ForEach collection: a list, a comma-separated
// string, a map (each key an instance, in the map's order), or a reference
// to a parameter whose value (or, for a parameter of the top template,
// whose Default) is one of those.
func (sc *scope) forEachItems(n *yaml.Node) ([]feItem, error) {
	r, err := sc.resolve(n)
	if err != nil {
		return nil, err
	}
	if r != nil {
		r = sc.e.topDefault(r)
	}
	var items []feItem
	switch {
	case r == nil:
	case isScalar(r):
		for _, s := range strings.Split(r.Value, ",") {
			id := strings.TrimSpace(s)
			items = append(items, feItem{id: id, value: strNode(id)})
		}
	case r.Kind == yaml.SequenceNode && !isIntrinsic(r):
		for _, x := range r.Content {
			switch {
			case isScalar(x):
				items = append(items, feItem{id: x.Value, value: x})
			case x.Kind == yaml.MappingNode && !isIntrinsic(x):
				id := mapGet(x, "Identifier")
				if id == nil || !isScalar(id) {
					return nil, sc.errorf(x, ErrInvalid, "ForEach over objects needs an Identifier in each object")
				}
				items = append(items, feItem{id: id.Value, value: x})
			default:
				return nil, sc.errorf(n, ErrInvalid, "ForEach items must be resolved at packaging time")
			}
		}
	case r.Kind == yaml.MappingNode && !isIntrinsic(r):
		for i := 0; i+1 < len(r.Content); i += 2 {
			items = append(items, feItem{id: r.Content[i].Value, value: r.Content[i+1]})
		}
	default:
		return nil, sc.errorf(n, ErrInvalid, "ForEach needs a list or map known at packaging time (a list, a comma-separated string, a map, or a parameter with a Default)")
	}
	if len(items) > maxForEach {
		return nil, sc.errorf(n, ErrTooLarge, "ForEach has more than %d items", maxForEach)
	}
	return items, nil
}

// substituter replaces the loop variables of one ForEach instance in a
// copy of the entry: $Identifier, ${Identifier} and &{Identifier} (the
// item's identifier or map key), $Index and ${Index}, and $Value,
// ${Value}, $Value.Field and ${Value.Field} (the item, or a field of it).
// A value reference that is a whole string, or the target of !Ref or
// !GetAtt ($Value.Port), stands for the value itself, of any type; inside
// a longer string it is written as text.
type substituter struct {
	sc    *scope
	ident string // the identifier's variable name
	id    string
	index string
	value *yaml.Node
}

// text replaces the loop variables in a string, in one pass (a value put
// in is not scanned again); where two variables start at one place the
// longer wins ($Index or $Identifier, $Value or $V). A value reference to
// a list or an object there is an error at at.
func (s *substituter) text(in string, at *yaml.Node) (string, error) {
	if !strings.ContainsAny(in, "$&") {
		return in, nil
	}
	values := s.value != nil && s.ident != "Value"
	var b strings.Builder
	for i := 0; i < len(in); {
		rest := in[i:]
		if rest[0] != '$' && rest[0] != '&' {
			j := strings.IndexAny(rest, "$&")
			if j < 0 {
				j = len(rest)
			}
			b.WriteString(rest[:j])
			i += j
			continue
		}
		n, with := 0, ""
		for _, v := range [][2]string{
			{"${" + s.ident + "}", s.id}, {"&{" + s.ident + "}", alnum(s.id)}, {"$" + s.ident, s.id},
			{"${Index}", s.index}, {"$Index", s.index},
		} {
			if len(v[0]) > n && strings.HasPrefix(rest, v[0]) {
				n, with = len(v[0]), v[1]
			}
		}
		if vn, path, ok := valueRefAt(rest); ok && values && vn > n {
			v, err := s.field(path, at)
			if err != nil {
				return "", err
			}
			if !isScalar(v) {
				hint := "name one of its fields"
				if v.Kind == yaml.SequenceNode {
					hint = "write it on its own (not inside a string), or join it with !Join"
				}
				return "", s.sc.errorf(at, ErrInvalid, "%s is %s, which cannot be written into a string; %s", rest[:vn], kindName(v), hint)
			}
			n, with = vn, v.Value
		}
		if n == 0 {
			n, with = 1, rest[:1]
		}
		b.WriteString(with)
		i += n
		if !s.sc.e.fits(int64(b.Len())) {
			return "", s.sc.tooLarge(at, "ForEach")
		}
	}
	return b.String(), nil
}

// field returns the node $Value.path names.
func (s *substituter) field(path string, at *yaml.Node) (*yaml.Node, error) {
	if path == "" {
		return s.value, nil
	}
	v, ok := walkPath(s.value, path)
	if !ok {
		return nil, s.sc.errorf(at, ErrInvalid, "$Value.%s: the ForEach item %s has no field %s", path, s.id, path)
	}
	return v, nil
}

// node returns a copy of n with the loop variables replaced.
func (s *substituter) node(n *yaml.Node) (*yaml.Node, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		if path, ok := s.wholeValueRef(n.Value); ok {
			v, err := s.field(path, n)
			return clone(v), err
		}
		t, err := s.text(n.Value, n)
		if err != nil {
			return nil, err
		}
		c := *n
		c.Value = t
		return &c, nil
	case yaml.MappingNode:
		if k, a, ok := single(n); ok {
			if path, ok := s.refTarget(k, a); ok {
				v, err := s.field(path, n)
				return clone(v), err
			}
			if k == "Fn::Sub" {
				return s.sub(n, a)
			}
		}
		c := *n
		c.Content = make([]*yaml.Node, len(n.Content))
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := *n.Content[i]
			t, err := s.text(key.Value, &key)
			if err != nil {
				return nil, err
			}
			key.Value = t
			v, err := s.node(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			c.Content[i], c.Content[i+1] = &key, v
		}
		return &c, nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		v, err := s.node(x)
		if err != nil {
			return nil, err
		}
		c.Content[i] = v
	}
	return &c, nil
}

// sub replaces the loop variables in a Fn::Sub: its string only as text.
func (s *substituter) sub(n, arg *yaml.Node) (*yaml.Node, error) {
	str, rest := arg, []*yaml.Node(nil)
	if arg.Kind == yaml.SequenceNode && len(arg.Content) > 0 {
		str, rest = arg.Content[0], arg.Content[1:]
	}
	if !isScalar(str) {
		c := *n
		c.Content = []*yaml.Node{n.Content[0], nil}
		v, err := s.node(arg)
		c.Content[1] = v
		return &c, err
	}
	t, err := s.text(str.Value, str)
	if err != nil {
		return nil, err
	}
	ns := *str
	ns.Value = t
	var out *yaml.Node = &ns
	if str != arg {
		seq := *arg
		seq.Content = []*yaml.Node{&ns}
		for _, x := range rest {
			v, err := s.node(x)
			if err != nil {
				return nil, err
			}
			seq.Content = append(seq.Content, v)
		}
		out = &seq
	}
	c := *n
	c.Content = []*yaml.Node{n.Content[0], out}
	return &c, nil
}

// wholeValueRef reports whether str is exactly a value reference ($Value,
// ${Value}, $Value.a.b, ${Value.a.b}) and returns its path.
func (s *substituter) wholeValueRef(str string) (string, bool) {
	if s.value == nil || s.ident == "Value" {
		return "", false
	}
	n, path, ok := valueRefAt(str)
	return path, ok && n == len(str)
}

// refTarget reports whether {k: a} is !Ref or !GetAtt of a value
// reference (!GetAtt $Value.Port is read as [$Value, Port]).
func (s *substituter) refTarget(k string, a *yaml.Node) (string, bool) {
	switch {
	case k == "Ref" && isStr(a):
		return s.wholeValueRef(a.Value)
	case k == "Fn::GetAtt" && a.Kind == yaml.SequenceNode && len(a.Content) == 2 && isStr(a.Content[0]) && isStr(a.Content[1]):
		return s.wholeValueRef(a.Content[0].Value + "." + a.Content[1].Value)
	}
	return "", false
}

// valueRefAt reports whether str starts with a value reference: $Value or
// ${Value}, with an optional dotted path ($Value.a.b, ${Value.a.b}). It
// returns its length and the path.
func valueRefAt(str string) (int, string, bool) {
	if body, ok := strings.CutPrefix(str, "${Value"); ok {
		end := strings.IndexByte(body, '}')
		switch {
		case end == 0:
			return len("${Value}"), "", true
		case end > 1 && body[0] == '.':
			return len("${Value") + end + 1, body[1:end], true
		}
		return 0, "", false
	}
	body, ok := strings.CutPrefix(str, "$Value")
	if !ok || body != "" && isIDChar(body[0]) {
		return 0, "", false
	}
	j := len("$Value")
	var segs []string
	for j < len(str) && str[j] == '.' {
		k := j + 1
		for k < len(str) && isIDChar(str[k]) {
			k++
		}
		if k == j+1 {
			break
		}
		segs = append(segs, str[j+1:k])
		j = k
	}
	return j, strings.Join(segs, "."), true
}

func isIDChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// kindName names a node's kind for messages.
func kindName(v *yaml.Node) string {
	switch {
	case v.Kind == yaml.SequenceNode:
		return "a list"
	case isIntrinsic(v):
		return "a function"
	case v.Kind == yaml.MappingNode:
		return "an object"
	}
	return "a value"
}

// expandForEach turns the pairs of a Resources or Modules section into the
// pairs of their instances: entries with a ForEach attribute and
// Fn::ForEach::Name entries are repeated, the others kept. ForEach groups
// are recorded for Name[...] references.
func (sc *scope) expandForEach(pairs []*yaml.Node, section string) ([]*yaml.Node, error) {
	var out []*yaml.Node
	for i := 0; i+1 < len(pairs); i += 2 {
		k, v := pairs[i], pairs[i+1]
		if loop, ok := strings.CutPrefix(k.Value, "Fn::ForEach::"); ok {
			if sc.top && section == "Resources" {
				out = append(out, k, v) // CloudFormation's own (AWS::LanguageExtensions)
				continue
			}
			if v.Kind != yaml.SequenceNode || len(v.Content) != 3 || !isStr(v.Content[0]) || v.Content[2].Kind != yaml.MappingNode {
				return nil, sc.errorf(v, ErrInvalid, "%s needs [Identifier, Collection, {Name: Template}]", k.Value)
			}
			items, err := sc.forEachItems(v.Content[1])
			if err != nil {
				return nil, err
			}
			g := &group{}
			tmpl := v.Content[2]
			for ti := 0; ti+1 < len(tmpl.Content); ti += 2 {
				tk, tv := tmpl.Content[ti], tmpl.Content[ti+1]
				for idx, it := range items {
					s := &substituter{sc: sc, ident: v.Content[0].Value, id: it.id, index: strconv.Itoa(idx), value: it.value}
					name, err := s.text(tk.Value, tk)
					if err != nil {
						return nil, err
					}
					if name == tk.Value {
						name += strconv.Itoa(idx)
					}
					if id := sc.prefix + name; !validLogicalID(id) {
						if alnum(id) == id || strings.Contains(tk.Value, "&{"+v.Content[0].Value+"}") {
							return nil, sc.errorf(tk, ErrInvalid, "%s makes the logical ID %q from %q: logical IDs are 1 to %d letters and digits", k.Value, id, it.id, maxLogicalID)
						}
						return nil, sc.errorf(tk, ErrInvalid, "%s makes the logical ID %q from %q, which is not alphanumeric; write &{%s} in the name to drop the other characters, as CloudFormation's Fn::ForEach does",
							k.Value, id, it.id, v.Content[0].Value)
					}
					nk := strNode(name)
					nk.Line, nk.Column = tk.Line, tk.Column
					body, err := s.node(tv)
					if err != nil {
						return nil, err
					}
					if err := sc.produced(nil, tk, k.Value, body); err != nil {
						return nil, err
					}
					out = append(out, nk, body)
					g.ids = append(g.ids, it.id)
					g.names = append(g.names, name)
				}
			}
			sc.groups[loop] = g
			continue
		}
		fe := mapGet(v, "ForEach")
		if fe == nil || v.Kind != yaml.MappingNode {
			out = append(out, k, v)
			continue
		}
		items, err := sc.forEachItems(fe)
		if err != nil {
			return nil, err
		}
		body := mapNode()
		body.Line, body.Column = v.Line, v.Column
		for j := 0; j+1 < len(v.Content); j += 2 {
			if v.Content[j].Value != "ForEach" {
				body.Content = append(body.Content, v.Content[j], v.Content[j+1])
			}
		}
		g := &group{}
		for idx, it := range items {
			s := &substituter{sc: sc, ident: "Identifier", id: it.id, index: strconv.Itoa(idx), value: it.value}
			name, err := s.text(k.Value, k)
			if err != nil {
				return nil, err
			}
			if name == k.Value {
				name += strconv.Itoa(idx)
			}
			nk := strNode(name)
			nk.Line, nk.Column = k.Line, k.Column
			b, err := s.node(body)
			if err != nil {
				return nil, err
			}
			if err := sc.produced(nil, k, "ForEach", b); err != nil {
				return nil, err
			}
			out = append(out, nk, b)
			g.ids = append(g.ids, it.id)
			g.names = append(g.names, name)
		}
		sc.groups[k.Value] = g
	}
	return out, nil
}

// alnum returns s with every character that is not an ASCII letter or
// digit dropped: what &{Identifier} puts in a logical ID.
func alnum(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// maxLogicalID is CloudFormation's limit on a logical ID's length.
const maxLogicalID = 255

// validLogicalID reports whether s can name a resource, condition, mapping
// or output: 1 to 255 ASCII letters and digits.
func validLogicalID(s string) bool {
	return s != "" && len(s) <= maxLogicalID && alnum(s) == s
}

// cutName splits Name.Attr at its first dot, and Name[key].Attr after the
// bracket, so that a key may hold dots (a map's "api.v1"). ok is false when
// there is no attribute.
func cutName(s string) (name, attr string, ok bool) {
	if i := strings.IndexByte(s, '['); i > 0 && !strings.Contains(s[:i], ".") {
		if j := strings.IndexByte(s[i:], ']'); j >= 0 {
			end := i + j + 1
			if end == len(s) {
				return s, "", false
			}
			if s[end] == '.' {
				return s[:end], s[end+1:], true
			}
		}
	}
	return strings.Cut(s, ".")
}

// bracket splits Name[sel] into Name and sel.
func bracket(s string) (string, string, bool) {
	i := strings.IndexByte(s, '[')
	if i <= 0 || !strings.HasSuffix(s, "]") {
		return "", "", false
	}
	return s[:i], s[i+1 : len(s)-1], true
}

// pick returns the instances of g that sel names: * for all, an identifier,
// or an index.
func (g *group) pick(sel string) ([]string, bool) {
	if sel == "*" {
		return g.names, true
	}
	for i, id := range g.ids {
		if id == sel {
			return g.names[i : i+1], true
		}
	}
	if i, err := strconv.Atoi(sel); err == nil && i >= 0 && i < len(g.names) {
		return g.names[i : i+1], true
	}
	return nil, false
}

// selectAtt resolves base[sel].rest for ForEach groups and map parameters.
func (sc *scope) selectAtt(base, sel, rest string, at *yaml.Node) (*yaml.Node, bool, error) {
	if g := sc.groups[base]; g != nil {
		names, ok := g.pick(sel)
		if !ok {
			return nil, true, sc.errorf(at, ErrInvalid, "%s[%s]: no such ForEach instance (identifiers: %s)", base, sel, strings.Join(g.ids, ", "))
		}
		var vals []*yaml.Node
		for _, n := range names {
			var v *yaml.Node
			var err error
			if rest == "" {
				v, err = sc.ref(n, at)
			} else {
				v, err = sc.getAtt(n, rest, at)
			}
			if err != nil {
				return nil, true, err
			}
			vals = append(vals, v)
		}
		if sel == "*" {
			return seqNode(vals...), true, nil
		}
		return vals[0], true, nil
	}
	if !sc.hasParams() {
		return nil, false, nil
	}
	p, ok, err := sc.param(base, at)
	if err != nil {
		return nil, true, err
	}
	if ok && p.Kind == yaml.SequenceNode {
		return sc.selectItem(base, sel, rest, p, at)
	}
	if !ok || p.Kind != yaml.MappingNode || isIntrinsic(p) {
		return nil, false, nil
	}
	if sel == "*" {
		var vals []*yaml.Node
		for i := 0; i+1 < len(p.Content); i += 2 {
			if rest == "" {
				vals = append(vals, strNode(p.Content[i].Value))
				continue
			}
			v, found := walkPath(p.Content[i+1], rest)
			if !found {
				return nil, true, sc.errorf(at, ErrInvalid, "%s[*].%s: entry %s has no field %s", base, rest, p.Content[i].Value, rest)
			}
			vals = append(vals, clone(v))
		}
		return seqNode(vals...), true, nil
	}
	v := mapGet(p, sel)
	if v == nil {
		return nil, true, sc.errorf(at, ErrInvalid, "%s[%s]: parameter %s has no key %s", base, sel, base, sel)
	}
	if rest != "" {
		x, found := walkPath(v, rest)
		if !found {
			return nil, true, sc.errorf(at, ErrInvalid, "%s[%s].%s: no field %s", base, sel, rest, rest)
		}
		v = x
	}
	return clone(v), true, nil
}

// selectItem resolves base[sel].rest on a list parameter: sel is an index
// or * for every item.
func (sc *scope) selectItem(base, sel, rest string, p, at *yaml.Node) (*yaml.Node, bool, error) {
	items := p.Content
	if sel != "*" {
		i, err := strconv.Atoi(sel)
		if err != nil || i < 0 || i >= len(p.Content) {
			return nil, true, sc.errorf(at, ErrInvalid, "%s[%s]: parameter %s %s", base, sel, base, indexRange(len(p.Content)))
		}
		items = p.Content[i : i+1]
	}
	var vals []*yaml.Node
	for _, x := range items {
		if rest != "" {
			y, found := walkPath(x, rest)
			if !found {
				return nil, true, sc.errorf(at, ErrInvalid, "%s[%s].%s: an item of parameter %s has no field %s", base, sel, rest, base, rest)
			}
			x = y
		}
		vals = append(vals, clone(x))
	}
	if sel == "*" {
		return seqNode(vals...), true, nil
	}
	return vals[0], true, nil
}

// topDefault returns the Default of the top template's parameter when n is
// a Ref to one (a value known at packaging time), else n.
func (e *engine) topDefault(n *yaml.Node) *yaml.Node {
	if k, v, ok := single(n); ok && k == "Ref" && isStr(v) {
		if d := mapGet(mapGet(mapGet(e.topRoot, "Parameters"), v.Value), "Default"); d != nil {
			return d
		}
	}
	return n
}

// indexRange says which indexes a list of n items has.
func indexRange(n int) string {
	switch n {
	case 0:
		return "is an empty list; only * selects from it"
	case 1:
		return "is a list of 1 item; index it with 0 or *"
	}
	return "is a list of " + plural.Count(n, "item") + "; index it with 0 to " + strconv.Itoa(n-1) + " or *"
}
