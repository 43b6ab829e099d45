package blueprint

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/packager/blueprint/subst"
)

// Evaluation limits. Load evaluates every substitution it can before
// deploy time, and Package inlines what Load evaluated, so the limits bind
// validation and packaging alike.
const (
	// MaxEvalSize bounds the size of one evaluated result, in list and
	// object items plus string bytes.
	MaxEvalSize = 1 << 20
	// MaxInlineSize bounds the total size of what one blueprint's packaging
	// inlines; past it, references are left for deploy time.
	MaxInlineSize = 4 * MaxEvalSize
	// MaxEvalWork bounds the work one Load spends evaluating, includes
	// counted: one unit per expression evaluated plus the size of every
	// function's arguments and result (items and bytes), and the same for
	// every call of a function value inside map, filter, reduce, sort and
	// flatmap. A blueprint past it fails with ErrEvalLimit within about a
	// second instead of running for hours.
	MaxEvalWork = 1 << 25
)

// fnVal is a function value, as returned by the _g functions, compose,
// pipe, getattr and getelem, or named by a bare core function name.
type fnVal func(args ...any) (any, error)

// errCall is returned by core function implementations for bad input.
var errCall = errors.New("function call failed")

// errTooLarge is returned for a result above MaxEvalSize.
var errTooLarge = fmt.Errorf("evaluates to more than %d items and bytes (the limit for what is evaluated before deploy)", MaxEvalSize)

// errWork is returned, unwrapped, once a Load has spent MaxEvalWork.
var errWork = fmt.Errorf("evaluating the blueprint's substitutions takes more than %d steps; simplify the values that build on each other", MaxEvalWork)

// notKnown marks a substitution that can only be evaluated at deploy time.
var notKnown = errors.New("known only at deploy time")

// evalErr is a failure evaluating one expression, with the expression.
type evalErr struct {
	node subst.Node
	err  error
	bare bool // the message names the expression itself
}

func (e *evalErr) Error() string {
	msg := strings.TrimPrefix(e.err.Error(), errCall.Error()+": ")
	var cx errComplex
	switch c, isCall := e.node.(*subst.Call); {
	case e.bare:
		return msg
	case errors.As(e.err, &cx):
		return "${" + e.node.String() + "} " + msg
	case isCall:
		return c.Name + "(): " + msg
	}
	return "${" + e.node.String() + "}: " + msg
}

func (e *evalErr) Unwrap() error { return e.err }

// valueErr is the failure of a value definition, seen from a reference to
// it: the failure is reported once, at the definition.
type valueErr struct {
	name string
	err  error
}

func (e *valueErr) Error() string { return fmt.Sprintf("values.%s: %v", e.name, e.err) }
func (e *valueErr) Unwrap() error { return e.err }

// workBudget is the evaluation work one Load may still spend, shared by the
// blueprints it loads.
type workBudget struct {
	spent int
}

type result struct {
	v   any
	err error
}

// evaluator evaluates what is known before deploy time: literals, variables
// with values or defaults and values built from them (never secret ones),
// and core function calls on such arguments. datetime, cwd and link are
// never evaluated: they depend on when and where the blueprint is deployed.
// Results are kept per expression, so Load and Package see one evaluation.
type evaluator struct {
	inlined  int // size inlined so far, bounded by MaxInlineSize
	c        *checker
	known    map[string]any
	values   map[string]result
	memo     map[subst.Node]result
	visiting map[string]bool
	work     *workBudget
}

func newEvaluator(c *checker, known map[string]any, work *workBudget) *evaluator {
	k := map[string]any{}
	for name, v := range known {
		if def, ok := c.vars[name]; ok && !def.Secret {
			k[name] = v
		}
	}
	if work == nil {
		work = &workBudget{}
	}
	return &evaluator{c: c, known: k, values: map[string]result{}, memo: map[subst.Node]result{}, visiting: map[string]bool{}, work: work}
}

// charge spends n units of work, failing once the budget is spent.
func (e *evaluator) charge(n int) error {
	e.work.spent += n
	if e.work.spent > MaxEvalWork {
		return errWork
	}
	return nil
}

// eval returns the value of n, notKnown, or an error (an *evalErr, a
// *valueErr, or errWork).
func (e *evaluator) eval(n subst.Node) (any, error) {
	if r, ok := e.memo[n]; ok {
		return r.v, r.err
	}
	v, err := e.evalNode(n)
	e.memo[n] = result{v, err}
	return v, err
}

