package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unsafe"

	"github.com/dlclark/regexp2"

	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/projectfs"
)

// maxRefDepth bounds chains of $ref followed while resolving one pointer.
const maxRefDepth = 32

// maxWalkDepth bounds the nesting resolveProperty follows (schemas inside
// schemas, through $refs), so that a chain of definitions cannot exhaust
// the stack.
const maxWalkDepth = 1000

// checker applies the rules beyond the meta-schema to one parsed schema.
type checker struct {
	file   string
	strict bool
	root   map[string]any
	res    *Result
	// external holds parsed documents for relative $refs, by path.
	external map[string]any
	// regex is the time left for patternProperties matches; regexErr is
	// set when it ran out (reported once, at the pointer being resolved).
	regex    *RegexBudget
	compiled map[string]*regexp2.Regexp
	regexErr error
	// regexReported: regexErr was reported.
	regexReported bool
	// folder is the schema's folder, opened for its relative $refs.
	folder *os.Root
	// memo holds descend's answers for the pointer being resolved.
	memo   map[walkKey]bool
	visits int // schemas descend has walked (tests)
}

func (c *checker) errorf(path, format string, args ...any) {
	c.res.Errors = append(c.res.Errors, Issue{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) warnf(path, format string, args ...any) {
	c.res.Warnings = append(c.res.Warnings, Issue{Path: path, Message: fmt.Sprintf(format, args...)})
}

// pointerLists are the top-level keywords holding JSON pointers to properties.
var pointerLists = []string{
	"readOnlyProperties", "writeOnlyProperties", "createOnlyProperties",
	"conditionalCreateOnlyProperties", "deprecatedProperties",
}

func (c *checker) semantic(raw []byte) {
	// Identifiers and property lists must name defined properties.
	for i, p := range strings1(c.root["primaryIdentifier"]) {
		c.checkPointer("/primaryIdentifier/"+idx(i), "primaryIdentifier", p)
	}
	if ai, ok := c.root["additionalIdentifiers"].([]any); ok {
		for i, set := range ai {
			for j, p := range strings1(set) {
				c.checkPointer(fmt.Sprintf("/additionalIdentifiers/%d/%d", i, j), "additionalIdentifiers", p)
			}
		}
	}
	for _, k := range pointerLists {
		for i, p := range strings1(c.root[k]) {
			c.checkPointer("/"+k+"/"+idx(i), k, p)
		}
	}

	// createOnly and readOnly must not overlap conditionalCreateOnly.
	cond := set(strings1(c.root["conditionalCreateOnlyProperties"]))
	for _, k := range []string{"createOnlyProperties", "readOnlyProperties"} {
		for i, p := range strings1(c.root[k]) {
			if cond[p] {
				c.errorf("/"+k+"/"+idx(i), "%s is listed in both %s and conditionalCreateOnlyProperties; keep it in one list", p, k)
			}
		}
	}

	c.checkTagging()
	c.checkReplacementStrategy()
	c.checkPropertyTransform()

	// arrayType only on arrays.
	c.walkSchemas(func(path string, s map[string]any) {
		if _, ok := s["arrayType"]; ok && !hasType(s, "array") {
			c.errorf(path+"/arrayType", "arrayType applies only to properties of type array; remove it or set \"type\": \"array\"")
		}
	})

	c.checkRefs()

	if _, ok := c.root["remote"]; ok {
		c.errorf("/remote", "property 'remote' is reserved for CloudFormation use; remove it")
	}

	c.checkSize(raw)
}

// checkSize applies the registration size limit, measured on the minified
// document.
func (c *checker) checkSize(raw []byte) {
	if len(raw) <= MaxSchemaSize {
		return // minifying only shrinks it
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil && buf.Len() > MaxSchemaSize {
		tn, _ := c.root["typeName"].(string)
		if awsPublished(tn) {
			c.warnf("/", "schema is %d bytes minified, above the %d-byte limit for registering a type (AWS-published types are exempt)", buf.Len(), MaxSchemaSize)
		} else {
			c.errorf("/", "schema is %d bytes minified, above the %d-byte limit for registering a type; move shared shapes to definitions or split the type", buf.Len(), MaxSchemaSize)
		}
	}
}

// hookRules applies to hook type schemas the rules that concern them:
// $refs, the reserved remote key, and wildcard permissions.
func (c *checker) hookRules(raw []byte) {
	c.checkRefs()
	if _, ok := c.root["remote"]; ok {
		c.errorf("/remote", "property 'remote' is reserved for CloudFormation use; remove it")
	}
	c.checkSize(raw)
	if handlers, ok := c.root["handlers"].(map[string]any); ok {
		for _, h := range slices.Sorted(maps.Keys(handlers)) {
			hm, _ := handlers[h].(map[string]any)
			for i, p := range strings1(hm["permissions"]) {
				if strings.Contains(p, "*") {
					c.warnf(fmt.Sprintf("/handlers/%s/permissions/%d", h, i), "use specific handler permissions instead of the wildcard %q", p)
				}
			}
		}
	}
}

// awsPublished reports whether typeName is in a namespace only AWS publishes
// to, whose schemas the registry limits do not bind.
func awsPublished(typeName string) bool {
	ns, _, _ := strings.Cut(typeName, "::")
	return ns == "AWS" || ns == "Alexa"
}

func (c *checker) checkTagging() {
	tagging, ok := c.root["tagging"].(map[string]any)
	if !ok {
		return
	}
	// Two checks of cloudformation-resource-schema (the Java library) that
	// neither the specification nor cloudformation-cli makes: warnings,
	// errors in strict mode.
	beyondSpec := c.warnf
	if c.strict {
		beyondSpec = c.errorf
	}
	if _, dup := c.root["taggable"]; dup {
		beyondSpec("/taggable", "both the deprecated taggable and tagging are present; remove taggable")
	}
	taggable, given := tagging["taggable"].(bool)
	taggable = taggable || !given // taggable defaults to true
	if tp, ok := tagging["tagProperty"].(string); ok {
		switch {
		case !strings.HasPrefix(tp, "/properties/"):
			c.errorf("/tagging/tagProperty", "tagProperty %q must be a JSON pointer starting with \"/properties/\", e.g. \"/properties/Tags\"", tp)
		case taggable && !c.resolveProperty(tp):
			// Only a taggable type needs its tag property to exist.
			c.errorf("/tagging/tagProperty", "tagProperty %q does not resolve to a property defined in the schema; define it or set taggable to false", tp)
		}
	}
	if up, ok := tagging["tagUpdatable"].(bool); ok && up {
		handlers, _ := c.root["handlers"].(map[string]any)
		if _, has := handlers["update"]; !has {
			beyondSpec("/tagging/tagUpdatable", "tagUpdatable is true but the schema has no update handler; add handlers.update or set tagUpdatable to false")
		}
	}
}

// checkReplacementStrategy applies the rule "a replacementStrategy is not
// valid for a mutable resource that does not need replacement during an
// update": a schema with an update handler (mutable) and neither
// createOnlyProperties nor conditionalCreateOnlyProperties (nothing an
// update replaces) may not set one. Without an update handler every update
// replaces the resource, so the strategy applies. Published AWS schemas
// that break the rule get a warning, as the registry accepted them.
func (c *checker) checkReplacementStrategy() {
	if _, ok := c.root["replacementStrategy"]; !ok {
		return
	}
	handlers, _ := c.root["handlers"].(map[string]any)
	if _, mutable := handlers["update"]; !mutable {
		return
	}
	if len(strings1(c.root["createOnlyProperties"])) > 0 || len(strings1(c.root["conditionalCreateOnlyProperties"])) > 0 {
		return
	}
	const msg = "replacementStrategy is not valid for a mutable resource that does not need replacement during an update: the schema has an update handler and no createOnlyProperties"
	if tn, _ := c.root["typeName"].(string); awsPublished(tn) {
		c.warnf("/replacementStrategy", "%s (AWS-published types are exempt)", msg)
		return
	}
	c.errorf("/replacementStrategy", "%s; remove replacementStrategy, or list the properties whose change replaces the resource in createOnlyProperties", msg)
}

// checkPropertyTransform checks the propertyTransform map: its keys are
// JSON pointers to properties (checked as the property lists are) and its
// values JSONata expressions, strings. The embedded meta-schema types the
// values of "/properties/..." keys; the values of other keys are typed here.
func (c *checker) checkPropertyTransform() {
	pt, ok := c.root["propertyTransform"].(map[string]any)
	if !ok {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(pt)) {
		path := "/propertyTransform/" + escape(k)
		c.checkPointer(path, "propertyTransform", k)
		if _, isStr := pt[k].(string); !isStr && !strings.HasPrefix(k, "/properties/") {
			c.errorf(path, "propertyTransform values are JSONata expressions, strings; found %s", jsonKind(pt[k]))
		}
	}
}

// jsonKind names a decoded JSON value's kind.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

// checkPointer reports p unless it names a defined property: an error in
// strict mode, else a warning (the reference tools accept such schemas, and
// published AWS schemas contain them).
func (c *checker) checkPointer(path, list, p string) {
	report := c.warnf
	if c.strict {
		report = c.errorf
	}
	if !strings.HasPrefix(p, "/properties/") {
		report(path, "%s entry %q must be a JSON pointer starting with \"/properties/\"", list, p)
		return
	}
	resolved := c.resolveProperty(p)
	if err := c.regexErr; err != nil {
		if !c.regexReported {
			c.regexReported = true
			c.errorf(path, "%s entry %q: %v", list, p, err)
		}
		return
	}
	if !resolved {
		report(path, "%s entry %q does not resolve to a property defined in the schema", list, p)
	}
}

// resolveProperty follows a /properties/... pointer through nested
// properties, array items ("*" or an index, or implicitly), $refs and
// combinators. Each (schema, rest of the pointer) pair is walked once: a
// definition reached again, through a cycle or another branch of a
// combinator, gives the answer it gave (or, while it is still being walked,
// no match), so the work is linear in the schema and the pointer (issue 19:
// two $refs to itself under oneOf doubled the paths at each level).
func (c *checker) resolveProperty(p string) bool {
	segs := strings.Split(strings.TrimPrefix(p, "/properties/"), "/")
	for i := range segs {
		segs[i] = unescape(segs[i])
	}
	props, _ := c.root["properties"].(map[string]any)
	cur, ok := props[segs[0]]
	if !ok {
		return false
	}
	c.memo = map[walkKey]bool{}
	return c.descend(cur, segs[1:], 0)
}

// walkKey is a schema (a decoded JSON object, by identity) and the number
// of pointer segments left to resolve in it.
type walkKey struct {
	schema unsafe.Pointer
	rest   int
}

func (c *checker) descend(node any, segs []string, depth int) bool {
	if len(segs) == 0 {
		return true
	}
	m, ok := node.(map[string]any)
	if !ok || depth > maxWalkDepth {
		return false
	}
	key := walkKey{reflect.ValueOf(m).UnsafePointer(), len(segs)}
	if r, seen := c.memo[key]; seen {
		return r
	}
	c.memo[key] = false // while it is walked: a cycle back to it adds nothing
	c.visits++
	r := c.descendOnce(m, segs, depth+1)
	c.memo[key] = r
	return r
}

func (c *checker) descendOnce(node map[string]any, segs []string, depth int) bool {
	s, ok := c.deref(node)
	if !ok {
		return false
	}
	seg := segs[0]
	// Pointers may spell the nested keyword: /properties/A/properties/B.
	if seg == "properties" && len(segs) > 1 {
		if props, ok := s["properties"].(map[string]any); ok {
			if child, ok := props[segs[1]]; ok && c.descend(child, segs[2:], depth) {
				return true
			}
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		if child, ok := props[seg]; ok && c.descend(child, segs[1:], depth) {
			return true
		}
	}
	if items, ok := s["items"]; ok {
		if seg == "*" || isIndex(seg) {
			if c.descend(items, segs[1:], depth) {
				return true
			}
		} else if c.descend(items, segs, depth) {
			return true
		}
	}
	if pp, ok := s["patternProperties"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(pp)) {
			if c.matches(k, seg) && c.descend(pp[k], segs[1:], depth) {
				return true
			}
		}
	}
	for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
		if arr, ok := s[kw].([]any); ok {
			for _, b := range arr {
				if c.descend(b, segs, depth) {
					return true
				}
			}
		}
	}
	return false
}

// matches reports whether the pattern p matches s, within the run's time
// for regular expressions; once that ran out, nothing matches.
func (c *checker) matches(p, s string) bool {
	if c.regexErr != nil {
		return false
	}
	if c.compiled == nil {
		c.compiled = map[string]*regexp2.Regexp{}
	}
	re, ok := c.compiled[p]
	if !ok {
		re, _ = compileECMA(p)
		c.compiled[p] = re
	}
	if re == nil {
		return false
	}
	if c.regex == nil {
		c.regex = NewRegexBudget(DefaultRegexBudget)
	}
	m, err := c.regex.match(re, s)
	if err != nil {
		c.regexErr = fmt.Errorf("matching the patternProperties pattern %q against %q: %w; the pattern is too slow (nested repetition such as (a+)+?)", p, s, err)
	}
	return m
}

// deref follows local $refs ("#/..." and "resource-schema.json#/...").
func (c *checker) deref(node any) (map[string]any, bool) {
	for i := 0; i <= maxRefDepth; i++ {
		s, ok := node.(map[string]any)
		if !ok {
			return nil, false
		}
		ref, ok := s["$ref"].(string)
		if !ok {
			return s, true
		}
		frag, local := localFragment(ref)
		if !local {
			return s, true
		}
		target, ok := resolveFragment(c.root, frag)
		if !ok {
			return nil, false
		}
		node = target
	}
	return nil, false
}

// localFragment returns the fragment of a $ref that points into the schema
// itself ("#..." or the registry's "resource-schema.json#..." convention).
func localFragment(ref string) (string, bool) {
	if strings.HasPrefix(ref, "#") {
		return ref[1:], true
	}
	if rest, ok := strings.CutPrefix(ref, "resource-schema.json#"); ok {
		return rest, true
	}
	if ref == "resource-schema.json" {
		return "", true
	}
	return "", false
}

// resolveFragment resolves a URI fragment (a JSON pointer) in doc.
func resolveFragment(doc any, frag string) (any, bool) {
	if f, err := url.PathUnescape(frag); err == nil {
		frag = f
	}
	if frag == "" {
		return doc, true
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, false // plain-name anchors are not used by resource schemas
	}
	cur := doc
	for _, seg := range strings.Split(frag[1:], "/") {
		seg = unescape(seg)
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[seg]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			n, ok := atoi(seg)
			if !ok || n >= len(v) {
				return nil, false
			}
			cur = v[n]
		default:
			return nil, false
		}
	}
	return cur, true
}

// checkRefs reports every $ref that does not resolve.
func (c *checker) checkRefs() {
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(t)) {
				switch k {
				case "enum", "const", "default", "examples":
					continue
				case "$ref":
					if ref, ok := t[k].(string); ok {
						c.checkRef(path+"/$ref", ref)
					}
					continue
				}
				walk(path+"/"+escape(k), t[k])
			}
		case []any:
			for i, e := range t {
				walk(path+"/"+idx(i), e)
			}
		}
	}
	walk("", c.root)
}

