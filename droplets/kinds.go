package droplets

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/strictjson"
	"github.com/cloud-assembly/assemble/internal/suggest"
)

// Sentinel errors about droplet properties and attributes.
var (
	// ErrProperty: a required property is missing or has the wrong type.
	ErrProperty = errcode.New("property", "invalid property",
		"give the droplet's properties as its kind's table documents them")
	// ErrAttribute: a reference names an attribute the kind does not output.
	ErrAttribute = errcode.New("unknown_attribute", "unknown attribute",
		"name an attribute the droplet's kind outputs (the README lists each kind's attributes)")
	// ErrUnknownProperty: a property the kind does not document.
	ErrUnknownProperty = errcode.New("unknown_property", "unknown property",
		"remove or rename the property: the finding names the nearest one the droplet's kind documents")
)

// PathKind says what an assembly-relative path property names.
type PathKind int

const (
	// PathFile: the property names one file in the assembly.
	PathFile PathKind = iota + 1
	// PathDirectory: the property names a folder; every file under it is
	// part of the assembly.
	PathDirectory
)

// A Property describes one property of a droplet kind.
type Property struct {
	Name     string
	Required bool
	// Type is the JSON type of the value: "string", "map" (an object of
	// strings) or "list" (an array of strings); empty means any value.
	Type string
	// Path is non-zero when the value is an assembly-relative path.
	Path PathKind
	// InDirectory marks a value (a string, or each string of a list) that
	// names a file below the folder of the kind's PathDirectory property,
	// relative to that folder: a Dockerfile, the executable files.
	InDirectory bool
	// Template marks the CloudFormation template of a stack: the packager
	// packages it instead of copying it.
	Template bool
	// Doc says what the property is, for the README's tables.
	Doc string
}

// A Kind is a droplet kind: its type specifier, properties and the output
// attributes other droplets may reference.
type Kind struct {
	// Alias is the short name assembly.yaml may use ("stack").
	Alias string
	// Doc says in a sentence what the droplet deploys.
	Doc string
	// Type is the full type specifier written to manifest.json.
	Type string
	// Properties lists the kind's properties, in documentation order.
	Properties []Property
	// Attributes lists the fixed output attributes.
	Attributes []string
	// AttributePrefixes lists families of attributes ("output." for
	// "output.<name>").
	AttributePrefixes []string
	// AttributeDocs says what each attribute and family of attributes
	// (keyed by its prefix, "output.") holds.
	AttributeDocs map[string]string

	spec Specifier
}

var (
	mu      sync.RWMutex
	byKey   = map[string]*Kind{}
	byAlias = map[string]*Kind{}
)

// Register adds a droplet kind. Each kind registers itself from an init
// function in its own file, so adding a kind touches no other file. It
// panics on a malformed specifier or a duplicate alias or type: both are
// programming errors.
func Register(k *Kind) {
	sp, err := ParseSpecifier(k.Type)
	if err != nil {
		panic(err)
	}
	k.spec = sp
	mu.Lock()
	defer mu.Unlock()
	if _, dup := byKey[sp.key()]; dup {
		panic("droplets: kind registered twice: " + k.Type)
	}
	if k.Alias != "" {
		if _, dup := byAlias[k.Alias]; dup {
			panic("droplets: alias registered twice: " + k.Alias)
		}
		byAlias[k.Alias] = k
	}
	byKey[sp.key()] = k
}

// Lookup returns the kind of a parsed type specifier, ignoring its version.
func Lookup(sp Specifier) (*Kind, bool) {
	mu.RLock()
	defer mu.RUnlock()
	k, ok := byKey[sp.key()]
	return k, ok
}

// LookupAlias returns the kind with the given alias ("stack").
func LookupAlias(alias string) (*Kind, bool) {
	mu.RLock()
	defer mu.RUnlock()
	k, ok := byAlias[alias]
	return k, ok
}

// Kinds lists the registered kinds, sorted by alias then type.
func Kinds() []*Kind {
	mu.RLock()
	defer mu.RUnlock()
	ks := make([]*Kind, 0, len(byKey))
	for _, k := range byKey {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool {
		if ks[i].Alias != ks[j].Alias {
			return ks[i].Alias < ks[j].Alias
		}
		return ks[i].Type < ks[j].Type
	})
	return ks
}

// Aliases lists the registered aliases, sorted.
func Aliases() []string {
	var as []string
	for _, k := range Kinds() {
		if k.Alias != "" {
			as = append(as, k.Alias)
		}
	}
	sort.Strings(as)
	return as
}

// Property returns the named property, or nil.
func (k *Kind) Property(name string) *Property {
	for i := range k.Properties {
		if k.Properties[i].Name == name {
			return &k.Properties[i]
		}
	}
	return nil
}

// HasAttribute reports whether the kind outputs the attribute.
func (k *Kind) HasAttribute(attr string) bool {
	for _, a := range k.Attributes {
		if a == attr {
			return true
		}
	}
	for _, p := range k.AttributePrefixes {
		if rest, ok := strings.CutPrefix(attr, p); ok && rest != "" {
			return true
		}
	}
	return false
}

