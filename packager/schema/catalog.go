package schema

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/dlclark/regexp2"
	"go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/yamlpos"
)

// Limits for template checks.
const (
	// maxCatalogFiles bounds the schema files LoadCatalog reads.
	maxCatalogFiles = 10000
	// maxTemplateSize bounds a template CheckTemplate parses.
	maxTemplateSize = 16 << 20
	// maxDepth bounds nesting followed in property values.
	maxDepth = 64
	// maxCheckNodes bounds the property values checked in one template.
	maxCheckNodes = 1_000_000
)

// ErrCatalog is wrapped by LoadCatalog's errors.
var ErrCatalog = errcode.New("schema_catalog", "cannot load resource type schemas",
	"LoadCatalog reads a folder of resource type schemas (JSON files)")

// Catalog holds resource type schemas by type name, for checking templates.
type Catalog struct {
	dir   string
	types map[string]map[string]any
	regex *RegexBudget // shared by every check of the catalog
}

// LoadCatalog reads every *.json resource type schema in dir (not its
// subfolders). Files without a typeName are skipped; two schemas for one
// type, or a file that is not JSON, are errors.
func LoadCatalog(dir string) (*Catalog, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCatalog, err)
	}
	if len(files) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCatalog, err)
		}
		return nil, fmt.Errorf("%w: no *.json schema files in %s", ErrCatalog, dir)
	}
	if len(files) > maxCatalogFiles {
		return nil, fmt.Errorf("%w: more than %d schema files in %s", ErrCatalog, maxCatalogFiles, dir)
	}
	c := &Catalog{dir: dir, types: map[string]map[string]any{}, regex: NewRegexBudget(DefaultRegexBudget)}
	from := map[string]string{}
	for _, f := range files {
		data, err := readBounded(f)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCatalog, f, err)
		}
		doc, err := decodeJSON(data)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCatalog, f, err)
		}
		m, ok := doc.(map[string]any)
		if !ok {
			continue
		}
		tn, _ := m["typeName"].(string)
		if tn == "" {
			continue // shared definitions, not a resource type
		}
		if prev, dup := from[tn]; dup {
			return nil, fmt.Errorf("%w: %s and %s both define %s; keep one", ErrCatalog, prev, f, tn)
		}
		from[tn] = f
		c.types[tn] = m
	}
	return c, nil
}

// SetRegexBudget makes every later check of the catalog take its pattern
// matches out of b. LoadCatalog gives a catalog a budget of
// DefaultRegexBudget of its own: one per command that loads it.
func (c *Catalog) SetRegexBudget(b *RegexBudget) { c.regex = b }

// Types returns the type names in the catalog, sorted.
func (c *Catalog) Types() []string {
	return slices.Sorted(maps.Keys(c.types))
}

// Finding is one problem in a template, at a line and column.
type Finding struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Resource string `json:"resource"`
	Message  string `json:"message"`
}

func (f Finding) String() string {
	place := fmt.Sprintf("%s:%d", f.File, f.Line)
	if f.Col > 0 {
		place += fmt.Sprintf(":%d", f.Col)
	}
	if f.Resource == "" {
		return place + ": " + f.Message
	}
	return place + ": resource " + f.Resource + ": " + f.Message
}

