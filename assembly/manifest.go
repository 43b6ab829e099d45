package assembly

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/internal/strictjson"
)

// SchemaVersion is the only manifest schema this package reads and writes.
const SchemaVersion = "cloud-assembly/1.0"

// A Manifest is the content of manifest.json.
type Manifest struct {
	Schema   string              `json:"schema"`
	Droplets map[string]*Droplet `json:"droplets"`
	Missing  map[string]*Missing `json:"missing,omitempty"`
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

// ParseManifest parses manifest.json strictly: one JSON object, no duplicate
// keys at any depth, no unknown fields, the schema cloud-assembly/1.0, and
// the right JSON types. It does not check references or the graph: call
// Validate for that. Every error wraps ErrManifest.
func ParseManifest(b []byte) (*Manifest, error) {
	if len(b) > MaxManifestSize {
		return nil, fmt.Errorf("%w: manifest.json of %d bytes, at most %d allowed", ErrTooLarge, len(b), MaxManifestSize)
	}
	v, err := decodeJSON(b)
	if err != nil {
		return nil, err
	}
	return manifestFrom(v)
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
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&out); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrManifest, err)
	}
	return buf.Bytes(), nil
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

// Manifest reads manifest.json from the assembly and parses it. It
// establishes no trust: a signed assembly must be verified first.
func (r *Reader) Manifest() (*Manifest, error) {
	f := r.File(ManifestName)
	if f == nil {
		return nil, fmt.Errorf("%w: no %s in the archive", ErrManifest, ManifestName)
	}
	if f.Size() > MaxManifestSize {
		return nil, fmt.Errorf("%w: %s of %d bytes, at most %d allowed", ErrTooLarge, ManifestName, f.Size(), MaxManifestSize)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFormat, ManifestName, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, MaxManifestSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrFormat, ManifestName, err)
	}
	if len(b) > MaxManifestSize {
		return nil, fmt.Errorf("%w: %s larger than %d bytes", ErrTooLarge, ManifestName, MaxManifestSize)
	}
	return ParseManifest(b)
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

// A FieldError is a JSON value of the wrong shape at a path in manifest.json.
type FieldError struct {
	Path string
	Msg  string
}

func (e *FieldError) Error() string { return "manifest.json: " + e.Path + ": " + e.Msg }
func (e *FieldError) Unwrap() error { return ErrManifest }

type fields struct {
	path string
	obj  map[string]any
	seen map[string]bool
	err  error
}

func object(path string, v any) (*fields, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &FieldError{path, "want an object, got " + typeName(v)}
	}
	return &fields{path: path, obj: obj, seen: map[string]bool{}}, nil
}

func (f *fields) sub(key string) string {
	if f.path == "" {
		return key
	}
	return f.path + "." + key
}

func (f *fields) value(key string, required bool) (any, bool) {
	f.seen[key] = true
	v, ok := f.obj[key]
	if !ok && required && f.err == nil {
		f.err = &FieldError{f.path, fmt.Sprintf("missing required key %q", key)}
	}
	return v, ok
}

func (f *fields) str(key string, required bool) string {
	v, ok := f.value(key, required)
	if !ok {
		return ""
	}
	s, isStr := v.(string)
	if !isStr && f.err == nil {
		f.err = &FieldError{f.sub(key), "want a string, got " + typeName(v)}
	}
	return s
}

