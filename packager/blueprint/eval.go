package blueprint

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/cloud-assembly/assemble/packager/blueprint/subst"
)

// fnVal is a function value, as returned by the _g functions, compose,
// pipe, getattr and getelem, or named by a bare core function name.
type fnVal func(args ...any) (any, error)

// errCall is returned by core function implementations for bad input.
var errCall = errors.New("blueprint: function call failed")

// callErr carries a function call failure with the call's position.
type callErr struct {
	call *subst.Call
	err  error
}

func (e *callErr) Error() string {
	return fmt.Sprintf("%s(): %s", e.call.Name, strings.TrimPrefix(e.err.Error(), errCall.Error()+": "))
}
func (e *callErr) Unwrap() error { return e.err }

// notKnown marks a substitution that can only be evaluated at deploy time.
var notKnown = errors.New("known only at deploy time")

// evaluator evaluates what is known at packaging time: literals, variables
// with values or defaults and values built from them (never secret ones), and
// core function calls on such arguments. datetime and cwd are never
// evaluated: they depend on when and where the blueprint is deployed.
type evaluator struct {
	inlined  int // size inlined so far, bounded by MaxInlineSize
	c        *checker
	known    map[string]any
	cache    map[string]any
	visiting map[string]bool
}

func newEvaluator(c *checker, known map[string]any) *evaluator {
	k := map[string]any{}
	for name, v := range known {
		if def, ok := c.vars[name]; ok && !def.Secret {
			k[name] = v
		}
	}
	return &evaluator{c: c, known: k, cache: map[string]any{}, visiting: map[string]bool{}}
}

// eval returns the value of n, notKnown, or a call error.
func (e *evaluator) eval(n subst.Node) (any, error) {
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
		return access(v, n.Path)
	case *subst.Resource:
		if e.c.isFuncRef(n) {
			return funcValue(n.Name), nil
		}
	case *subst.Call:
		if n.Name == "datetime" || n.Name == "cwd" || n.Name == "link" || coreFunctions[n.Name] == nil {
			return nil, notKnown
		}
		args := make([]any, len(n.Args))
		named := map[string]any{}
		var order []string
		for i, a := range n.Args {
			v, err := e.eval(a.Value)
			if err != nil {
				return nil, err
			}
			args[i] = v
			if a.Name != "" {
				named[a.Name] = v
				order = append(order, a.Name)
			}
		}
		var v any
		var err error
		if n.Name == "object" {
			v = named
		} else {
			v, err = callCore(n.Name, args)
		}
		if errors.Is(err, notKnown) {
			return nil, notKnown // a result too large to build now
		}
		if err != nil {
			return nil, &callErr{call: n, err: err}
		}
		if tooBig(v) {
			// Leave huge results (values doubling each other) for deploy time.
			return nil, notKnown
		}
		return access(v, n.Path)
	}
	return nil, notKnown
}

