package cfn

import (
	"errors"
	"maps"
	"strconv"
	"strings"

	"github.com/cloud-assembly/assemble/packager/cfn/flatten"
	"github.com/cloud-assembly/assemble/packager/cfn/merge"

	yaml "go.yaml.in/yaml/v3"
)

// intrinsic resolves one function call n = {name: arg} in a scope. A nil
// result means AWS::NoValue: the caller drops the key or list item.
type intrinsic func(sc *scope, n, arg *yaml.Node) (*yaml.Node, error)

// intrinsics is the one table every function call is dispatched from.
// Functions not listed keep their name and have their arguments resolved.
var intrinsics map[string]intrinsic

func init() {
	intrinsics = map[string]intrinsic{
		"Ref":            (*scope).fnRef,
		"Fn::GetAtt":     (*scope).fnGetAtt,
		"Fn::Sub":        (*scope).fnSub,
		"Fn::If":         (*scope).fnIf,
		"Fn::Select":     (*scope).fnSelect,
		"Fn::Join":       (*scope).fnJoin,
		"Fn::Split":      (*scope).fnSplit,
		"Fn::Length":     (*scope).fnLength,
		"Fn::FindInMap":  (*scope).fnFindInMap,
		merge.Name:       (*scope).fnMerge,
		"Fn::InsertFile": (*scope).fnInsertFile,
		"Fn::Invoke":     (*scope).fnInvoke,
		"Fn::Flatten":    (*scope).fnFlatten,
	}
	maps.Copy(intrinsics, rainIntrinsics)
}