// CheckTemplate checks the resources of a CloudFormation template (JSON or
// YAML) against the catalog: unknown resource types, unknown properties,
// missing required properties and values of the wrong type. Values built
// by intrinsic functions are not checked. Custom resources, and the
// resource types a template Transform expands, are not checked either. A
// template that does not parse yields one finding. The error, wrapping
// ErrRegexBudget, says the check could not be finished: the schemas'
// patternProperties took more than the catalog's time for regular
// expressions (see SetRegexBudget).
func (c *Catalog) CheckTemplate(file string, tmpl []byte) ([]Finding, error) {
	if len(tmpl) > maxTemplateSize {
		return []Finding{{File: file, Line: 1, Col: 1, Message: fmt.Sprintf("template above %d bytes; not checked", maxTemplateSize)}}, nil
	}
	if le := yamlpos.CheckNodes(tmpl); le != nil {
		return []Finding{{File: file, Line: le.Pos.Line, Col: le.Pos.Column, Message: le.Reason() + "; not checked"}}, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(tmpl, &doc); err != nil {
		return []Finding{{File: file, Line: 1, Col: 1, Message: "template does not parse: " + err.Error()}}, nil
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil
	}
	root := doc.Content[0]
	_, transform := mapGet(root, "Transform")
	_, res := mapGet(root, "Resources")
	if res == nil || res.Kind != yaml.MappingNode {
		return nil, nil
	}
	regex := c.regex
	if regex == nil {
		regex = NewRegexBudget(DefaultRegexBudget)
	}
	tc := &templateCheck{file: file, budget: maxCheckNodes, regex: regex, compiled: map[string]*regexp2.Regexp{}}
	for i := 0; i+1 < len(res.Content); i += 2 {
		name, r := res.Content[i], res.Content[i+1]
		tc.resource = name.Value
		_, typ := mapGet(r, "Type")
		if typ == nil || typ.Kind != yaml.ScalarNode {
			continue
		}
		tn := typ.Value
		if strings.HasPrefix(tn, "Custom::") || tn == "AWS::CloudFormation::CustomResource" {
			continue
		}
		s, ok := c.types[tn]
		if !ok {
			if transform != nil && strings.HasPrefix(tn, "AWS::Serverless::") {
				continue // expanded by the SAM transform
			}
			tc.add(typ, "unknown resource type %s: no schema for it in %s", tn, c.dir)
			continue
		}
		tc.schema = s
		tc.typeName = tn
		tc.readOnly = readOnlySet(s)
		_, props := mapGet(r, "Properties")
		switch {
		case props == nil:
			if req := strings1(s["required"]); len(req) > 0 {
				tc.add(name, "%s requires %s; add a Properties section", tn, quoteList(req))
			}
		case isIntrinsic(props):
		case props.Kind != yaml.MappingNode:
			tc.add(props, "Properties must be a mapping")
		default:
			tc.object(props, s, "", "/properties", 0)
		}
		if tc.err != nil {
			return tc.findings, tc.err
		}
	}
	return tc.findings, nil
}

type templateCheck struct {
	// budget bounds the value nodes visited, so YAML aliases cannot make
	// a small template expensive to check.
	budget   int
	file     string
	resource string
	typeName string
	schema   map[string]any
	readOnly map[string]bool // the schema's readOnlyProperties, items as "*"
	regex    *RegexBudget
	compiled map[string]*regexp2.Regexp // patterns, compiled once per check
	err      error                      // the regex budget ran out
	findings []Finding
}

func (tc *templateCheck) add(n *yaml.Node, format string, args ...any) {
	tc.findings = append(tc.findings, Finding{File: tc.file, Line: n.Line, Col: n.Column, Resource: tc.resource, Message: fmt.Sprintf(format, args...)})
}

// resolve follows $refs inside the resource's own schema.
func (tc *templateCheck) resolve(s map[string]any) map[string]any {
	for i := 0; i < maxRefDepth; i++ {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		frag, local := localFragment(ref)
		if !local {
			return nil
		}
		t, ok := resolveFragment(tc.schema, frag)
		if !ok {
			return nil
		}
		if s, ok = t.(map[string]any); !ok {
			return nil
		}
	}
	return nil
}

// object checks a mapping against an object schema: unknown keys, missing
// required keys, and each value.
func (tc *templateCheck) object(n *yaml.Node, s map[string]any, path, ptr string, depth int) {
	props, _ := s["properties"].(map[string]any)
	pattern, _ := s["patternProperties"].(map[string]any)
	closed := props != nil || pattern != nil
	if ap, ok := s["additionalProperties"].(bool); ok && !ap {
		closed = true
	} else if ok && ap {
		closed = false
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		seen[k.Value] = true
		sub, known := props[k.Value].(map[string]any)
		if !known {
			sub = tc.matchPattern(pattern, k, path)
			known = sub != nil
		}
		if tc.err != nil {
			return
		}
		kptr := ptr + "/" + escape(k.Value)
		if tc.readOnly[kptr] {
			tc.add(k, "%s is a read-only property of %s (readOnlyProperties): it cannot be specified by the customer; remove it", join(path, k.Value), tc.typeName)
			continue
		}
		if !known {
			if closed {
				tc.add(k, "unknown property %s for %s; check the name against its schema", join(path, k.Value), tc.typeName)
			}
			continue
		}
		tc.value(v, sub, join(path, k.Value), kptr, depth+1)
	}
	var missing []string
	for _, r := range strings1(s["required"]) {
		if !seen[r] {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		what := "Properties"
		if path != "" {
			what = path
		}
		tc.add(n, "%s is missing required %s", what, quoteList(missing))
	}
}

// value checks one value against its property schema.
func (tc *templateCheck) value(n *yaml.Node, s map[string]any, path, ptr string, depth int) {
	if depth > maxDepth || isIntrinsic(n) {
		return
	}
	if tc.budget--; tc.budget == 0 {
		tc.add(n, "template values expand beyond %d nodes (YAML aliases?); the rest is not checked", maxCheckNodes)
	}
	if tc.budget <= 0 {
		return
	}
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	s = tc.resolve(s)
	if s == nil {
		return
	}
	types := schemaTypes(s)
	if len(types) == 1 {
		want := types[0]
		if got, ok := fits(n, want); !ok {
			tc.add(n, "%s must be %s, not %s", path, article(want), got)
			return
		}
	} else if len(types) == 0 {
		// No single declared type (oneOf, anyOf, ...): check a mapping's
		// keys only when the schema lists them.
		if n.Kind == yaml.MappingNode && s["properties"] != nil {
			tc.object(n, s, path, ptr, depth)
		}
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		if hasType(s, "object") {
			tc.object(n, s, path, ptr, depth)
		}
	case yaml.SequenceNode:
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range n.Content {
				tc.value(e, items, path+"["+strconv.Itoa(i)+"]", ptr+"/*", depth+1)
			}
		}
	}
}

// readOnlySet returns a schema's readOnlyProperties pointers, with array
// indexes written as "*" (the template check visits items as "*").
func readOnlySet(s map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, p := range strings1(s["readOnlyProperties"]) {
		segs := strings.Split(p, "/")
		for i, seg := range segs {
			if i > 1 && isIndex(seg) {
				segs[i] = "*"
			}
		}
		out[strings.Join(segs, "/")] = true
	}
	return out
}

func schemaTypes(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		if len(t) == 1 {
			if str, ok := t[0].(string); ok {
				return []string{str}
			}
		}
	}
	return nil
}