func (c *checker) checkRef(path, ref string) {
	if frag, ok := localFragment(ref); ok {
		if _, ok := resolveFragment(c.root, frag); !ok {
			c.errorf(path, "unresolvable $ref %q: no such location in this schema", ref)
		}
		return
	}
	u, err := url.Parse(ref)
	if err != nil {
		c.errorf(path, "invalid $ref %q: %v", ref, err)
		return
	}
	if u.IsAbs() {
		if strings.HasPrefix(ref, "http://json-schema.org/") || strings.HasPrefix(ref, "https://json-schema.org/") {
			return
		}
		c.warnf(path, "remote $ref %q is not fetched; it was not checked", ref)
		return
	}
	if c.file == "" {
		c.warnf(path, "relative $ref %q was not checked: the schema has no file location", ref)
		return
	}
	rel := filepath.FromSlash(u.Path)
	if !filepath.IsLocal(rel) {
		c.errorf(path, "unresolvable $ref %q: it must name a file in the schema's folder", ref)
		return
	}
	doc, err := c.loadExternal(rel)
	if err != nil {
		c.errorf(path, "unresolvable $ref %q: %v", ref, err)
		return
	}
	if _, ok := resolveFragment(doc, u.Fragment); !ok {
		c.errorf(path, "unresolvable $ref %q: %s has no location %q", ref, filepath.Base(rel), u.Fragment)
	}
}

