package deploy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/deploy/review"
)

// KnownAfterDeploy stands, in a plan, for a value that cannot be known
// before the droplet it comes from is deployed ("known after apply").
const KnownAfterDeploy = review.Pending

// attrLookup returns a deployed droplet's attribute. known is false when
// the droplet is not deployed yet (a plan); ok is false when the droplet
// is deployed and has no such attribute.
type attrLookup func(id, attr string) (value string, known, ok bool)

// resolve returns props with every ${Id.attr} replaced by its value and
// the escapes \${ and \\ turned into what they stand for. Values not known
// yet are written as KnownAfterDeploy and listed in unknown ("Id.attr"); a
// reference to an attribute the droplet does not have is an error wrapping
// ErrUnresolved.
func resolve(id string, props map[string]any, lookup attrLookup) (map[string]any, []string, error) {
	var unknown []string
	seen := map[string]bool{}
	var walk func(field string, v any) (any, error)
	walk = func(field string, v any) (any, error) {
		switch v := v.(type) {
		case string:
			parts, err := assembly.ParseString(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", field, err)
			}
			var b strings.Builder
			for _, p := range parts {
				if p.Ref == nil {
					b.WriteString(p.Literal)
					continue
				}
				val, known, ok := lookup(p.Ref.Droplet, p.Ref.Attribute)
				switch {
				case !known:
					if k := p.Ref.Droplet + "." + p.Ref.Attribute; !seen[k] {
						seen[k] = true
						unknown = append(unknown, k)
					}
					b.WriteString(KnownAfterDeploy)
				case !ok:
					return nil, fmt.Errorf("%w: %s: %s: droplet %s has no attribute %q", ErrUnresolved, field, p.Ref, p.Ref.Droplet, p.Ref.Attribute)
				default:
					b.WriteString(val)
				}
			}
			return b.String(), nil
		case map[string]any:
			out := make(map[string]any, len(v))
			for k, e := range v {
				r, err := walk(field+"."+k, e)
				if err != nil {
					return nil, err
				}
				out[k] = r
			}
			return out, nil
		case []any:
			out := make([]any, len(v))
			for i, e := range v {
				r, err := walk(fmt.Sprintf("%s[%d]", field, i), e)
				if err != nil {
					return nil, err
				}
				out[i] = r
			}
			return out, nil
		}
		return v, nil
	}
	out := make(map[string]any, len(props))
	for k, v := range props {
		r, err := walk(k, v)
		if err != nil {
			return nil, nil, &DropletError{Droplet: id, Err: err}
		}
		out[k] = r
	}
	sort.Strings(unknown)
	return out, unknown, nil
}

// str is a string property ("" when absent or not a string).
func str(props map[string]any, name string) string {
	s, _ := props[name].(string)
	return s
}

// strMap is a map-of-strings property, sorted keys implied by callers.
func strMap(props map[string]any, name string) map[string]string {
	m, _ := props[name].(map[string]any)
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// strList is a list-of-strings property.
func strList(props map[string]any, name string) []string {
	l, _ := props[name].([]any)
	var out []string
	for _, v := range l {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// boolProp reads a boolean property: a JSON boolean, or the strings
// "true" and "false" (set reports whether it is given).
func boolProp(props map[string]any, name string) (value, set bool, err error) {
	switch v := props[name].(type) {
	case nil:
		return false, false, nil
	case bool:
		return v, true, nil
	case string:
		switch v {
		case "true":
			return true, true, nil
		case "false":
			return false, true, nil
		}
	case json.Number:
	}
	return false, false, fmt.Errorf("properties.%s: want true or false", name)
}
