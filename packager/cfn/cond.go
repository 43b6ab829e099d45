package cfn

import (
	yaml "go.yaml.in/yaml/v3"
)

// tri is the value of a condition at packaging time.
type tri int

const (
	condUnknown tri = iota // depends on deploy-time values
	condTrue
	condFalse
)

type condResult struct {
	busy  bool
	state tri
	final string
}

// condRef evaluates a Condition attribute (a condition name).
func (sc *scope) condRef(v *yaml.Node) (tri, string, error) {
	if k, a, ok := single(v); ok && k == "Ref" && isStr(a) && !sc.top {
		// Condition: !Ref Param in a module (rain's modules): the
		// parameter's value names a condition of the including file, in
		// the top template's terms, as every parameter value is.
		if p, found, err := sc.param(a.Value, a); err != nil {
			return 0, "", err
		} else if found && isStr(p) {
			return condUnknown, p.Value, nil
		}
	}
	if !isStr(v) {
		return 0, "", sc.errorf(v, ErrInvalid, "Condition must name a condition")
	}
	return sc.condName(v.Value, v)
}

// condName evaluates the named condition of the scope. An unknown condition
// is emitted into the parent under its final name, once.
func (sc *scope) condName(name string, at *yaml.Node) (tri, string, error) {
	if sc.top {
		return condUnknown, name, nil
	}
	if r := sc.condMemo[name]; r != nil {
		if r.busy {
			return 0, "", sc.errorf(at, ErrCycle, "condition %s refers to itself", name)
		}
		return r.state, r.final, nil
	}
	expr, ok := sc.conds[name]
	if !ok {
		return 0, "", sc.errorf(at, ErrInvalid, "condition %s is not defined in the Conditions section of %s", name, sc.file)
	}
	r := &condResult{busy: true}
	sc.condMemo[name] = r
	st, rexpr, err := sc.condExpr(expr)
	if err != nil {
		return 0, "", err
	}
	r.busy, r.state = false, st
	if k, v, ok := single(rexpr); ok && k == "Condition" && st == condUnknown {
		// An alias of another condition (And/Or whose other parts are
		// known): uses name that one; it is still emitted, as every
		// unresolved condition is, with a copy of that one's expression
		// (a condition cannot be a bare Condition).
		r.final = v.Value
		if target, ok := sc.e.condExprs[v.Value]; ok {
			if err := sc.e.emitCondition(sc, sc.prefix+name, clone(target), at); err != nil {
				return 0, "", err
			}
		}
	} else if st == condUnknown {
		r.final = sc.prefix + name
		if err := sc.e.emitCondition(sc, r.final, rexpr, at); err != nil {
			return 0, "", err
		}
	}
	return r.state, r.final, nil
}

// condExpr evaluates a condition expression. When the result is unknown it
// also returns the expression in the top template's terms, with the parts
// that are known left out.
func (sc *scope) condExpr(n *yaml.Node) (tri, *yaml.Node, error) {
	k, v, ok := single(n)
	if !ok {
		return 0, nil, sc.errorf(n, ErrInvalid, "a condition must be one of Fn::Equals, Fn::And, Fn::Or, Fn::Not or Condition")
	}
	switch k {
	case "Condition":
		st, final, err := sc.condRef(v)
		if err != nil || st != condUnknown {
			return st, nil, err
		}
		return condUnknown, fn("Condition", strNode(final), n), nil
	case "Fn::Equals":
		if v.Kind != yaml.SequenceNode || len(v.Content) != 2 {
			return 0, nil, sc.errorf(v, ErrInvalid, "Fn::Equals needs two values")
		}
		a, err := sc.resolve(v.Content[0])
		if err != nil {
			return 0, nil, err
		}
		b, err := sc.resolve(v.Content[1])
		if err != nil {
			return 0, nil, err
		}
		if a != nil && b != nil && isScalar(a) && isScalar(b) {
			if a.Value == b.Value {
				return condTrue, nil, nil
			}
			return condFalse, nil, nil
		}
		if a == nil {
			a = noValue(v.Content[0])
		}
		if b == nil {
			b = noValue(v.Content[1])
		}
		return condUnknown, fn("Fn::Equals", seqNode(a, b), n), nil
	case "Fn::Not":
		if v.Kind != yaml.SequenceNode || len(v.Content) != 1 {
			return 0, nil, sc.errorf(v, ErrInvalid, "Fn::Not needs a list of one condition")
		}
		st, e, err := sc.condExpr(v.Content[0])
		switch {
		case err != nil:
			return 0, nil, err
		case st == condTrue:
			return condFalse, nil, nil
		case st == condFalse:
			return condTrue, nil, nil
		}
		return condUnknown, fn("Fn::Not", seqNode(e), n), nil
	case "Fn::And", "Fn::Or":
		if v.Kind != yaml.SequenceNode || len(v.Content) < 1 {
			return 0, nil, sc.errorf(v, ErrInvalid, "%s needs a list of conditions", k)
		}
		// For And a false part decides; for Or a true one does.
		decide, neutral := condFalse, condTrue
		if k == "Fn::Or" {
			decide, neutral = condTrue, condFalse
		}
		var unknown []*yaml.Node
		for _, x := range v.Content {
			st, e, err := sc.condExpr(x)
			if err != nil {
				return 0, nil, err
			}
			if st == decide {
				return decide, nil, nil
			}
			if st == condUnknown {
				unknown = append(unknown, e)
			}
		}
		switch len(unknown) {
		case 0:
			return neutral, nil, nil
		case 1:
			return condUnknown, unknown[0], nil
		}
		return condUnknown, fn(k, seqNode(unknown...), n), nil
	}
	return 0, nil, sc.errorf(n, ErrInvalid, "%s is not a condition function (use Fn::Equals, Fn::And, Fn::Or, Fn::Not or Condition)", k)
}
