package assembly

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	"github.com/cloud-assembly/assemble/internal/jsontext"
	"github.com/cloud-assembly/assemble/internal/strictjson"
)

// SchemaVersion is the only manifest schema this package reads and writes.
const SchemaVersion = "cloud-assembly/1.0"

// A Manifest is the content of manifest.json.
type Manifest struct {
	Schema   string              `json:"schema"`
	Droplets map[string]*Droplet `json:"droplets"`
	Missing  map[string]*Missing `json:"missing,omitempty"`
	// Targets are the stages the assembly deploys to: an extension of the
	// spec (see Target), absent when there are none.
	Targets map[string]*Target `json:"targets,omitempty"`
}

// A Droplet is one deployable part of the assembly.
type Droplet struct {
	Type        string               `json:"type"`
	Environment string               `json:"environment"`
	DependsOn   []string             `json:"dependsOn,omitempty"`
	Metadata    map[string]*Metadata `json:"metadata,omitempty"`
	// Properties hold JSON values as decoded with json.Number: string,
	// json.Number, bool, nil, []any and map[string]any.
	Properties map[string]any `json:"properties,omitempty"`
}

// Metadata is one named metadata entry of a droplet.
type Metadata struct {
	Kind  string `json:"kind"`
	Value any    `json:"value"`
}

// Missing describes contextual information a droplet still needs.
type Missing struct {
	Provider string         `json:"provider"`
	Props    map[string]any `json:"props"`
}

// A SyntaxError is a JSON error in manifest.json at a line and column.
type SyntaxError struct {
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("manifest.json:%d:%d: %s", e.Line, e.Column, e.Msg)
}
func (e *SyntaxError) Unwrap() error { return ErrManifest }

// ParseManifest parses manifest.json: one JSON object, no duplicate keys
// at any depth, the schema cloud-assembly/1.0, the keys the spec requires
// with the right JSON types. Keys the spec does not define are ignored
// (Check reports them). It checks nothing else: use Check, or Validate.
// Every error wraps ErrManifest (or ErrTooLarge).
func ParseManifest(b []byte) (*Manifest, error) {
	if len(b) > MaxManifestSize {
		return nil, fmt.Errorf("%w: manifest.json of %d bytes, at most %d allowed", ErrTooLarge, len(b), MaxManifestSize)
	}
	c := &checker{}
	m := c.parse(b)
	if m == nil {
		_, err := c.finish(&Report{})
		return nil, err
	}
	return m, nil
}

// Marshal returns manifest.json: keys sorted, two-space indentation, no
// HTML escaping, a final newline. The same manifest always gives the same
// bytes.
func (m *Manifest) Marshal() ([]byte, error) {
	out := *m
	if out.Droplets == nil {
		out.Droplets = map[string]*Droplet{}
	}
	if len(m.Missing) > 0 {
		out.Missing = make(map[string]*Missing, len(m.Missing))
		for k, v := range m.Missing {
			c := *v
			if c.Props == nil {
				c.Props = map[string]any{}
			}
			out.Missing[k] = &c
		}
	}
	b, err := jsontext.MarshalIndent(&out)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrManifest, err)
	}
	return b, nil
}