// fits reports whether a template value can be of the JSON type want, with
// CloudFormation's coercions (any scalar for a string; numeric and boolean
// strings for numbers and booleans). It also names the value's kind.
func fits(n *yaml.Node, want string) (string, bool) {
	got := kindName(n)
	switch want {
	case "object":
		return got, n.Kind == yaml.MappingNode
	case "array":
		return got, n.Kind == yaml.SequenceNode
	}
	if n.Kind != yaml.ScalarNode {
		return got, false
	}
	tag := n.ShortTag()
	switch want {
	case "string":
		return got, tag != "!!null"
	case "integer":
		_, err := strconv.ParseInt(n.Value, 10, 64)
		return got, err == nil
	case "number":
		_, err := strconv.ParseFloat(n.Value, 64)
		return got, err == nil && !strings.ContainsAny(n.Value, "xXnN")
	case "boolean":
		v := strings.ToLower(n.Value)
		return got, v == "true" || v == "false"
	}
	return got, true
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!bool":
		return "a boolean"
	case "!!int", "!!float":
		return "a number"
	}
	return fmt.Sprintf("the string %q", n.Value)
}

func article(t string) string {
	switch t {
	case "object":
		return "an object"
	case "array":
		return "a list"
	case "integer":
		return "an integer"
	}
	return "a " + t
}

// isIntrinsic reports whether n is an intrinsic function (short or long
// form) whose result is only known at deploy time.
func isIntrinsic(n *yaml.Node) bool {
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		return true
	}
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		return false
	}
	k := n.Content[0].Value
	return k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::")
}

// matchPattern returns the schema of the first patternProperties entry
// whose pattern matches the key k, or nil. Past the regex budget it sets
// tc.err (and the check stops).
func (tc *templateCheck) matchPattern(pattern map[string]any, k *yaml.Node, path string) map[string]any {
	for _, p := range slices.Sorted(maps.Keys(pattern)) {
		re, ok := tc.compiled[p]
		if !ok {
			re, _ = compileECMA(p)
			tc.compiled[p] = re
		}
		if re == nil {
			continue
		}
		m, err := tc.regex.match(re, k.Value)
		if err != nil {
			tc.err = fmt.Errorf("%s:%d:%d: resource %s: %s: matching the pattern %q of %s against it: %w; the schema's pattern is too slow (nested repetition such as (a+)+?)", tc.file, k.Line, k.Column, tc.resource, join(path, k.Value), p, tc.typeName, err)
			tc.budget = 0 // check nothing more
			return nil
		}
		if m {
			s, _ := pattern[p].(map[string]any)
			return s
		}
	}
	return nil
}