func (f *fields) done() error {
	if f.err != nil {
		return f.err
	}
	var unknown []string
	for k := range f.obj {
		if !f.seen[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return &FieldError{f.sub(unknown[0]), "unknown key (the spec defines no such field)"}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func manifestFrom(v any) (*Manifest, error) {
	top, err := object("", v)
	if err != nil {
		return nil, err
	}
	m := &Manifest{Schema: top.str("schema", true)}
	if top.err == nil && m.Schema != SchemaVersion {
		return nil, &FieldError{"schema", fmt.Sprintf("unsupported schema %q, want %q", m.Schema, SchemaVersion)}
	}
	dv, _ := top.value("droplets", true)
	mv, hasMissing := top.value("missing", false)
	if err := top.done(); err != nil {
		return nil, err
	}
	drops, err := object("droplets", dv)
	if err != nil {
		return nil, err
	}
	if len(drops.obj) > MaxDroplets {
		return nil, fmt.Errorf("%w: %d droplets, at most %d allowed", ErrTooLarge, len(drops.obj), MaxDroplets)
	}
	m.Droplets = make(map[string]*Droplet, len(drops.obj))
	for _, id := range sortedKeys(drops.obj) {
		d, err := dropletFrom(drops.sub(id), drops.obj[id])
		if err != nil {
			return nil, err
		}
		m.Droplets[id] = d
	}
	if hasMissing {
		mo, err := object("missing", mv)
		if err != nil {
			return nil, err
		}
		m.Missing = make(map[string]*Missing, len(mo.obj))
		for _, key := range sortedKeys(mo.obj) {
			e, err := object(mo.sub(key), mo.obj[key])
			if err != nil {
				return nil, err
			}
			ms := &Missing{Provider: e.str("provider", true)}
			pv, ok := e.value("props", true)
			if err := e.done(); err != nil {
				return nil, err
			}
			if ok {
				props, isObj := pv.(map[string]any)
				if !isObj {
					return nil, &FieldError{e.sub("props"), "want an object, got " + typeName(pv)}
				}
				ms.Props = props
			}
			m.Missing[key] = ms
		}
	}
	return m, nil
}

func dropletFrom(path string, v any) (*Droplet, error) {
	f, err := object(path, v)
	if err != nil {
		return nil, err
	}
	d := &Droplet{Type: f.str("type", true), Environment: f.str("environment", true)}
	if dv, ok := f.value("dependsOn", false); ok {
		arr, isArr := dv.([]any)
		if !isArr {
			return nil, &FieldError{f.sub("dependsOn"), "want an array of logical IDs, got " + typeName(dv)}
		}
		d.DependsOn = make([]string, 0, len(arr))
		for i, e := range arr {
			s, isStr := e.(string)
			if !isStr {
				return nil, &FieldError{f.sub("dependsOn") + "[" + strconv.Itoa(i) + "]", "want a string, got " + typeName(e)}
			}
			d.DependsOn = append(d.DependsOn, s)
		}
	}
	if mv, ok := f.value("metadata", false); ok {
		mo, err := object(f.sub("metadata"), mv)
		if err != nil {
			return nil, err
		}
		d.Metadata = make(map[string]*Metadata, len(mo.obj))
		for _, key := range sortedKeys(mo.obj) {
			e, err := object(mo.sub(key), mo.obj[key])
			if err != nil {
				return nil, err
			}
			md := &Metadata{Kind: e.str("kind", true)}
			md.Value, _ = e.value("value", true)
			if err := e.done(); err != nil {
				return nil, err
			}
			d.Metadata[key] = md
		}
	}
	if pv, ok := f.value("properties", false); ok {
		props, isObj := pv.(map[string]any)
		if !isObj {
			return nil, &FieldError{f.sub("properties"), "want an object, got " + typeName(pv)}
		}
		d.Properties = props
	}
	if err := f.done(); err != nil {
		return nil, err
	}
	return d, nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// CheckManifestFiles checks that every path property of a droplet of a
// known kind names what the archive holds: a file for a file property, at
// least one file under the folder for a directory property. Problems are
// *ValidationError values, joined.
func (r *Reader) CheckManifestFiles(m *Manifest) error {
	var errs []error
	for _, id := range m.IDs() {
		d := m.Droplets[id]
		sp, err := droplets.ParseSpecifier(d.Type)
		if err != nil {
			continue
		}
		kind, ok := droplets.Lookup(sp)
		if !ok {
			continue
		}
		for _, p := range kind.Properties {
			v, ok := d.Properties[p.Name].(string)
			if p.Path == 0 || !ok {
				continue
			}
			switch p.Path {
			case droplets.PathFile:
				if r.File(v) == nil {
					errs = append(errs, &ValidationError{Droplet: id, Field: "properties." + p.Name, Err: fmt.Errorf("names %q, which is not a file in the archive", v)})
				}
			case droplets.PathDirectory:
				found := false
				for _, f := range r.Files() {
					if strings.HasPrefix(f.Name(), v+"/") {
						found = true
						break
					}
				}
				if !found {
					errs = append(errs, &ValidationError{Droplet: id, Field: "properties." + p.Name, Err: fmt.Errorf("names folder %q, which holds no file in the archive", v)})
				}
			}
		}
	}
	return errors.Join(errs...)
}