// close releases the schema's folder.
func (c *checker) close() {
	if c.folder != nil {
		c.folder.Close()
	}
}

// loadExternal reads and parses the file rel names in the schema's folder,
// by the rule for every path a project names (internal/projectfs): a
// regular file inside the folder, no link out of it, never a FIFO waited
// on (issue 19: a $ref through a link could probe which JSON pointers
// exist in any file CI reads, and a $ref to a FIFO hung).
func (c *checker) loadExternal(rel string) (any, error) {
	if doc, ok := c.external[rel]; ok {
		return doc, nil
	}
	if c.folder == nil {
		root, err := os.OpenRoot(filepath.Dir(c.file))
		if err != nil {
			return nil, err
		}
		c.folder = root
	}
	data, err := projectfs.ReadFile(c.folder, rel, MaxFileSize)
	var tl *limitio.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, fmt.Errorf("%s: %w: more than %d bytes", rel, ErrTooLarge, MaxFileSize)
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s does not exist", filepath.Join(filepath.Dir(c.file), rel))
	case errors.Is(err, projectfs.ErrOutside), errors.Is(err, projectfs.ErrNotRegular):
		return nil, fmt.Errorf("%w; a $ref names a regular file in the schema's folder", err)
	case err != nil:
		return nil, err
	}
	doc, err := decodeJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", rel, err)
	}
	if c.external == nil {
		c.external = map[string]any{}
	}
	c.external[rel] = doc
	return doc, nil
}