// resolve returns a resolved copy of n in the scope's terms translated to
// the top template's terms, or nil when n is AWS::NoValue.
func (sc *scope) resolve(n *yaml.Node) (*yaml.Node, error) {
	switch n.Kind {
	case yaml.ScalarNode:
		c := *n
		return &c, nil
	case yaml.SequenceNode:
		out := &yaml.Node{Kind: n.Kind, Tag: n.Tag, Style: n.Style, Line: n.Line, Column: n.Column, Content: make([]*yaml.Node, 0, len(n.Content))}
		for _, x := range n.Content {
			r, err := sc.resolve(x)
			if err != nil {
				return nil, err
			}
			if r != nil {
				out.Content = append(out.Content, r)
			}
		}
		return out, nil
	case yaml.MappingNode:
		if k, v, ok := single(n); ok {
			if f := intrinsics[k]; f != nil {
				r, err := f(sc, n, v)
				if err != nil || r == nil {
					return r, err
				}
				return r, sc.produced(n, n, k, r)
			}
		}
		out := &yaml.Node{Kind: n.Kind, Tag: n.Tag, Style: n.Style, Line: n.Line, Column: n.Column, Content: make([]*yaml.Node, 0, len(n.Content))}
		for i := 0; i+1 < len(n.Content); i += 2 {
			r, err := sc.resolve(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			if r != nil {
				out.Content = append(out.Content, n.Content[i], r)
			}
		}
		return out, nil
	}
	return nil, sc.errorf(n, ErrInvalid, "unexpected YAML node")
}

// keep returns {name: arg} with arg resolved; nil items become NoValue refs
// again so that the call keeps its shape.
func (sc *scope) keep(n *yaml.Node, name string, arg *yaml.Node) (*yaml.Node, error) {
	r, err := sc.resolve(arg)
	if err != nil {
		return nil, err
	}
	if r == nil {
		r = noValue(arg)
	}
	return fn(name, r, n), nil
}

func noValue(at *yaml.Node) *yaml.Node {
	return fn("Ref", strNode("AWS::NoValue"), at)
}

func (sc *scope) fnRef(n, arg *yaml.Node) (*yaml.Node, error) {
	if !isStr(arg) {
		return nil, sc.errorf(arg, ErrInvalid, "Ref needs a name")
	}
	if arg.Value == "AWS::NoValue" {
		return nil, nil
	}
	return sc.ref(arg.Value, n)
}

// ref resolves Ref name.
func (sc *scope) ref(name string, at *yaml.Node) (*yaml.Node, error) {
	if c, ok := strings.CutPrefix(name, "Const::"); ok {
		if _, found := sc.consts[c]; !found {
			return nil, sc.errorf(at, ErrInvalid, "Ref %s: no constant %s in the Constants section", name, c)
		}
		return sc.constant(c, at)
	}
	if sc.hasParams() {
		if v, ok, err := sc.param(name, at); err != nil || ok {
			return clone(v), err
		}
		if base, path, ok := strings.Cut(name, "."); ok {
			if v, ok, err := sc.param(base, at); err != nil {
				return nil, err
			} else if ok {
				x, found := walkPath(v, path)
				if !found {
					return nil, sc.errorf(at, ErrInvalid, "Ref %s: parameter %s has no field %s", name, base, path)
				}
				return clone(x), nil
			}
		}
	}
	if f, ok := sc.res[name]; ok {
		return fn("Ref", strNode(f), at), nil
	}
	if base, sel, ok := bracket(name); ok {
		// Name[key] / Name[*]: ForEach instances (or a parameter's entries), as
		// ${Name[key]} in a Sub.
		if v, handled, err := sc.selectAtt(base, sel, "", at); handled || err != nil {
			return v, err
		}
	}
	if sc.removed[name] {
		return nil, sc.errorf(at, ErrInvalid, "Ref %s: the resource is removed by its condition", name)
	}
	sc.e.note(refKind, name, sc, at)
	return fn("Ref", strNode(name), at), nil
}

func (sc *scope) fnGetAtt(n, arg *yaml.Node) (*yaml.Node, error) {
	var target, attr *yaml.Node
	switch {
	case isStr(arg):
		a, b, ok := cutName(arg.Value)
		if _, _, br := bracket(arg.Value); !ok && br {
			a, b, ok = arg.Value, "", true // Map[key]: the whole entry
		}
		if !ok {
			return nil, sc.errorf(arg, ErrInvalid, "Fn::GetAtt %q needs the form Resource.Attribute", arg.Value)
		}
		target, attr = strNode(a), strNode(b)
	case arg.Kind == yaml.SequenceNode && len(arg.Content) == 2 && isStr(arg.Content[0]):
		target = arg.Content[0]
		r, err := sc.resolve(arg.Content[1])
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, sc.errorf(arg.Content[1], ErrInvalid, "Fn::GetAtt attribute resolves to AWS::NoValue")
		}
		attr = r
	case arg.Kind == yaml.SequenceNode && len(arg.Content) == 2 && arg.Content[0].Kind == yaml.MappingNode:
		// [!Sub "Name${Id}", Attr] inside CloudFormation's Fn::ForEach:
		// the name is known at deploy time.
		return sc.keep(n, "Fn::GetAtt", arg)
	default:
		return nil, sc.errorf(arg, ErrInvalid, "Fn::GetAtt needs [Resource, Attribute]")
	}
	if !isStr(attr) {
		name := sc.rename(target.Value)
		if name == target.Value {
			sc.e.note(attKind, name, sc, n)
		}
		return fn("Fn::GetAtt", seqNode(strNode(name), attr), n), nil
	}
	return sc.getAtt(target.Value, attr.Value, n)
}

// rename maps a local logical ID to its final name (unknown names are kept).
func (sc *scope) rename(name string) string {
	if f, ok := sc.res[name]; ok {
		return f
	}
	return name
}

// getAtt resolves Fn::GetAtt [name, attr].
func (sc *scope) getAtt(name, attr string, at *yaml.Node) (*yaml.Node, error) {
	if base, sel, ok := bracket(name); ok {
		if v, handled, err := sc.selectAtt(base, sel, attr, at); handled || err != nil {
			return v, err
		}
	}
	if sc.mods[name] == nil && sc.res[name] == "" {
		sel, rest, _ := strings.Cut(attr, ".")
		if v, handled, err := sc.selectAtt(name, sel, rest, at); sc.groups[name] != nil || (sel == "*" && handled) || err != nil {
			return v, err
		}
	}
	if m := sc.mods[name]; m != nil {
		if err := sc.expand(m); err != nil {
			return nil, err
		}
		if m.state == 3 {
			return nil, sc.errorf(at, ErrInvalid, "GetAtt %s.%s: module %s is removed by its condition", name, attr, name)
		}
		return m.output(sc, attr, at)
	}
	if f, ok := sc.res[name]; ok {
		return fn("Fn::GetAtt", seqNode(strNode(f), strNode(attr)), at), nil
	}
	if sc.removed[name] {
		return nil, sc.errorf(at, ErrInvalid, "GetAtt %s.%s: the resource is removed by its condition", name, attr)
	}
	if sc.hasParams() {
		if v, ok, err := sc.param(name, at); err != nil {
			return nil, err
		} else if ok && (v.Kind == yaml.MappingNode || v.Kind == yaml.SequenceNode) && !isIntrinsic(v) {
			x, found := walkPath(v, attr)
			if !found {
				return nil, sc.errorf(at, ErrInvalid, "GetAtt %s.%s: parameter %s has no field %s", name, attr, name, attr)
			}
			return clone(x), nil
		}
	}
	sc.e.note(attKind, name, sc, at)
	return fn("Fn::GetAtt", seqNode(strNode(name), strNode(attr)), at), nil
}

