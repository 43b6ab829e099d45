package review

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Pending stands for a value not known before another droplet is
// deployed (a stack output another stack's parameter takes).
const Pending = "(known after deploy)"

// A ValueChange is one value that differs. Old or New is absent (nil) when
// the value is added or removed.
type ValueChange struct {
	Path string `json:"path"`
	Old  any    `json:"old,omitempty"`
	New  any    `json:"new,omitempty"`
	// Pending: the new value is known only after another droplet deploys.
	Pending bool `json:"pending,omitempty"`
}

// Resource change actions.
const (
	Add    = "add"
	Remove = "remove"
	Modify = "modify"
)

// A ResourceChange is one resource added, removed or modified, with the
// paths of what changes ("Properties.BucketName", "DeletionPolicy").
type ResourceChange struct {
	LogicalID string        `json:"logicalId"`
	Type      string        `json:"type"`
	Action    string        `json:"action"`
	Changes   []ValueChange `json:"changes,omitempty"`
	// Replacement is CloudFormation's own verdict (True, False,
	// Conditional), known only from a change set.
	Replacement string `json:"replacement,omitempty"`
}

// A Stack is what a stack is or would be: its template, parameter values,
// tags, settings (terminationProtection, stackPolicy, notificationArns)
// and, deployed, its outputs' values.
type Stack struct {
	Template   Template
	Parameters map[string]string
	Tags       map[string]string
	Settings   map[string]string
	Outputs    map[string]string
}

// A StackDiff is what changes when next replaces prev.
type StackDiff struct {
	// New: there is no deployed stack.
	New        bool             `json:"new"`
	Resources  []ResourceChange `json:"resources"`
	Parameters []ValueChange    `json:"parameters"`
	Tags       []ValueChange    `json:"tags"`
	Settings   []ValueChange    `json:"settings"`
	// Outputs are the template's outputs added, removed or changed
	// (their Value expressions; Old values are what is deployed now).
	Outputs []ValueChange `json:"outputs"`
	// Sections are other template sections that change (Conditions,
	// Mappings, Description, Transform, Metadata, Rules, the Parameters
	// declarations).
	Sections []ValueChange `json:"sections"`
	// Security lists the grants the change adds that nothing deployed
	// covers (Broadening).
	Security []*Grant `json:"security"`
}

// Changed reports whether anything changes.
func (d *StackDiff) Changed() bool {
	return d.New || len(d.Resources)+len(d.Parameters)+len(d.Tags)+len(d.Settings)+len(d.Outputs)+len(d.Sections) > 0
}

// Broadened reports whether the change allows something new.
func (d *StackDiff) Broadened() bool { return len(d.Security) > 0 }

// DiffStack compares a deployed stack (nil when there is none) with the
// one to deploy. Tags whose names start with ignoreTagPrefix (deploy's own
// "assemble:" tags, which every new assembly changes) are left out. An
// error wraps ErrTooManyGrants.
func DiffStack(prev, next *Stack, ignoreTagPrefix string) (*StackDiff, error) {
	d := &StackDiff{Resources: []ResourceChange{}, Parameters: []ValueChange{}, Tags: []ValueChange{},
		Settings: []ValueChange{}, Outputs: []ValueChange{}, Sections: []ValueChange{}}
	var pt Template
	if prev == nil {
		d.New = true
		prev = &Stack{}
	} else {
		pt = prev.Template
	}
	tags := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			if ignoreTagPrefix == "" || !strings.HasPrefix(k, ignoreTagPrefix) {
				out[k] = v
			}
		}
		return out
	}
	d.Resources = DiffResources(prev.Template, next.Template)
	d.Parameters = DiffStrings(prev.Parameters, next.Parameters)
	d.Tags = DiffStrings(tags(prev.Tags), tags(next.Tags))
	d.Settings = DiffStrings(prev.Settings, next.Settings)
	d.Outputs = diffOutputs(prev, next)
	for _, sec := range []string{"AWSTemplateFormatVersion", "Description", "Transform", "Metadata", "Parameters", "Mappings", "Conditions", "Rules"} {
		d.Sections = append(d.Sections, DiffValues(sec, prev.Template[sec], next.Template[sec])...)
	}
	var err error
	if d.Security, err = Broadening(pt, next.Template); err != nil {
		return nil, err
	}
	if d.Security == nil {
		d.Security = []*Grant{}
	}
	return d, nil
}