// IDs returns the droplets' logical IDs, sorted.
func (m *Manifest) IDs() []string {
	ids := make([]string, 0, len(m.Droplets))
	for id := range m.Droplets {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// decodeJSON decodes manifest.json strictly (see strictjson.Decode),
// reporting syntax errors as a *SyntaxError.
func decodeJSON(b []byte) (any, error) {
	v, err := strictjson.Decode(b, MaxManifestDepth)
	if se := (*strictjson.SyntaxError)(nil); errors.As(err, &se) {
		return nil, &SyntaxError{Line: se.Line, Column: se.Column, Msg: se.Msg}
	}
	return v, err
}

// parse decodes manifest.json and converts it, recording what it finds:
// unknown keys as they are, and JSON or schema errors. It returns nil when
// the JSON or its shape is wrong, so nothing else can be checked.
func (c *checker) parse(b []byte) *Manifest {
	v, err := decodeJSON(b)
	if err != nil {
		c.add(ruleSyntax, "", "", err, "%s", err.Error())
		return nil
	}
	p := &parser{c: c}
	m := p.manifest(v)
	if p.bad {
		return nil
	}
	return m
}

// parser converts the decoded JSON into a Manifest.
type parser struct {
	c   *checker
	bad bool // a structural finding: the manifest cannot be checked further
}

func (p *parser) fail(r *Rule, droplet, field, format string, args ...any) {
	p.bad = true
	p.c.add(r, droplet, field, nil, format, args...)
}

// fields reads the keys of one JSON object of the manifest, at a field
// path of a droplet (or of the manifest when droplet is empty).
type fields struct {
	p       *parser
	droplet string
	path    string
	obj     map[string]any
	seen    map[string]bool
}

func (p *parser) object(droplet, path string, v any) *fields {
	obj, ok := v.(map[string]any)
	if !ok {
		p.fail(ruleSchema, droplet, path, "want an object, got %s", typeName(v))
		return nil
	}
	return &fields{p: p, droplet: droplet, path: path, obj: obj, seen: map[string]bool{}}
}

func (f *fields) sub(key string) string { return joinField(f.path, key) }

func (f *fields) value(key string, required bool) (any, bool) {
	f.seen[key] = true
	v, ok := f.obj[key]
	if !ok && required {
		f.p.fail(ruleSchema, f.droplet, f.path, "missing required key %q", key)
	}
	return v, ok
}

func (f *fields) str(key string, required bool) string {
	v, ok := f.value(key, required)
	if !ok {
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		f.p.fail(ruleSchema, f.droplet, f.sub(key), "want a string, got %s", typeName(v))
	}
	return s
}

// done reports the keys nobody asked for: the spec defines no such field.
func (f *fields) done() {
	for _, k := range slices.Sorted(maps.Keys(f.obj)) {
		if !f.seen[k] {
			f.p.c.add(ruleUnknownKey, f.droplet, f.sub(k), nil, "unknown key: the spec defines no such field")
		}
	}
}

func (p *parser) manifest(v any) *Manifest {
	top := p.object("", "", v)
	if top == nil {
		return nil
	}
	m := &Manifest{Schema: top.str("schema", true)}
	if _, ok := top.obj["schema"].(string); ok && m.Schema != SchemaVersion {
		p.fail(ruleSchemaVersion, "", "schema", "unsupported schema %q, want %q", m.Schema, SchemaVersion)
	}
	dv, hasDroplets := top.value("droplets", true)
	mv, hasMissing := top.value("missing", false)
	tv, hasTargets := top.value("targets", false)
	top.done()
	if p.bad {
		return nil
	}
	if hasDroplets {
		m.Droplets = p.droplets(dv)
	}
	if hasMissing {
		m.Missing = p.missing(mv)
	}
	if hasTargets {
		m.Targets = p.targets(tv)
	}
	return m
}

func (p *parser) droplets(v any) map[string]*Droplet {
	drops := p.object("", "droplets", v)
	if drops == nil {
		return nil
	}
	if len(drops.obj) > MaxDroplets {
		p.fail(ruleTooLarge, "", "droplets", "%d droplets, at most %d allowed", len(drops.obj), MaxDroplets)
		return nil
	}
	out := make(map[string]*Droplet, len(drops.obj))
	for _, id := range slices.Sorted(maps.Keys(drops.obj)) {
		if d := p.droplet(id, drops.obj[id]); d != nil {
			out[id] = d
		}
	}
	return out
}

func (p *parser) missing(v any) map[string]*Missing {
	mo := p.object("", "missing", v)
	if mo == nil {
		return nil
	}
	out := make(map[string]*Missing, len(mo.obj))
	for _, key := range slices.Sorted(maps.Keys(mo.obj)) {
		e := p.object("", mo.sub(key), mo.obj[key])
		if e == nil {
			continue
		}
		ms := &Missing{Provider: e.str("provider", true)}
		pv, ok := e.value("props", true)
		e.done()
		if ok {
			props, isObj := pv.(map[string]any)
			if !isObj {
				p.fail(ruleSchema, "", e.sub("props"), "want an object, got %s", typeName(pv))
			}
			ms.Props = props
		}
		out[key] = ms
	}
	return out
}

// targets reads the "targets" extension: each target's environments (an
// array of strings), values and tags (objects of strings) and deployRole.
func (p *parser) targets(v any) map[string]*Target {
	to := p.object("", "targets", v)
	if to == nil {
		return nil
	}
	if len(to.obj) > MaxTargets {
		p.fail(ruleTooLarge, "", "targets", "%d targets, at most %d allowed", len(to.obj), MaxTargets)
		return nil
	}
	out := make(map[string]*Target, len(to.obj))
	for _, name := range slices.Sorted(maps.Keys(to.obj)) {
		e := p.object("", to.sub(name), to.obj[name])
		if e == nil {
			continue
		}
		t := &Target{DeployRole: e.str("deployRole", false)}
		if ev, ok := e.value("environments", true); ok {
			arr, isArr := ev.([]any)
			if !isArr {
				p.fail(ruleSchema, "", e.sub("environments"), "want an array of environments, got %s", typeName(ev))
			}
			if len(arr) > MaxTargetEnvironments {
				p.fail(ruleTooLarge, "", e.sub("environments"), "%d environments, at most %d allowed", len(arr), MaxTargetEnvironments)
				arr = nil
			}
			for i, x := range arr {
				s, isStr := x.(string)
				if !isStr {
					p.fail(ruleSchema, "", e.sub("environments")+"["+strconv.Itoa(i)+"]", "want a string, got %s", typeName(x))
				}
				t.Environments = append(t.Environments, s)
			}
		}
		t.Values = p.strings(e, "values")
		t.Tags = p.strings(e, "tags")
		e.done()
		out[name] = t
	}
	return out
}

// strings reads an optional object of strings.
func (p *parser) strings(f *fields, key string) map[string]string {
	v, ok := f.value(key, false)
	if !ok {
		return nil
	}
	o := p.object("", f.sub(key), v)
	if o == nil {
		return nil
	}
	out := make(map[string]string, len(o.obj))
	for _, k := range slices.Sorted(maps.Keys(o.obj)) {
		s, isStr := o.obj[k].(string)
		if !isStr {
			p.fail(ruleSchema, "", o.sub(k), "want a string, got %s", typeName(o.obj[k]))
		}
		out[k] = s
	}
	return out
}

func (p *parser) droplet(id string, v any) *Droplet {
	f := p.object(id, "", v)
	if f == nil {
		return nil
	}
	d := &Droplet{Type: f.str("type", true), Environment: f.str("environment", true)}
	if dv, ok := f.value("dependsOn", false); ok {
		if arr, isArr := dv.([]any); !isArr {
			p.fail(ruleSchema, id, "dependsOn", "want an array of logical IDs, got %s", typeName(dv))
		} else {
			d.DependsOn = make([]string, 0, len(arr))
			for i, e := range arr {
				s, isStr := e.(string)
				if !isStr {
					p.fail(ruleSchema, id, "dependsOn["+strconv.Itoa(i)+"]", "want a string, got %s", typeName(e))
				}
				d.DependsOn = append(d.DependsOn, s)
			}
		}
	}
	if mv, ok := f.value("metadata", false); ok {
		if mo := p.object(id, "metadata", mv); mo != nil {
			d.Metadata = make(map[string]*Metadata, len(mo.obj))
			for _, key := range slices.Sorted(maps.Keys(mo.obj)) {
				e := p.object(id, mo.sub(key), mo.obj[key])
				if e == nil {
					continue
				}
				md := &Metadata{Kind: e.str("kind", true)}
				md.Value, _ = e.value("value", true)
				e.done()
				d.Metadata[key] = md
			}
		}
	}
	if pv, ok := f.value("properties", false); ok {
		props, isObj := pv.(map[string]any)
		if !isObj {
			p.fail(ruleSchema, id, "properties", "want an object, got %s", typeName(pv))
		}
		d.Properties = props
	}
	f.done()
	return d
}

func typeName(v any) string { return strictjson.Kind(v) }
