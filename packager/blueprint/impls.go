package blueprint

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/cloud-assembly/assemble/internal/plural"
)

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
		if f, ok := asNumber(args[i]); ok {
			return f, nil
		}
	}
	return 0, fmt.Errorf("%w: argument %d must be a number", errCall, i+1)
}

// asNumber reads an integer or float.
func asNumber(v any) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case int:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
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
			// Indexes count characters, as len does, not bytes.
			runes := []rune(s)
			n := int64(len(runes))
			end := n
			if len(args) > 2 {
				if end, err = argInt(args, 2); err != nil {
					return nil, err
				}
			}
			switch {
			case start < 0 || start > n:
				return nil, fmt.Errorf("%w: start %d is out of range for a string of %d characters (0 to %d)", errCall, start, n, n)
			case end < start || end > n:
				return nil, fmt.Errorf("%w: end %d is out of range for a string of %d characters starting at %d (%d to %d)", errCall, end, n, start, start, n)
			}
			return string(runes[start:end]), nil
		},
		"replace": strFn(func(s string, r []string) (any, error) {
			// Check the result's size before building it: replacing in a
			// large value with a large value would need gigabytes.
			if n := strings.Count(s, r[0]); len(s)+n*(len(r[1])-len(r[0])) > MaxEvalSize {
				return nil, errTooLarge
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
					return nil, errTooLarge
				}
			}
			return strings.Join(parts, sep), nil
		},
		"index":      strFn(func(s string, r []string) (any, error) { return charIndex(s, strings.Index(s, r[0])), nil }, 1),
		"last_index": strFn(func(s string, r []string) (any, error) { return charIndex(s, strings.LastIndex(s, r[0])), nil }, 1),
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
		"list":      func(args []any) (any, error) { return slices.Clone(args), nil },
		"normalize": func(args []any) (any, error) { return normalizeValue(args[0]) },
		"keys": func(args []any) (any, error) {
			m, err := argMap(args, 0)
			if err != nil {
				return nil, err
			}
			var out []any
			for _, k := range slices.Sorted(maps.Keys(m)) {
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
			for _, k := range slices.Sorted(maps.Keys(m)) {
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
			if size += sizeOf(y, MaxEvalSize); size > MaxEvalSize {
				return nil, errTooLarge
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
	if x, ok := asNumber(a); ok {
		y, ok := asNumber(b)
		return ok && x == y
	}
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case nil:
		return b == nil
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, equal)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equal(xv, yv) {
				return false
			}
		}
		return true
	}
	return false // functions are equal to nothing
}

// normalizeValue is normalize(): every string, and every object key, in
// Unicode Normalization Form C, through arrays and objects; other values as
// they are. Keys that become equal are an error.
func normalizeValue(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return norm.NFC.String(x), nil
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			n, err := normalizeValue(y)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			nk := norm.NFC.String(k)
			if _, dup := out[nk]; dup {
				return nil, fmt.Errorf("%w: keys %q and another key are equal once normalized; rename one", errCall, nk)
			}
			n, err := normalizeValue(x[k])
			if err != nil {
				return nil, err
			}
			out[nk] = n
		}
		return out, nil
	case fnVal:
		return nil, fmt.Errorf("%w: normalize needs a value, not a function", errCall)
	}
	return v, nil
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

// charIndex turns a byte offset in s (or -1) into a character index.
func charIndex(s string, byteOff int) int64 {
	if byteOff < 0 {
		return -1
	}
	return int64(utf8.RuneCountInString(s[:byteOff]))
}

// jsonPointer resolves an RFC 6901 pointer; one without the leading "/" is
// read from the root.
func jsonPointer(doc any, ptr string) (any, error) {
	if ptr == "" {
		return doc, nil
	}
	// The specification's own example, fromjson(variables.config, "host"),
	// writes the pointer without its leading "/": such a path is read from
	// the document's root.
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch d := doc.(type) {
		case map[string]any:
			v, ok := d[tok]
			if !ok {
				return nil, fmt.Errorf("%w: json pointer %q: no key %q; the keys there are %s", errCall, ptr, tok, quoteList(slices.Sorted(maps.Keys(d))))
			}
			doc = v
		case []any:
			// RFC 6901: an array index is 0 or digits without a leading 0.
			if tok == "" || strings.Trim(tok, "0123456789") != "" || tok[0] == '0' && len(tok) > 1 {
				return nil, fmt.Errorf("%w: json pointer %q: %q is not an array index (0, 1, 2, ... without leading zeros)", errCall, ptr, tok)
			}
			i, err := strconv.Atoi(tok)
			if err != nil || i >= len(d) {
				return nil, fmt.Errorf("%w: json pointer %q: index %s is out of range for a list of %s", errCall, ptr, tok, plural.Count(len(d), "item"))
			}
			doc = d[i]
		default:
			return nil, fmt.Errorf("%w: json pointer %q goes past a scalar", errCall, ptr)
		}
	}
	return doc, nil
}