func mapGet(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func quoteList(ss []string) string {
	sorted := append([]string(nil), ss...)
	sort.Strings(sorted)
	if len(sorted) == 1 {
		return "property " + sorted[0]
	}
	return "properties " + strings.Join(sorted, ", ")
}

// CheckPackaged checks a packaged template (what the assembly ships) and
// reports each finding at its place in the sources: findings for resources
// the source template declares with the same type carry the source's line
// and column; those for resources emitted by a local module carry the
// module file and line named by their Metadata.SourceMap. Anything else
// keeps its line in the packaged template, and says so.
func (c *Catalog) CheckPackaged(file string, source, packaged []byte) ([]Finding, error) {
	pf, err := c.CheckTemplate(file, packaged)
	if err != nil || len(pf) == 0 || string(source) == string(packaged) {
		return pf, err
	}
	src := templateResources(source)
	pkg := templateResources(packaged)
	var sf map[string][]Finding
	var out []Finding
	done := map[string]bool{}
	for _, f := range pf {
		r := f.Resource
		s, inSource := src[r]
		switch {
		case r != "" && inSource && s.typ == pkg[r].typ:
			if done[r] {
				continue
			}
			done[r] = true
			if sf == nil {
				sf = map[string][]Finding{}
				found, err := c.CheckTemplate(file, source)
				if err != nil {
					return nil, err
				}
				for _, g := range found {
					sf[g.Resource] = append(sf[g.Resource], g)
				}
			}
			if len(sf[r]) > 0 {
				out = append(out, sf[r]...)
				continue
			}
			// The source builds the value with a packaging-time function:
			// report the packaged finding at the source resource.
			for _, g := range pf {
				if g.Resource == r {
					g.Line, g.Col = s.line, s.col
					g.Message += " (after packaging)"
					out = append(out, g)
				}
			}
		case r != "" && pkg[r].sourceMap != "":
			mf, line, ok := parseSourceMap(pkg[r].sourceMap)
			if !ok {
				f.Message += " (line in the packaged template)"
				out = append(out, f)
				continue
			}
			f.File = filepath.ToSlash(filepath.Join(filepath.Dir(file), mf))
			f.Line, f.Col = line, 0
			out = append(out, f)
		default:
			f.Message += " (line in the packaged template)"
			out = append(out, f)
		}
	}
	return out, nil
}

type resourceInfo struct {
	typ       string
	line, col int
	sourceMap string
}

// templateResources maps logical IDs to their type, position and
// Metadata.SourceMap.
func templateResources(tmpl []byte) map[string]resourceInfo {
	out := map[string]resourceInfo{}
	var doc yaml.Node
	if len(tmpl) > maxTemplateSize || yamlpos.CheckNodes(tmpl) != nil || yaml.Unmarshal(tmpl, &doc) != nil || len(doc.Content) == 0 {
		return out
	}
	_, res := mapGet(doc.Content[0], "Resources")
	if res == nil || res.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(res.Content); i += 2 {
		k, r := res.Content[i], res.Content[i+1]
		info := resourceInfo{line: k.Line, col: k.Column}
		if _, t := mapGet(r, "Type"); t != nil && t.Kind == yaml.ScalarNode {
			info.typ = t.Value
		}
		_, md := mapGet(r, "Metadata")
		if _, sm := mapGet(md, "SourceMap"); sm != nil && sm.Kind == yaml.ScalarNode {
			info.sourceMap = sm.Value
		}
		out[k.Value] = info
	}
	return out
}

// parseSourceMap splits "./modules/m.yaml:Name:12" into file and line.
func parseSourceMap(sm string) (string, int, bool) {
	i := strings.LastIndexByte(sm, ':')
	if i < 0 {
		return "", 0, false
	}
	line, err := strconv.Atoi(sm[i+1:])
	if err != nil || line <= 0 {
		return "", 0, false
	}
	rest := sm[:i]
	j := strings.LastIndexByte(rest, ':')
	if j <= 0 {
		return "", 0, false
	}
	return rest[:j], line, true
}