func (e *evaluator) evalNode(n subst.Node) (any, error) {
	if err := e.charge(1); err != nil {
		return nil, err
	}
	switch n := n.(type) {
	case *subst.Literal:
		switch n.Kind {
		case subst.StringLit:
			return n.Str, nil
		case subst.IntLit:
			return n.Int, nil
		case subst.FloatLit:
			return n.Float, nil
		}
		return n.Bool, nil
	case *subst.Variable:
		if v, ok := e.known[n.Name]; ok {
			return v, nil
		}
	case *subst.Value:
		v, err := e.value(n.Name)
		if err != nil {
			return nil, err
		}
		return e.access(n, v, n.Path)
	case *subst.Resource:
		if e.c.isFuncRef(n) {
			return funcValue(n.Name), nil // metered where it is passed
		}
	case *subst.Call:
		return e.call(n)
	}
	return nil, notKnown
}

// call evaluates a core function call.
func (e *evaluator) call(n *subst.Call) (any, error) {
	if n.Name == "datetime" || n.Name == "cwd" || n.Name == "link" || coreFunctions[n.Name] == nil {
		return nil, notKnown
	}
	args := make([]any, len(n.Args))
	named := map[string]any{}
	for i, a := range n.Args {
		v, err := e.eval(a.Value)
		if err != nil {
			return nil, err
		}
		if f, ok := v.(fnVal); ok {
			v = e.metered(f)
		}
		args[i] = v
		if a.Name != "" {
			named[a.Name] = v
		}
	}
	cost := 1
	if n.Name != "len" { // len reads no more than the argument's header
		cost += sizeOf(args, MaxEvalSize)
	}
	if err := e.charge(cost); err != nil {
		return nil, err
	}
	var v any
	var err error
	if n.Name == "object" {
		v = named
	} else {
		v, err = callCore(n.Name, args)
	}
	if errors.Is(err, errWork) {
		return nil, errWork
	}
	if err != nil {
		return nil, &evalErr{node: n, err: err}
	}
	size := sizeOf(v, MaxEvalSize)
	if size > MaxEvalSize {
		return nil, &evalErr{node: n, err: errTooLarge}
	}
	if err := e.charge(size); err != nil {
		return nil, err
	}
	return e.access(n, v, n.Path)
}

// fnCallCost is what one call of a function value costs beyond its
// arguments and result: such a call allocates and dispatches more than an
// expression step.
const fnCallCost = 24

// metered wraps a function value so that every call of it (inside map,
// filter, reduce, sort, flatmap, compose and pipe) is charged to the work
// budget, arguments and result.
func (e *evaluator) metered(f fnVal) fnVal {
	return func(args ...any) (any, error) {
		if err := e.charge(fnCallCost + sizeOf(args, MaxEvalSize)); err != nil {
			return nil, err
		}
		v, err := f(args...)
		if err != nil {
			return nil, err
		}
		size := sizeOf(v, MaxEvalSize)
		if size > MaxEvalSize {
			return nil, errTooLarge
		}
		if err := e.charge(size); err != nil {
			return nil, err
		}
		return v, nil
	}
}

// value evaluates a value definition. A failure comes back as a
// *valueErr naming the definition where it happened.
func (e *evaluator) value(name string) (any, error) {
	if r, ok := e.values[name]; ok {
		return r.v, r.err
	}
	def, ok := e.c.values[name]
	if !ok || def.Node == nil || def.Secret || e.visiting[name] {
		return nil, notKnown
	}
	e.visiting[name] = true
	defer delete(e.visiting, name)
	var v any
	var err error
	switch {
	case def.inter == nil:
		v, err = parseLiteral(def.Node.Value, def.Type)
	case def.inter.Single() != nil:
		v, err = e.eval(def.inter.Single())
	default:
		v, err = e.interpolate(def.inter)
	}
	if err == nil && def.inter != nil && def.inter.Single() != nil {
		one := def.inter.Single()
		// A value of the wrong type is not passed on to what uses it.
		if want := typeOfName(def.Type); !fits(v, want) {
			err = &evalErr{node: one, bare: true, err: typeErr(fmt.Sprintf("value %q must yield %s, but ${%s} yields %s", name, want, one, describe(v)))}
		}
	}
	var ve *valueErr
	if err != nil && !errors.Is(err, notKnown) && !errors.Is(err, errWork) && !errors.As(err, &ve) {
		err = &valueErr{name: name, err: err}
	}
	e.values[name] = result{v, err}
	return v, err
}

func parseLiteral(s, typ string) (any, error) {
	switch typ {
	case "integer", "float", "boolean":
		if v, ok := parseAs(s, typ); ok {
			return v, nil
		}
		return nil, notKnown // reported where the value is defined
	case "array", "object":
		return nil, notKnown // a literal can not be one: reported there
	}
	return s, nil
}

// typeErr is a result of the wrong type for its place.
type typeErr string

func (e typeErr) Error() string { return string(e) }