// walkSchemas calls fn for every property schema under properties,
// definitions and typeConfiguration, recursively (not through $refs).
func (c *checker) walkSchemas(fn func(path string, s map[string]any)) {
	var visit func(path string, v any, depth int)
	visit = func(path string, v any, depth int) {
		s, ok := v.(map[string]any)
		if !ok || depth > 64 {
			return
		}
		fn(path, s)
		for _, kw := range []string{"properties", "patternProperties"} {
			if m, ok := s[kw].(map[string]any); ok {
				for _, k := range slices.Sorted(maps.Keys(m)) {
					visit(path+"/"+kw+"/"+escape(k), m[k], depth+1)
				}
			}
		}
		if it, ok := s["items"].(map[string]any); ok {
			visit(path+"/items", it, depth+1)
		}
		for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
			if arr, ok := s[kw].([]any); ok {
				for i, b := range arr {
					visit(path+"/"+kw+"/"+idx(i), b, depth+1)
				}
			}
		}
	}
	for _, top := range []string{"properties", "definitions"} {
		if m, ok := c.root[top].(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(m)) {
				visit("/"+top+"/"+escape(k), m[k], 0)
			}
		}
	}
	if tc, ok := c.root["typeConfiguration"].(map[string]any); ok {
		visit("/typeConfiguration", tc, 0)
	}
}

