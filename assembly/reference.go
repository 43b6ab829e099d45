package assembly

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// A Reference is a ${LogicalId.attribute} token: a use of another droplet's
// output attribute.
type Reference struct {
	Droplet   string
	Attribute string
}

// String returns the token, "${Droplet.Attribute}".
func (r Reference) String() string { return "${" + r.Droplet + "." + r.Attribute + "}" }

// A Part of a property string: literal text, or a reference when Ref is set.
type Part struct {
	Literal string
	Ref     *Reference
}

// A ReferenceError is a malformed token at a byte offset of a string.
type ReferenceError struct {
	Offset int
	Msg    string
}

func (e *ReferenceError) Error() string   { return fmt.Sprintf("at byte %d: %s", e.Offset, e.Msg) }
func (e *ReferenceError) Unwrap() []error { return []error{ErrReference, ErrManifest} }

// LogicalIDPattern is the spec's rule for a droplet's logical ID (and the
// pattern docs/schema/manifest.schema.json gives).
const LogicalIDPattern = `^[A-Za-z0-9+/_-]{1,256}$`

var (
	logicalIDRE = regexp.MustCompile(LogicalIDPattern)
	attributeRE = regexp.MustCompile(`^[A-Za-z0-9_:+/-]+(\.[A-Za-z0-9_:+/-]+)*$`)
)

// ValidLogicalID reports whether id matches the spec's
// ^[A-Za-z0-9+/_-]{1,256}$ (so it holds no ".").
func ValidLogicalID(id string) bool { return logicalIDRE.MatchString(id) }

// ParseString splits a property string into literal text and references.
// The escapes are `\\` (a backslash) and `\${` (a literal "${"); any other
// backslash is an error, as is an unterminated or malformed "${...}".
// Errors are *ReferenceError, wrapping ErrReference and ErrManifest.
func ParseString(s string) ([]Part, error) {
	var parts []Part
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, Part{Literal: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		switch {
		case s[i] == '\\':
			switch {
			case strings.HasPrefix(s[i+1:], `\`):
				lit.WriteByte('\\')
				i += 2
			case strings.HasPrefix(s[i+1:], "${"):
				lit.WriteString("${")
				i += 3
			default:
				return nil, &ReferenceError{i, `lone backslash: write \\ for a backslash, \${ for a literal ${`}
			}
		case strings.HasPrefix(s[i:], "${"):
			end := strings.IndexByte(s[i:], '}')
			if end < 0 {
				return nil, &ReferenceError{i, `unterminated "${": close it with "}", or write \${ for a literal ${`}
			}
			body := s[i+2 : i+end]
			id, attr, ok := strings.Cut(body, ".")
			switch {
			case !ok || attr == "":
				return nil, &ReferenceError{i, fmt.Sprintf("reference %q needs the form ${LogicalId.attribute} (write \\${ for a literal ${)", s[i:i+end+1])}
			case !ValidLogicalID(id):
				return nil, &ReferenceError{i, fmt.Sprintf("reference %q: %q is not a valid logical ID", s[i:i+end+1], id)}
			case !attributeRE.MatchString(attr):
				return nil, &ReferenceError{i, fmt.Sprintf("reference %q: %q is not a valid attribute name", s[i:i+end+1], attr)}
			}
			flush()
			parts = append(parts, Part{Ref: &Reference{Droplet: id, Attribute: attr}})
			i += end + 1
		default:
			lit.WriteByte(s[i])
			i++
		}
	}
	flush()
	return parts, nil
}

// FormatString is the inverse of ParseString: it escapes literal text and
// writes references as tokens.
func FormatString(parts []Part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Ref != nil {
			b.WriteString(p.Ref.String())
			continue
		}
		for i := 0; i < len(p.Literal); i++ {
			switch {
			case p.Literal[i] == '\\':
				b.WriteString(`\\`)
			case strings.HasPrefix(p.Literal[i:], "${"):
				b.WriteString(`\${`)
				i++
			default:
				b.WriteByte(p.Literal[i])
			}
		}
	}
	return b.String()
}

// A PropertyReference is a reference found in a droplet's properties, with
// the dotted path of the string that holds it ("parameters.BucketName").
type PropertyReference struct {
	Reference
	Field string
}

// ScanProperties walks every string inside properties (keys sorted, arrays
// in order) and returns the references found, in that order. The first
// malformed string stops the walk; its error is a *FieldRefError naming the
// field.
func ScanProperties(props map[string]any) ([]PropertyReference, error) {
	var refs []PropertyReference
	var walk func(field string, v any) error
	walk = func(field string, v any) error {
		switch v := v.(type) {
		case string:
			parts, err := ParseString(v)
			if err != nil {
				return &FieldRefError{Field: field, Err: err}
			}
			for _, p := range parts {
				if p.Ref != nil {
					refs = append(refs, PropertyReference{*p.Ref, field})
				}
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if err := walk(joinField(field, k), v[k]); err != nil {
					return err
				}
			}
		case []any:
			for i, e := range v {
				if err := walk(fmt.Sprintf("%s[%d]", field, i), e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if err := walk(k, props[k]); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

// A FieldRefError is a malformed string at a property path.
type FieldRefError struct {
	Field string
	Err   error
}

func (e *FieldRefError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldRefError) Unwrap() error { return e.Err }

func joinField(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}
