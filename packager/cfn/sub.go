package cfn

import (
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/internal/plural"
)

// replaceConsts replaces ${Const::name} (and rain's ${Rain::name}) in a Sub
// string with the constant's text.
func (sc *scope) replaceConsts(s string, at *yaml.Node) (string, error) {
	if !strings.Contains(s, "${Const::") && !strings.Contains(s, "${Rain::") {
		return s, nil
	}
	var b strings.Builder
	for {
		i, pre := strings.Index(s, "${Const::"), "${Const::"
		if r := strings.Index(s, "${Rain::"); r >= 0 && (i < 0 || r < i) {
			i, pre = r, "${Rain::"
		}
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		name := s[i+len(pre) : i+j]
		v, ok := sc.consts[name]
		if !ok {
			return "", sc.errorf(at, ErrInvalid, "%s%s}: no constant %s in the Constants section", pre, name, name)
		}
		if !isScalar(v) {
			fix := "!Ref Const::" + name
			if pre == "${Rain::" {
				fix = "!Rain::Constant " + name
			}
			return "", sc.errorf(at, ErrInvalid, "%s%s}: the constant is not a string; use %s", pre, name, fix)
		}
		b.WriteString(s[:i])
		b.WriteString(v.Value)
		s = s[i+j+1:]
		if !sc.e.fits(int64(b.Len())) {
			return "", sc.tooLarge(at, "Fn::Sub")
		}
	}
}

// fnSub resolves Fn::Sub: variables naming parameters, module outputs and
// resources are replaced or renamed; ${!Literal} is left alone; a string
// with no variable left becomes a plain string.
func (sc *scope) fnSub(n, arg *yaml.Node) (*yaml.Node, error) {
	var str *yaml.Node
	var vars *yaml.Node
	switch {
	case isStr(arg):
		str = arg
	case arg.Kind == yaml.SequenceNode && len(arg.Content) == 2 && isStr(arg.Content[0]) && arg.Content[1].Kind == yaml.MappingNode:
		str = arg.Content[0]
		r, err := sc.resolve(arg.Content[1])
		if err != nil {
			return nil, err
		}
		vars = r
	case arg.Kind == yaml.SequenceNode && len(arg.Content) == 1 && isStr(arg.Content[0]):
		str = arg.Content[0]
	default:
		return nil, sc.errorf(arg, ErrInvalid, "Fn::Sub needs a string or [string, {variables}]")
	}
	s, err := sc.replaceConsts(str.Value, str)
	if err != nil {
		return nil, err
	}
	extra := mapNode()
	if vars != nil {
		// Variables given as plain values are written into the string.
		kept := mapNode()
		for i := 0; i+1 < len(vars.Content); i += 2 {
			if why := notText(vars.Content[i].Value, vars.Content[i+1]); why != "" {
				return nil, sc.errorf(vars.Content[i], ErrInvalid, "Fn::Sub variable %s is %s", vars.Content[i].Value, why)
			}
			if v := vars.Content[i+1]; isScalar(v) && v.Tag != tagNull {
				text := escapeSub(v.Value)
				if uses := strings.Count(s, "${"+vars.Content[i].Value+"}"); !sc.e.fits(int64(len(s)) + int64(uses)*int64(len(text))) {
					return nil, sc.tooLarge(n, "Fn::Sub")
				}
				s = replaceVar(s, vars.Content[i].Value, text)
			} else {
				kept.Content = append(kept.Content, vars.Content[i], v)
			}
		}
		vars = kept
		extra = vars
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "${")
		if i < 0 {
			b.WriteString(rest)
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:i])
		name := rest[i+2 : i+j]
		rest = rest[i+j+1:]
		if strings.HasPrefix(name, "!") || (vars != nil && mapGet(vars, name) != nil) {
			b.WriteString("${" + name + "}")
			continue
		}
		text, err := sc.subVar(name, n, extra)
		if err != nil {
			return nil, err
		}
		b.WriteString(text)
		if !sc.e.fits(int64(b.Len())) {
			return nil, sc.tooLarge(n, "Fn::Sub")
		}
	}
	out := b.String()
	if len(extra.Content) == 0 {
		if !hasVars(out) && !strings.Contains(out, "${!") {
			r := strNode(out)
			r.Line, r.Column = str.Line, str.Column
			return r, nil
		}
		r := strNode(out)
		r.Style = str.Style
		return fn("Fn::Sub", r, n), nil
	}
	return fn("Fn::Sub", seqNode(strNode(out), extra), n), nil
}

// replaceVar replaces ${name} in s.
func replaceVar(s, name, text string) string {
	return strings.ReplaceAll(s, "${"+name+"}", text)
}

// hasVars reports whether s holds a ${Var} (not ${!Literal}).
func hasVars(s string) bool {
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return false
		}
		s = s[i+2:]
		if !strings.HasPrefix(s, "!") && strings.IndexByte(s, '}') >= 0 {
			return true
		}
	}
}

// escapeSub makes literal text safe inside a Sub string.
func escapeSub(s string) string {
	return strings.ReplaceAll(s, "${", "${!")
}