// lint adds the warnings the reference CLI prints; none invalidates.
func (c *checker) lint() {
	readOnly := set(strings1(c.root["readOnlyProperties"]))
	createOnly := set(strings1(c.root["createOnlyProperties"]))
	for i, p := range strings1(c.root["primaryIdentifier"]) {
		if !readOnly[p] && !createOnly[p] {
			c.warnf("/primaryIdentifier/"+idx(i), "primaryIdentifier %s should be listed in readOnlyProperties or createOnlyProperties", p)
		}
	}
	for _, k := range []string{"writeOnlyProperties", "createOnlyProperties", "conditionalCreateOnlyProperties"} {
		for i, p := range strings1(c.root[k]) {
			if readOnly[p] {
				c.warnf("/"+k+"/"+idx(i), "%s is in readOnlyProperties, which customers cannot specify; it should not also be in %s", p, k)
			}
		}
	}
	if props, ok := c.root["properties"].(map[string]any); ok {
		var list []string
		for _, k := range slices.Sorted(maps.Keys(props)) {
			switch strings.ToLower(k) {
			case "maxresults", "maxrecords", "maxitems", "nexttoken", "nextmarker", "nextpagetoken", "pagetoken", "paginationtoken":
				list = append(list, k)
			}
		}
		if len(list) > 0 {
			c.warnf("/properties", "LIST API inputs like MaxResults and NextToken should not be resource properties: %s", strings.Join(list, ", "))
		}
	}
	c.walkSchemas(func(path string, s map[string]any) {
		if name := lastSeg(path); strings.Contains(path, "/properties/") && name != "" && unicode.IsLower(rune(name[0])) && strings.HasSuffix(parentKw(path), "properties") {
			c.warnf(path, "CloudFormation property names usually start with an upper-case letter: %s", name)
		}
		if hasType(s, "array") {
			if _, ok := s["insertionOrder"]; !ok {
				c.warnf(path, "array without insertionOrder; set it explicitly (true if element order matters)")
			}
		}
		if p, ok := s["pattern"].(string); ok {
			if _, err := compileECMA(p); err != nil {
				c.warnf(path+"/pattern", "could not compile regular expression %q as ECMA-262: %v", p, err)
			}
			if strings.Contains(p, "arn:aws:") {
				c.warnf(path+"/pattern", "don't hard-code the aws partition in ARN patterns; use arn:aws[A-Za-z-]*:")
			}
		}
		if e, ok := s["enum"].([]any); ok && len(e) > 15 {
			c.warnf(path+"/enum", "enum with %d values; consider not maintaining large, evolving enums by hand", len(e))
		}
	})
	if handlers, ok := c.root["handlers"].(map[string]any); ok {
		for _, h := range slices.Sorted(maps.Keys(handlers)) {
			hm, _ := handlers[h].(map[string]any)
			for i, p := range strings1(hm["permissions"]) {
				if strings.Contains(p, "*") {
					c.warnf(fmt.Sprintf("/handlers/%s/permissions/%d", h, i), "use specific handler permissions instead of the wildcard %q", p)
				}
			}
		}
	}
	if nonASCII(c.root) {
		c.warnf("/", "non-ASCII characters found in the resource schema")
	}
}

func nonASCII(v any) bool {
	switch t := v.(type) {
	case string:
		for _, r := range t {
			if r < ' ' || r > '~' {
				return true
			}
		}
	case map[string]any:
		for k, e := range t {
			if nonASCII(k) || nonASCII(e) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if nonASCII(e) {
				return true
			}
		}
	}
	return false
}

func lastSeg(path string) string {
	i := strings.LastIndexByte(path, '/')
	return unescape(path[i+1:])
}

func parentKw(path string) string {
	i := strings.LastIndexByte(path, '/')
	if i <= 0 {
		return ""
	}
	return lastSeg(path[:i])
}

func hasType(s map[string]any, want string) bool {
	switch t := s["type"].(type) {
	case string:
		return t == want
	case []any:
		for _, e := range t {
			if e == want {
				return true
			}
		}
	}
	return false
}

// strings1 returns the string elements of a JSON array.
func strings1(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func set(ss []string) map[string]bool {
	m := make(map[string]bool, len(ss))
	for _, s := range ss {
		m[s] = true
	}
	return m
}

func unescape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func isIndex(s string) bool {
	_, ok := atoi(s)
	return ok
}

func atoi(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, false
		}
		n = n*10 + int(r-'0')
	}
	return n, true
}