// diffOutputs lists the template outputs that change; an output's Old is
// its deployed value when known.
func diffOutputs(prev, next *Stack) []ValueChange {
	po, no := mapOf(prev.Template["Outputs"]), mapOf(next.Template["Outputs"])
	var out []ValueChange
	for _, k := range union(po, no) {
		pv, pok := po[k]
		nv, nok := no[k]
		if pok && nok && equal(pv, nv) {
			continue
		}
		c := ValueChange{Path: k}
		if pok {
			c.Old = mapOf(pv)["Value"]
			if v, ok := prev.Outputs[k]; ok {
				c.Old = v
			}
		}
		if nok {
			c.New = mapOf(nv)["Value"]
		}
		out = append(out, c)
	}
	if out == nil {
		return []ValueChange{}
	}
	return out
}

// DiffResources lists the resources added, removed or modified, in
// logical ID order.
func DiffResources(prev, next Template) []ResourceChange {
	pr, nr := prev.Resources(), next.Resources()
	out := []ResourceChange{}
	for _, id := range union(pr, nr) {
		p, pok := pr[id]
		n, nok := nr[id]
		typ := func(v any) string { s, _ := mapOf(v)["Type"].(string); return s }
		switch {
		case !pok:
			out = append(out, ResourceChange{LogicalID: id, Type: typ(n), Action: Add})
		case !nok:
			out = append(out, ResourceChange{LogicalID: id, Type: typ(p), Action: Remove})
		default:
			if ch := DiffValues("", p, n); len(ch) > 0 {
				out = append(out, ResourceChange{LogicalID: id, Type: typ(n), Action: Modify, Changes: ch})
			}
		}
	}
	return out
}

// DiffStrings compares two maps of strings, key by key.
func DiffStrings(prev, next map[string]string) []ValueChange {
	out := []ValueChange{}
	keys := map[string]bool{}
	for k := range prev {
		keys[k] = true
	}
	for k := range next {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		p, pok := prev[k]
		n, nok := next[k]
		if pok && nok && p == n {
			continue
		}
		c := ValueChange{Path: k}
		if pok {
			c.Old = p
		}
		if nok {
			c.New = n
			c.Pending = strings.Contains(n, Pending)
		}
		out = append(out, c)
	}
	return out
}

// DiffValues compares two JSON values and lists each leaf that differs,
// by path under path (maps by key, lists by index). Scalars compare as
// text: 80 and "80", true and "true" are the same to CloudFormation.
func DiffValues(path string, prev, next any) []ValueChange {
	var out []ValueChange
	var walk func(path string, p, n any)
	walk = func(path string, p, n any) {
		pm, pIsMap := p.(map[string]any)
		nm, nIsMap := n.(map[string]any)
		if pIsMap && nIsMap && !intrinsic(pm) && !intrinsic(nm) {
			for _, k := range union(pm, nm) {
				pv, pok := pm[k]
				nv, nok := nm[k]
				sub := join(path, k)
				switch {
				case !pok:
					out = append(out, ValueChange{Path: sub, New: nv, Pending: pending(nv)})
				case !nok:
					out = append(out, ValueChange{Path: sub, Old: pv})
				default:
					walk(sub, pv, nv)
				}
			}
			return
		}
		pl, pIsList := p.([]any)
		nl, nIsList := n.([]any)
		if pIsList && nIsList {
			for i := 0; i < max(len(pl), len(nl)); i++ {
				sub := fmt.Sprintf("%s[%d]", path, i)
				switch {
				case i >= len(pl):
					out = append(out, ValueChange{Path: sub, New: nl[i], Pending: pending(nl[i])})
				case i >= len(nl):
					out = append(out, ValueChange{Path: sub, Old: pl[i]})
				default:
					walk(sub, pl[i], nl[i])
				}
			}
			return
		}
		if !equal(p, n) {
			out = append(out, ValueChange{Path: path, Old: p, New: n, Pending: pending(n)})
		}
	}
	walk(path, prev, next)
	return out
}

// intrinsic: a map that is one intrinsic function ({"Ref": X},
// {"Fn::Sub": ...}): compared whole, not key by key.
func intrinsic(m map[string]any) bool {
	if len(m) != 1 {
		return false
	}
	for k := range m {
		return k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::")
	}
	return false
}

func pending(v any) bool {
	s, _ := v.(string)
	return strings.Contains(s, Pending)
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// equal compares two JSON values; scalars as text.
func equal(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, v := range a {
			w, ok := bm[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !equal(a[i], bl[i]) {
				return false
			}
		}
		return true
	case nil:
		return b == nil
	}
	switch b.(type) {
	case map[string]any, []any, nil:
		return false
	}
	return canon(a) == canon(b)
}

func union[V any](a, b map[string]V) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	return slices.Sorted(maps.Keys(keys))
}