// subVar returns the text that replaces ${name} in a Sub string. Values
// that cannot be written as text are passed as Sub variables in extra.
func (sc *scope) subVar(name string, at, extra *yaml.Node) (string, error) {
	base, path, dotted := cutName(name)
	if b, sel, ok := bracket(base); ok {
		v, handled, err := sc.selectAtt(b, sel, path, at)
		if err != nil {
			return "", err
		}
		if handled {
			return sc.valueText(name, v, extra, at)
		}
	}
	if g := sc.groups[base]; g != nil && dotted && sc.mods[base] == nil && sc.res[base] == "" {
		sel, rest, _ := strings.Cut(path, ".")
		v, _, err := sc.selectAtt(base, sel, rest, at)
		if err != nil {
			return "", err
		}
		return sc.valueText(name, v, extra, at)
	}
	if sc.hasParams() {
		if v, ok, err := sc.param(base, at); err != nil {
			return "", err
		} else if ok {
			if dotted {
				x, found := walkPath(v, path)
				if !found {
					return "", sc.errorf(at, ErrInvalid, "${%s}: parameter %s has no field %s", name, base, path)
				}
				v = x
			}
			return sc.valueText(name, v, extra, at)
		}
	}
	if m := sc.mods[base]; m != nil && dotted {
		if err := sc.expand(m); err != nil {
			return "", err
		}
		if m.state == 3 {
			return "", sc.errorf(at, ErrInvalid, "${%s}: module %s is removed by its condition", name, base)
		}
		v, err := m.output(sc, path, at)
		if err != nil {
			return "", err
		}
		if v == nil {
			return "", nil
		}
		return sc.valueText(name, v, extra, at)
	}
	if f, ok := sc.res[base]; ok {
		if dotted {
			return "${" + f + "." + path + "}", nil
		}
		return "${" + f + "}", nil
	}
	if sc.removed[base] {
		return "", sc.errorf(at, ErrInvalid, "${%s}: the resource is removed by its condition", name)
	}
	if dotted {
		sc.e.note(attKind, base, sc, at)
	} else {
		sc.e.note(refKind, name, sc, at)
	}
	return "${" + name + "}", nil
}

// listFunctions are the intrinsic functions that return a list.
var listFunctions = map[string]bool{"Fn::Split": true, "Fn::GetAZs": true, "Fn::Cidr": true}

// notText says why v, the value of a Sub variable, cannot stand in a Sub
// string, or "" when it can: a list or an object is an error in
// CloudFormation's Fn::Sub.
func notText(name string, v *yaml.Node) string {
	switch {
	case v.Kind == yaml.SequenceNode:
		return "a list of " + plural.Count(len(v.Content), "value") + "; join them (!Join [\",\", ...]) or pick one ([0] or [key])"
	case v.Kind == yaml.MappingNode && !isIntrinsic(v):
		return "an object; name one of its fields (${" + name + ".Field})"
	}
	if k, _, ok := single(v); ok && listFunctions[k] {
		return "a list (" + k + "); join it (!Join [\",\", ...]) or pick one (!Select)"
	}
	return ""
}

// valueText writes value v into a Sub string; a list or an object is an
// error at the Sub.
func (sc *scope) valueText(name string, v, extra, at *yaml.Node) (string, error) {
	if why := notText(name, v); why != "" {
		return "", sc.errorf(at, ErrInvalid, "${%s} in Fn::Sub is %s", name, why)
	}
	return valueText(name, v, extra), nil
}

// valueText writes value v, which notText accepts, into a Sub string.
func valueText(name string, v, extra *yaml.Node) string {
	if isScalar(v) {
		if v.Tag == tagNull {
			return ""
		}
		return escapeSub(v.Value)
	}
	if k, a, ok := single(v); ok {
		switch {
		case k == "Ref" && isStr(a):
			return "${" + a.Value + "}"
		case k == "Fn::GetAtt" && a.Kind == yaml.SequenceNode && len(a.Content) == 2 && isStr(a.Content[0]) && isStr(a.Content[1]):
			return "${" + a.Content[0].Value + "." + a.Content[1].Value + "}"
		case k == "Fn::Sub" && isStr(a):
			return a.Value
		case k == "Fn::Sub" && a.Kind == yaml.SequenceNode && len(a.Content) == 2 && isStr(a.Content[0]) && a.Content[1].Kind == yaml.MappingNode:
			for i := 0; i+1 < len(a.Content[1].Content); i += 2 {
				if mapGet(extra, a.Content[1].Content[i].Value) == nil {
					extra.Content = append(extra.Content, a.Content[1].Content[i], a.Content[1].Content[i+1])
				}
			}
			return a.Content[0].Value
		}
	}
	// A list, an object or another function: pass it as a variable.
	vn := subVarName(name, extra)
	extra.Content = append(extra.Content, strNode(vn), v)
	return "${" + vn + "}"
}

func subVarName(name string, extra *yaml.Node) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	base := b.String()
	if base == "" {
		base = "Var"
	}
	vn := base
	for i := 1; mapGet(extra, vn) != nil; i++ {
		vn = base + strings.Repeat("X", i)
	}
	return vn
}