func (sc *scope) fnSelect(n, arg *yaml.Node) (*yaml.Node, error) {
	if arg.Kind != yaml.SequenceNode || len(arg.Content) != 2 {
		return nil, sc.errorf(arg, ErrInvalid, "Fn::Select needs [index, list]")
	}
	idx, err := sc.resolve(arg.Content[0])
	if err != nil {
		return nil, err
	}
	list, err := sc.resolve(arg.Content[1])
	if err != nil {
		return nil, err
	}
	if idx != nil && list != nil && isScalar(idx) && list.Kind == yaml.SequenceNode && !isIntrinsic(list) {
		i, err := strconv.Atoi(idx.Value)
		if err != nil || i < 0 || i >= len(list.Content) {
			return nil, sc.errorf(arg.Content[0], ErrInvalid, "Fn::Select index %s is out of range for a list of %d", idx.Value, len(list.Content))
		}
		return list.Content[i], nil
	}
	if idx == nil {
		idx = noValue(arg.Content[0])
	}
	if list == nil {
		list = noValue(arg.Content[1])
	}
	return fn("Fn::Select", seqNode(idx, list), n), nil
}

func (sc *scope) fnJoin(n, arg *yaml.Node) (*yaml.Node, error) {
	if arg.Kind != yaml.SequenceNode || len(arg.Content) != 2 {
		return nil, sc.errorf(arg, ErrInvalid, "Fn::Join needs [delimiter, list]")
	}
	r, err := sc.resolve(arg)
	if err != nil {
		return nil, err
	}
	if len(r.Content) == 2 && isScalar(r.Content[0]) && r.Content[1].Kind == yaml.SequenceNode {
		parts := make([]string, 0, len(r.Content[1].Content))
		size := int64(0)
		for i, x := range r.Content[1].Content {
			if !isScalar(x) || x.Tag == tagNull {
				return fn("Fn::Join", r, n), nil
			}
			parts = append(parts, x.Value)
			if size += int64(len(x.Value)); i > 0 {
				size += int64(len(r.Content[0].Value))
			}
		}
		if !sc.e.fits(size) {
			return nil, sc.tooLarge(n, "Fn::Join")
		}
		s := strNode(strings.Join(parts, r.Content[0].Value))
		s.Line, s.Column = n.Line, n.Column
		return s, nil
	}
	return fn("Fn::Join", r, n), nil
}

// fnSplit collapses Fn::Split [delimiter, string] when both are known.
func (sc *scope) fnSplit(n, arg *yaml.Node) (*yaml.Node, error) {
	if arg.Kind != yaml.SequenceNode || len(arg.Content) != 2 {
		return nil, sc.errorf(arg, ErrInvalid, "Fn::Split needs [delimiter, string]")
	}
	r, err := sc.resolve(arg)
	if err != nil {
		return nil, err
	}
	if len(r.Content) != 2 || !isStr(r.Content[0]) || r.Content[0].Value == "" || !isScalar(r.Content[1]) || r.Content[1].Tag == tagNull {
		return fn("Fn::Split", r, n), nil
	}
	if items := int64(strings.Count(r.Content[1].Value, r.Content[0].Value)) + 1; !sc.e.fits(items*nodeCost + int64(len(r.Content[1].Value))) {
		return nil, sc.tooLarge(n, "Fn::Split")
	}
	out := seqNode()
	out.Line, out.Column = n.Line, n.Column
	for _, part := range strings.Split(r.Content[1].Value, r.Content[0].Value) {
		p := strNode(part)
		p.Line, p.Column = n.Line, n.Column
		out.Content = append(out.Content, p)
	}
	return out, nil
}