// fits reports whether an evaluated value has a type its place accepts (an
// integer fits where a float is wanted).
func fits(v any, want Type) bool {
	got := typeOfValue(v)
	return got&want != 0 || got == TInt && want&TFloat != 0
}

// errComplex is the failure of interpolating an array, object or function
// into a string.
type errComplex struct{ v any }

func (e errComplex) Error() string {
	return fmt.Sprintf("yields %s, which can not be interpolated into a string; use a field or item of it, or join() a list of strings", describe(e.v))
}

// interpolate renders a string with substitutions, all of them known.
func (e *evaluator) interpolate(in *subst.Interpolated) (string, error) {
	var b strings.Builder
	var unknown error
	for _, p := range in.Parts {
		if p.Sub == nil {
			b.WriteString(p.Text)
			continue
		}
		v, err := e.eval(p.Sub)
		if errors.Is(err, notKnown) {
			unknown = err // the other parts are still evaluated, for their errors
			continue
		}
		if err != nil {
			return "", err
		}
		s, ok := scalarString(v)
		if !ok {
			return "", &evalErr{node: p.Sub, err: errComplex{v}}
		}
		if err := e.charge(len(s)); err != nil {
			return "", err
		}
		if b.Len()+len(s) > MaxEvalSize {
			return "", &evalErr{node: p.Sub, bare: true, err: fmt.Errorf("${%s}: the string interpolated up to here %w", p.Sub, errTooLarge)}
		}
		b.WriteString(s)
	}
	if unknown != nil {
		return "", unknown
	}
	return b.String(), nil
}

// access applies name and index accessors to a value.
func (e *evaluator) access(n subst.Node, v any, path []subst.Accessor) (any, error) {
	for i, a := range path {
		switch {
		case a.IsIndex:
			list, ok := v.([]any)
			if !ok {
				return nil, &evalErr{node: n, bare: true, err: fmt.Errorf("%w: %s: %s has no items", errCall, pathText(n, path[:i+1]), describe(v))}
			}
			if a.Index >= len(list) {
				return nil, &evalErr{node: n, bare: true, err: fmt.Errorf("%w: %s: index %d is out of range for a list of %d items", errCall, pathText(n, path[:i+1]), a.Index, len(list))}
			}
			v = list[a.Index]
		default:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, &evalErr{node: n, bare: true, err: fmt.Errorf("%w: %s: %s has no fields", errCall, pathText(n, path[:i+1]), describe(v))}
			}
			next, ok := m[a.Name]
			if !ok {
				return nil, &evalErr{node: n, bare: true, err: fmt.Errorf("%w: %s: no field %q; the fields are %s", errCall, pathText(n, path[:i+1]), a.Name, quoteList(slices.Sorted(maps.Keys(m))))}
			}
			v = next
		}
	}
	return v, nil
}

// pathText prints an expression up to and including an accessor.
func pathText(n subst.Node, path []subst.Accessor) string {
	var head string
	switch n := n.(type) {
	case *subst.Value:
		head = (&subst.Value{Name: n.Name}).String()
	case *subst.Call:
		c := *n
		c.Path = nil
		head = c.String()
	default:
		head = n.String()
	}
	for _, a := range path {
		head += a.String()
	}
	return head
}

// sizeOf measures v in items plus string bytes, walking at most limit+1
// units: a result above limit is reported as limit+1.
func sizeOf(v any, limit int) int {
	n := 0
	sizeWalk(v, &n, limit)
	return min(n, limit+1)
}

func sizeWalk(v any, n *int, limit int) {
	if *n > limit {
		return
	}
	*n++
	switch x := v.(type) {
	case string:
		*n += len(x)
	case []any:
		for _, y := range x {
			sizeWalk(y, n, limit)
		}
	case map[string]any:
		for k, y := range x {
			*n += len(k)
			sizeWalk(y, n, limit)
		}
	}
}

// scalarString renders a scalar for string interpolation.
func scalarString(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case int64:
		return strconv.FormatInt(v, 10), true
	case int:
		return strconv.Itoa(v), true
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

// typeOfValue is the Type of an evaluated value (0 for null).
func typeOfValue(v any) Type {
	switch v.(type) {
	case string:
		return TString
	case int64, int:
		return TInt
	case float64:
		return TFloat
	case bool:
		return TBool
	case []any:
		return TArray
	case map[string]any:
		return TObject
	case fnVal:
		return TFunc
	}
	return 0
}

// describe names an evaluated value's kind for messages.
func describe(v any) string {
	switch x := v.(type) {
	case []any:
		return "an array of " + plural.Count(len(x), "item")
	case map[string]any:
		return fmt.Sprintf("an object with fields %s", quoteList(slices.Sorted(maps.Keys(x))))
	case fnVal:
		return "a function"
	case nil:
		return "null"
	}
	return valueKind(v)
}