// AttributeList describes the attributes for messages: "output.<name>, stackArn".
func (k *Kind) AttributeList() string {
	var as []string
	for _, p := range k.AttributePrefixes {
		as = append(as, p+"<name>")
	}
	as = append(as, k.Attributes...)
	return strings.Join(as, ", ")
}

// CheckAttribute returns an error wrapping ErrAttribute when the kind does
// not output attr; the message lists the attributes it does output.
func (k *Kind) CheckAttribute(attr string) error {
	if k.HasAttribute(attr) {
		return nil
	}
	return fmt.Errorf("%w %q: %s outputs %s", ErrAttribute, attr, k.Name(), k.AttributeList())
}

// Name is the kind's short name for messages: its class, else its type.
func (k *Kind) Name() string {
	if k.spec.Class != "" {
		return k.spec.Class
	}
	return k.Type
}

// KindName is the kind a droplet's manifest Type string names, as every
// command's --json says it: the registered kind's class name
// ("StackDroplet"), else the specifier's class, else the Type as written.
func KindName(typ string) string {
	sp, err := ParseSpecifier(typ)
	if err != nil {
		return typ
	}
	if k, ok := Lookup(sp); ok {
		return k.Name()
	}
	if sp.Class != "" {
		return sp.Class
	}
	return typ
}

// CheckProperties checks that every required property is present and that
// the known properties have the right JSON type. Values are as decoded from
// JSON: strings, map[string]any, []any, json.Number, bool, nil. Properties
// the kind does not document are left alone. Errors wrap ErrProperty and
// name the property; all problems are joined.
func (k *Kind) CheckProperties(props map[string]any) error {
	var errs []error
	for _, p := range k.Properties {
		v, ok := props[p.Name]
		if !ok {
			if p.Required {
				errs = append(errs, &PropertyError{Property: p.Name, Missing: true, Err: fmt.Errorf("%w: %s needs %q", ErrProperty, k.Name(), p.Name)})
			}
			continue
		}
		switch p.Type {
		case "string":
			s, isString := v.(string)
			if !isString {
				errs = append(errs, &PropertyError{Property: p.Name, Err: fmt.Errorf("%w: want a string, got %s%s", ErrProperty, jsonType(v), quoteHint(v))})
			} else if s == "" && p.Required {
				errs = append(errs, &PropertyError{Property: p.Name, Err: fmt.Errorf("%w: must not be empty", ErrProperty)})
			}
		case "map":
			m, isMap := v.(map[string]any)
			if !isMap {
				errs = append(errs, &PropertyError{Property: p.Name, Err: fmt.Errorf("%w: want a map of strings, got %s", ErrProperty, jsonType(v))})
				continue
			}
			keys := slices.Sorted(maps.Keys(m))
			for _, key := range keys {
				if _, isString := m[key].(string); !isString {
					errs = append(errs, &PropertyError{Property: p.Name + "." + key, Err: fmt.Errorf("%w: want a string, got %s%s", ErrProperty, jsonType(m[key]), quoteHint(m[key]))})
				}
			}
		case "list":
			l, isList := v.([]any)
			if !isList {
				errs = append(errs, &PropertyError{Property: p.Name, Err: fmt.Errorf("%w: want a list of strings, got %s", ErrProperty, jsonType(v))})
				continue
			}
			for i, e := range l {
				if _, isString := e.(string); !isString {
					errs = append(errs, &PropertyError{Property: fmt.Sprintf("%s[%d]", p.Name, i), Err: fmt.Errorf("%w: want a string, got %s%s", ErrProperty, jsonType(e), quoteHint(e))})
				}
			}
		}
	}
	return errors.Join(errs...)
}

// UnknownProperties returns an error for each property (sorted by name)
// that the kind does not document, wrapping ErrUnknownProperty and naming
// the closest documented property when one is near ("did you mean").
func (k *Kind) UnknownProperties(props map[string]any) []error {
	names := make([]string, 0, len(k.Properties))
	for _, p := range k.Properties {
		names = append(names, p.Name)
	}
	var unknown []string
	for name := range props {
		if k.Property(name) == nil {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	var errs []error
	for _, name := range unknown {
		errs = append(errs, &PropertyError{Property: name, Err: fmt.Errorf("%w %q: %s documents %s%s", ErrUnknownProperty, name, k.Name(), strings.Join(names, ", "), suggest.Hint(name, names))})
	}
	return errs
}

// A PropertyError is a problem with one property (a dotted path below
// "properties").
type PropertyError struct {
	Property string
	// Missing is set when a required property is absent.
	Missing bool
	Err     error
}

func (e *PropertyError) Error() string { return e.Property + ": " + e.Err.Error() }
func (e *PropertyError) Unwrap() error { return e.Err }

func jsonType(v any) string { return strictjson.Kind(v) }

// quoteHint is the fix for a number or boolean where a string belongs
// (tagName: 1.0, Port: 8080): YAML reads them as numbers unless quoted.
func quoteHint(v any) string {
	switch jsonType(v) {
	case "a number", "a boolean":
		return ": put the value in quotes"
	}
	return ""
}