// fnLength collapses Fn::Length of a list known at packaging time.
func (sc *scope) fnLength(n, arg *yaml.Node) (*yaml.Node, error) {
	r, err := sc.resolve(arg)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, sc.errorf(arg, ErrInvalid, "Fn::Length needs a list")
	}
	if r.Kind == yaml.SequenceNode {
		c := intNode(len(r.Content))
		c.Line, c.Column = n.Line, n.Column
		return c, nil
	}
	return fn("Fn::Length", r, n), nil
}

func (sc *scope) fnFindInMap(n, arg *yaml.Node) (*yaml.Node, error) {
	if arg.Kind != yaml.SequenceNode || len(arg.Content) < 3 || len(arg.Content) > 4 {
		return nil, sc.errorf(arg, ErrInvalid, "Fn::FindInMap needs [MapName, TopLevelKey, SecondLevelKey]")
	}
	r, err := sc.resolve(arg)
	if err != nil {
		return nil, err
	}
	if len(r.Content) != len(arg.Content) || !isStr(r.Content[0]) {
		return fn("Fn::FindInMap", r, n), nil
	}
	name := r.Content[0].Value
	m, ok := sc.mappings[name]
	if !ok {
		return fn("Fn::FindInMap", r, n), nil
	}
	if isScalar(r.Content[1]) && isScalar(r.Content[2]) {
		if top := mapGet(m, r.Content[1].Value); top != nil {
			if v := mapGet(top, r.Content[2].Value); v != nil {
				return clone(v), nil
			}
		}
		if len(r.Content) == 4 {
			if d := mapGet(r.Content[3], "DefaultValue"); d != nil {
				return d, nil
			}
		}
		return nil, sc.errorf(n, ErrInvalid, "Fn::FindInMap: mapping %s has no %s.%s", name, r.Content[1].Value, r.Content[2].Value)
	}
	if sc.top {
		return fn("Fn::FindInMap", r, n), nil
	}
	final, ok := sc.mapEmit[name]
	if !ok {
		final = sc.prefix + name
		if err := sc.e.emitMapping(sc, final, m, n); err != nil {
			return nil, err
		}
		sc.mapEmit[name] = final
	}
	r.Content[0] = strNode(final)
	return fn("Fn::FindInMap", r, n), nil
}

func (sc *scope) fnIf(n, arg *yaml.Node) (*yaml.Node, error) {
	if arg.Kind != yaml.SequenceNode || len(arg.Content) != 3 {
		return nil, sc.errorf(arg, ErrInvalid, "Fn::If needs [Condition, ValueIfTrue, ValueIfFalse]")
	}
	var st tri
	var cond *yaml.Node
	if isStr(arg.Content[0]) {
		s, final, err := sc.condName(arg.Content[0].Value, arg.Content[0])
		if err != nil {
			return nil, err
		}
		st, cond = s, strNode(final)
		cond.Line, cond.Column = arg.Content[0].Line, arg.Content[0].Column
	} else {
		s, expr, err := sc.condExpr(arg.Content[0])
		if err != nil {
			return nil, err
		}
		st, cond = s, expr
	}
	switch st {
	case condTrue:
		return sc.resolve(arg.Content[1])
	case condFalse:
		return sc.resolve(arg.Content[2])
	}
	a, err := sc.resolve(arg.Content[1])
	if err != nil {
		return nil, err
	}
	b, err := sc.resolve(arg.Content[2])
	if err != nil {
		return nil, err
	}
	if a == nil {
		a = noValue(arg.Content[1])
	}
	if b == nil {
		b = noValue(arg.Content[2])
	}
	return fn("Fn::If", seqNode(cond, a, b), n), nil
}

// fnMerge resolves Fn::Merge (package merge) once its arguments are known.
func (sc *scope) fnMerge(n, arg *yaml.Node) (*yaml.Node, error) {
	r, err := sc.resolve(arg)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, sc.errorf(arg, ErrInvalid, "Fn::Merge needs a list of objects or lists")
	}
	out, err := merge.Merge(r)
	if err != nil {
		return nil, sc.errorf(n, ErrInvalid, "%v", err)
	}
	return out, nil
}

// maxInsertFile bounds the size of a file Fn::InsertFile inserts.
const maxInsertFile = 1 << 20