// value evaluates a value definition.
func (e *evaluator) value(name string) (any, error) {
	if v, ok := e.cache[name]; ok {
		return v, nil
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
	if err != nil {
		return nil, err
	}
	e.cache[name] = v
	return v, nil
}

func parseLiteral(s, typ string) (any, error) {
	switch typ {
	case "integer", "float", "boolean":
		if v, ok := parseAs(s, typ); ok {
			return v, nil
		}
		return nil, notKnown
	}
	return s, nil
}

// interpolate renders a string with substitutions, all of them known.
func (e *evaluator) interpolate(in *subst.Interpolated) (string, error) {
	var b strings.Builder
	for _, p := range in.Parts {
		if p.Sub == nil {
			b.WriteString(p.Text)
			continue
		}
		v, err := e.eval(p.Sub)
		if err != nil {
			return "", err
		}
		s, ok := scalarString(v)
		if !ok {
			return "", notKnown
		}
		if b.Len()+len(s) > MaxEvalSize {
			// Leave huge strings (values doubling each other) for deploy time.
			return "", notKnown
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// MaxEvalSize bounds the size of one value evaluated at packaging time, in
// list and object items plus string bytes.
const MaxEvalSize = 1 << 20

// MaxInlineSize bounds the total size of what one blueprint's packaging
// inlines; past it, references are left for deploy time.
const MaxInlineSize = 4 * MaxEvalSize

// sizeOf measures v as tooBig does (at most MaxEvalSize+1).
func sizeOf(v any) int {
	n := 0
	var walk func(v any)
	walk = func(v any) {
		if n > MaxEvalSize {
			return
		}
		n++
		switch x := v.(type) {
		case string:
			n += len(x)
		case []any:
			for _, y := range x {
				walk(y)
			}
		case map[string]any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(v)
	return n
}

// tooBig reports whether v exceeds MaxEvalSize, visiting at most that much.
func tooBig(v any) bool {
	budget := MaxEvalSize
	var walk func(v any) bool
	walk = func(v any) bool {
		budget--
		switch x := v.(type) {
		case string:
			budget -= len(x)
		case []any:
			for _, y := range x {
				if walk(y) {
					return true
				}
			}
		case map[string]any:
			for _, y := range x {
				if walk(y) {
					return true
				}
			}
		}
		return budget < 0
	}
	return walk(v)
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

// access applies name and index accessors to a value.
func access(v any, path []subst.Accessor) (any, error) {
	for _, a := range path {
		switch {
		case a.IsIndex:
			list, ok := v.([]any)
			if !ok || a.Index >= len(list) || len(list) == 0 {
				return nil, notKnown
			}
			v = list[a.Index]
		default:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, notKnown
			}
			if v, ok = m[a.Name]; !ok {
				return nil, notKnown
			}
		}
	}
	return v, nil
}

// --- core function implementations ---

func funcValue(name string) fnVal {
	return func(args ...any) (any, error) { return callCore(name, args) }
}

func argStr(args []any, i int) (string, error) {
	if i < len(args) {
		if s, ok := args[i].(string); ok {
			return s, nil
		}
	}
	return "", fmt.Errorf("%w: argument %d must be a string", errCall, i+1)
}

func argInt(args []any, i int) (int64, error) {
	if i < len(args) {
		switch v := args[i].(type) {
		case int64:
			return v, nil
		case int:
			return int64(v), nil
		case float64:
			if v == math.Trunc(v) {
				return int64(v), nil
			}
		}
	}
	return 0, fmt.Errorf("%w: argument %d must be an integer", errCall, i+1)
}

func argNum(args []any, i int) (float64, error) {
	if i < len(args) {
		switch v := args[i].(type) {
		case int64:
			return float64(v), nil
		case int:
			return float64(v), nil
		case float64:
			return v, nil
		}
	}
	return 0, fmt.Errorf("%w: argument %d must be a number", errCall, i+1)
}

func argBool(args []any, i int) (bool, error) {
	if i < len(args) {
		if b, ok := args[i].(bool); ok {
			return b, nil
		}
	}
	return false, fmt.Errorf("%w: argument %d must be a boolean", errCall, i+1)
}

func argList(args []any, i int) ([]any, error) {
	if i < len(args) {
		if l, ok := args[i].([]any); ok {
			return l, nil
		}
	}
	return nil, fmt.Errorf("%w: argument %d must be an array", errCall, i+1)
}

func argFn(args []any, i int) (fnVal, error) {
	if i < len(args) {
		if f, ok := args[i].(fnVal); ok {
			return f, nil
		}
	}
	return nil, fmt.Errorf("%w: argument %d must be a function", errCall, i+1)
}

func argMap(args []any, i int) (map[string]any, error) {
	if i < len(args) {
		if m, ok := args[i].(map[string]any); ok {
			return m, nil
		}
	}
	return nil, fmt.Errorf("%w: argument %d must be an object", errCall, i+1)
}

// strFn adapts a function of strings (the first argument is the subject).
func strFn(f func(s string, rest []string) (any, error), nrest int) func([]any) (any, error) {
	return func(args []any) (any, error) {
		strs := make([]string, 1+nrest)
		for i := range strs {
			s, err := argStr(args, i)
			if err != nil {
				return nil, err
			}
			strs[i] = s
		}
		return f(strs[0], strs[1:])
	}
}

// gFn makes the composable form of a function: the static arguments come
// first, the subject is passed to the returned function.
func gFn(name string) func([]any) (any, error) {
	return func(static []any) (any, error) {
		return fnVal(func(args ...any) (any, error) {
			if len(args) == 0 {
				return nil, fmt.Errorf("%w: %s_g function called without a value", errCall, name)
			}
			return callCore(name, append([]any{args[0]}, static...))
		}), nil
	}
}

var impls map[string]func([]any) (any, error)

func init() {
	impls = map[string]func([]any) (any, error){
		"fromjson": strFn(func(s string, r []string) (any, error) {
			var doc any
			if err := json.Unmarshal([]byte(s), &doc); err != nil {
				return nil, fmt.Errorf("%w: invalid JSON: %v", errCall, err)
			}
			if _, ok := doc.(map[string]any); !ok {
				return nil, fmt.Errorf("%w: the JSON document's root must be an object", errCall)
			}
			return jsonPointer(normalise(doc), r[0])
		}, 1),
		"jsondecode": strFn(func(s string, _ []string) (any, error) {
			var doc any
			if err := json.Unmarshal([]byte(s), &doc); err != nil {
				return nil, fmt.Errorf("%w: invalid JSON: %v", errCall, err)
			}
			return normalise(doc), nil
		}, 0),
		"len": func(args []any) (any, error) {
			switch v := args[0].(type) {
			case string:
				return int64(len([]rune(v))), nil
			case []any:
				return int64(len(v)), nil
			case map[string]any:
				return int64(len(v)), nil
			}
			return nil, fmt.Errorf("%w: len needs a string, array or object", errCall)
		},
		"substr": func(args []any) (any, error) {
			s, err := argStr(args, 0)
			if err != nil {
				return nil, err
			}
			start, err := argInt(args, 1)
			if err != nil {
				return nil, err
			}
			end := int64(len(s))
			if len(args) > 2 {
				if end, err = argInt(args, 2); err != nil {
					return nil, err
				}
			}
			if start < 0 || end < start || end > int64(len(s)) {
				return nil, fmt.Errorf("%w: indexes %d..%d out of range for a string of length %d", errCall, start, end, len(s))
			}
			return s[start:end], nil
		},
		"replace": strFn(func(s string, r []string) (any, error) {
			// Check the result's size before building it: replacing in a
			// large value with a large value would need gigabytes.
			if n := strings.Count(s, r[0]); len(s)+n*(len(r[1])-len(r[0])) > MaxEvalSize {
				return nil, notKnown
			}
			return strings.ReplaceAll(s, r[0], r[1]), nil
		}, 2),
		"trim":       strFn(func(s string, _ []string) (any, error) { return strings.TrimSpace(s), nil }, 0),
		"trimprefix": strFn(func(s string, r []string) (any, error) { return strings.TrimPrefix(s, r[0]), nil }, 1),
		"trimsuffix": strFn(func(s string, r []string) (any, error) { return strings.TrimSuffix(s, r[0]), nil }, 1),
		"split": strFn(func(s string, r []string) (any, error) {
			var out []any
			for _, p := range strings.Split(s, r[0]) {
				out = append(out, p)
			}
			return out, nil
		}, 1),
		"join": func(args []any) (any, error) {
			l, err := argList(args, 0)
			if err != nil {
				return nil, err
			}
			sep, err := argStr(args, 1)
			if err != nil {
				return nil, err
			}
			parts := make([]string, len(l))
			size := 0
			for i, x := range l {
				s, ok := x.(string)
				if !ok {
					return nil, fmt.Errorf("%w: join needs an array of strings", errCall)
				}
				parts[i] = s
				if size += len(s) + len(sep); size > MaxEvalSize+len(sep) {
					return nil, notKnown // too large to build now
				}
			}
			return strings.Join(parts, sep), nil
		},
		"index":      strFn(func(s string, r []string) (any, error) { return int64(strings.Index(s, r[0])), nil }, 1),
		"last_index": strFn(func(s string, r []string) (any, error) { return int64(strings.LastIndex(s, r[0])), nil }, 1),
		"to_upper":   strFn(func(s string, _ []string) (any, error) { return strings.ToUpper(s), nil }, 0),
		"to_lower":   strFn(func(s string, _ []string) (any, error) { return strings.ToLower(s), nil }, 0),
		"has_prefix": strFn(func(s string, r []string) (any, error) { return strings.HasPrefix(s, r[0]), nil }, 1),
		"has_suffix": strFn(func(s string, r []string) (any, error) { return strings.HasSuffix(s, r[0]), nil }, 1),
		"contains": func(args []any) (any, error) {
			switch h := args[0].(type) {
			case string:
				n, ok := args[1].(string)
				if !ok {
					return nil, fmt.Errorf("%w: contains on a string needs a string to search for", errCall)
				}
				return strings.Contains(h, n), nil
			case []any:
				return slices.ContainsFunc(h, func(x any) bool { return equal(x, args[1]) }), nil
			}
			return nil, fmt.Errorf("%w: contains needs a string or an array", errCall)
		},
		"list": func(args []any) (any, error) { return slices.Clone(args), nil },
		"keys": func(args []any) (any, error) {
			m, err := argMap(args, 0)
			if err != nil {
				return nil, err
			}
			var out []any
			for _, k := range sortedKeys(m) {
				out = append(out, k)
			}
			return out, nil
		},
		"vals": func(args []any) (any, error) {
			m, err := argMap(args, 0)
			if err != nil {
				return nil, err
			}
			var out []any
			for _, k := range sortedKeys(m) {
				out = append(out, m[k])
			}
			return out, nil
		},
		"map":     mapLike(false),
		"flatmap": mapLike(true),
		"filter": func(args []any) (any, error) {
			l, f, err := listAndFn(args)
			if err != nil {
				return nil, err
			}
			out := []any{}
			for _, x := range l {
				keep, err := f(x)
				if err != nil {
					return nil, err
				}
				b, ok := keep.(bool)
				if !ok {
					return nil, fmt.Errorf("%w: the filter function must return a boolean", errCall)
				}
				if b {
					out = append(out, x)
				}
			}
			return out, nil
		},
		"reduce": func(args []any) (any, error) {
			l, f, err := listAndFn(args)
			if err != nil {
				return nil, err
			}
			acc := args[2]
			for i, x := range l {
				if acc, err = f(acc, x, int64(i)); err != nil {
					return nil, err
				}
			}
			return acc, nil
		},
		"sort": func(args []any) (any, error) {
			l, f, err := listAndFn(args)
			if err != nil {
				return nil, err
			}
			out := slices.Clone(l)
			var sortErr error
			slices.SortStableFunc(out, func(a, b any) int {
				r, err := f(a, b)
				if err != nil {
					sortErr = err
					return 0
				}
				n, err := argInt([]any{r}, 0)
				if err != nil {
					sortErr = err
				}
				return int(n)
			})
			return out, sortErr
		},
		"compose": func(args []any) (any, error) { return chain(args, true) },
		"pipe":    func(args []any) (any, error) { return chain(args, false) },
		"getattr": func(static []any) (any, error) {
			name, err := argStr(static, 0)
			if err != nil {
				return nil, err
			}
			return fnVal(func(args ...any) (any, error) {
				m, err := argMap(args, 0)
				if err != nil {
					return nil, err
				}
				v, ok := m[name]
				if !ok {
					return nil, fmt.Errorf("%w: no attribute %q", errCall, name)
				}
				return v, nil
			}), nil
		},
		"getelem": func(static []any) (any, error) {
			pos, err := argInt(static, 0)
			if err != nil {
				return nil, err
			}
			return fnVal(func(args ...any) (any, error) {
				l, err := argList(args, 0)
				if err != nil {
					return nil, err
				}
				if pos < 0 || pos >= int64(len(l)) {
					return nil, fmt.Errorf("%w: position %d out of range", errCall, pos)
				}
				return l[pos], nil
			}), nil
		},
		"and": binaryFn(argBool, func(a, b bool) bool { return a && b }),
		"or":  binaryFn(argBool, func(a, b bool) bool { return a || b }),
		"not": func(args []any) (any, error) {
			b, err := argBool(args, 0)
			return !b, err
		},
		"eq": func(args []any) (any, error) { return equal(args[0], args[1]), nil },
		"gt": binaryFn(argNum, func(a, b float64) bool { return a > b }),
		"ge": binaryFn(argNum, func(a, b float64) bool { return a >= b }),
		"lt": binaryFn(argNum, func(a, b float64) bool { return a < b }),
		"le": binaryFn(argNum, func(a, b float64) bool { return a <= b }),
	}
	for _, g := range []string{"fromjson", "substr", "replace", "trimprefix", "trimsuffix", "split", "has_prefix", "has_suffix", "contains"} {
		impls[g+"_g"] = gFn(g)
	}
}

// callCore calls a core function on evaluated arguments.
func callCore(name string, args []any) (any, error) {
	f, ok := impls[name]
	if !ok {
		return nil, notKnown
	}
	def := coreFunctions[name]
	if def.Variadic == nil {
		if lo, hi := def.argRange(); len(args) < lo || len(args) > hi {
			return nil, fmt.Errorf("%w: takes %s, got %d", errCall, def.Arity(), len(args))
		}
	}
	return f(args)
}

// listAndFn reads the (list, function) arguments that map, flatmap, filter,
// reduce and sort take first.
func listAndFn(args []any) ([]any, fnVal, error) {
	l, err := argList(args, 0)
	if err != nil {
		return nil, nil, err
	}
	f, err := argFn(args, 1)
	if err != nil {
		return nil, nil, err
	}
	return l, f, nil
}

func mapLike(flat bool) func([]any) (any, error) {
	return func(args []any) (any, error) {
		l, f, err := listAndFn(args)
		if err != nil {
			return nil, err
		}
		out := []any{}
		size := 0
		for _, x := range l {
			y, err := f(x)
			if err != nil {
				return nil, err
			}
			// Bound the result as it grows, not only once it is built.
			if size += sizeOf(y); size > MaxEvalSize {
				return nil, notKnown
			}
			if flat {
				ys, ok := y.([]any)
				if !ok {
					return nil, fmt.Errorf("%w: the flatmap function must return an array", errCall)
				}
				out = append(out, ys...)
			} else {
				out = append(out, y)
			}
		}
		return out, nil
	}
}

func chain(args []any, rightToLeft bool) (any, error) {
	fns := make([]fnVal, len(args))
	for i := range args {
		f, err := argFn(args, i)
		if err != nil {
			return nil, err
		}
		fns[i] = f
	}
	if rightToLeft {
		slices.Reverse(fns)
	}
	return fnVal(func(in ...any) (any, error) {
		if len(in) == 0 {
			return nil, fmt.Errorf("%w: composed function called without a value", errCall)
		}
		v := in[0]
		for _, f := range fns {
			var err error
			if v, err = f(v); err != nil {
				return nil, err
			}
		}
		return v, nil
	}), nil
}

// binaryFn makes a two-argument core function whose arguments are read with
// arg (argBool, argNum) and combined by op.
func binaryFn[T any](arg func([]any, int) (T, error), op func(a, b T) bool) func([]any) (any, error) {
	return func(args []any) (any, error) {
		a, err := arg(args, 0)
		if err != nil {
			return nil, err
		}
		b, err := arg(args, 1)
		if err != nil {
			return nil, err
		}
		return op(a, b), nil
	}
}

// equal compares two evaluated values; integers and floats compare by value.
func equal(a, b any) bool {
	if x, err := argNum([]any{a}, 0); err == nil {
		y, err := argNum([]any{b}, 0)
		return err == nil && x == y
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// normalise turns decoded JSON numbers into int64 when they are whole.
func normalise(v any) any {
	switch v := v.(type) {
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v)
		}
		return v
	case []any:
		for i := range v {
			v[i] = normalise(v[i])
		}
		return v
	case map[string]any:
		for k := range v {
			v[k] = normalise(v[k])
		}
		return v
	}
	return v
}

// jsonPointer resolves an RFC 6901 pointer.
func jsonPointer(doc any, ptr string) (any, error) {
	if ptr == "" {
		return doc, nil
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, fmt.Errorf("%w: json pointer %q must start with \"/\"", errCall, ptr)
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch d := doc.(type) {
		case map[string]any:
			v, ok := d[tok]
			if !ok {
				return nil, fmt.Errorf("%w: json pointer %q: no key %q", errCall, ptr, tok)
			}
			doc = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(d) {
				return nil, fmt.Errorf("%w: json pointer %q: bad index %q", errCall, ptr, tok)
			}
			doc = d[i]
		default:
			return nil, fmt.Errorf("%w: json pointer %q goes past a scalar", errCall, ptr)
		}
	}
	return doc, nil
}