// fnInsertFile inserts a file's content as a string. The path is relative
// to the file that holds the call and goes through the Loader, so it cannot
// leave the project folder.
func (sc *scope) fnInsertFile(n, arg *yaml.Node) (*yaml.Node, error) {
	if !isStr(arg) || arg.Value == "" {
		return nil, sc.errorf(arg, ErrInvalid, "Fn::InsertFile needs a file path")
	}
	_, data, err := sc.e.load(sc.file, arg.Value, "")
	if err != nil {
		return nil, wrapLoad(sc.file, arg.Line, arg.Column, sc.chain, err)
	}
	if len(data) > maxInsertFile {
		return nil, sc.errorf(arg, ErrTooLarge, "Fn::InsertFile %s: file is larger than %d bytes", arg.Value, maxInsertFile)
	}
	s := strNode(string(data))
	s.Line, s.Column = n.Line, n.Column
	if strings.Contains(s.Value, "\n") {
		s.Style = yaml.LiteralStyle
	}
	return s, nil
}

// fnInvoke evaluates Fn::Invoke [Module, {Properties}, Output]: the module
// is expanded again, with the given properties replacing its own, and the
// output is returned. Output may be a list of output names: their values
// are returned as a list, in that order, except that a list of one name
// returns that one value (as the aws-cli does). The resources of that
// evaluation are not emitted.
func (sc *scope) fnInvoke(n, arg *yaml.Node) (*yaml.Node, error) {
	if arg.Kind != yaml.SequenceNode || len(arg.Content) != 3 || !isStr(arg.Content[0]) || !invokeOutputs(arg.Content[2]) {
		return nil, sc.errorf(arg, ErrInvalid, "Fn::Invoke needs [Module, {Properties}, Output] or [Module, {Properties}, [Output, ...]]")
	}
	m := sc.mods[arg.Content[0].Value]
	if m == nil {
		return nil, sc.errorf(arg.Content[0], ErrInvalid, "Fn::Invoke: no module %s in this file's Modules", arg.Content[0].Value)
	}
	props, err := sc.resolve(arg.Content[1])
	if err != nil {
		return nil, err
	}
	if props != nil && props.Kind != yaml.MappingNode {
		return nil, sc.errorf(arg.Content[1], ErrInvalid, "Fn::Invoke: the properties must be a mapping")
	}
	child, _, _, err := sc.instantiate(m, props, true)
	if err != nil {
		return nil, err
	}
	inv := &module{name: m.name, key: m.key, entry: m.entry, state: 2, child: child}
	outs := arg.Content[2]
	if outs.Kind != yaml.SequenceNode {
		return inv.output(sc, outs.Value, outs)
	}
	if len(outs.Content) == 1 {
		return inv.output(sc, outs.Content[0].Value, outs.Content[0])
	}
	list := seqNode()
	list.Line, list.Column = outs.Line, outs.Column
	for _, o := range outs.Content {
		v, err := inv.output(sc, o.Value, o)
		if err != nil {
			return nil, err
		}
		if v != nil { // an output that is AWS::NoValue, as in any list
			list.Content = append(list.Content, v)
		}
	}
	return list, nil
}

// invokeOutputs reports whether n names Fn::Invoke's outputs: one output
// name, or a non-empty list of them.
func invokeOutputs(n *yaml.Node) bool {
	if isStr(n) {
		return true
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return false
	}
	for _, o := range n.Content {
		if !isStr(o) {
			return false
		}
	}
	return true
}

// fnFlatten resolves Fn::Flatten (package flatten). A Source that refers to
// a parameter of the top template uses the parameter's Default.
func (sc *scope) fnFlatten(n, arg *yaml.Node) (*yaml.Node, error) {
	r, err := sc.resolve(arg)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, sc.errorf(arg, ErrInvalid, "Fn::Flatten needs a list or {Source: ...}")
	}
	if r.Kind == yaml.MappingNode {
		if src := mapGet(r, "Source"); src != nil {
			mapSet(r, "Source", sc.e.topDefault(src))
		}
	}
	// What Flatten may build is bounded by the room left, so that it
	// stops there rather than at its own node limit.
	out, err := flatten.Limited(r, int(sc.e.room()/nodeCost))
	if errors.Is(err, flatten.ErrTooLarge) {
		return nil, sc.tooLarge(n, "Fn::Flatten")
	}
	if err != nil {
		return nil, sc.errorf(n, ErrInvalid, "%v", err)
	}
	return out, nil
}
