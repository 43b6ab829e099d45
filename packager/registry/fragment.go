package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/yamlpos"
)

// Limits a fragment must respect (cloudformation-cli's defaults).
type Limits struct {
	Resources         int
	Outputs           int
	Mappings          int
	MappingAttributes int
	// FileSize is the largest fragment file, in bytes.
	FileSize int64
}

// DefaultLimits() returns the limits `cfn validate` enforces.
func DefaultLimits() Limits {
	return Limits{Resources: 500, Outputs: 200, Mappings: 200, MappingAttributes: 200, FileSize: 1_500_000}
}

// MaxNesting is how deep modules may nest: a module, its child module and
// that module's child.
const MaxNesting = 3

// Sentinel errors; the errors this package returns wrap one of them.
var (
	// ErrInvalidFragment: the fragment breaks a module rule or does not parse.
	ErrInvalidFragment = errcode.New("invalid_fragment", "invalid module fragment",
		"fix the module fragment at the place shown")
	// ErrProject: the module project folder is not laid out as cfn expects.
	ErrProject = errcode.New("invalid_module_project", "invalid module project",
		"a module project holds .rpdk-config and fragments/")
	// ErrTypeName: the module type name does not match Org::Service::Name::MODULE.
	ErrTypeName = errcode.New("invalid_type_name", "invalid module type name",
		"a module type name is Organization::Service::Name::MODULE")
)

// typeNamePattern is the module meta-schema's typeName pattern.
var typeNamePattern = regexp.MustCompile(`^[a-zA-Z0-9]{2,64}::[a-zA-Z0-9]{2,64}::[a-zA-Z0-9]{2,64}::MODULE$`)

// CheckTypeName reports whether name is a valid module type name.
func CheckTypeName(name string) error {
	if !typeNamePattern.MatchString(name) {
		return fmt.Errorf("%w: %q must look like Org::Service::Name::MODULE (2-64 letters or digits per part)", ErrTypeName, name)
	}
	return nil
}

// Problem is one rule a fragment breaks, at a line and column (0 if the
// rule concerns the whole file).
type Problem struct {
	Line, Col int
	Message   string
}

// ValidationError lists every problem found in one fragment file.
type ValidationError struct {
	File     string
	Problems []Problem
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(e.File)
		if p.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", p.Line, p.Col)
		}
		b.WriteString(": ")
		b.WriteString(p.Message)
	}
	return b.String()
}

func (e *ValidationError) Unwrap() error { return ErrInvalidFragment }

// Fragment is a parsed module template fragment.
type Fragment struct {
	File string
	Size int64
	root *yaml.Node // the document's top-level mapping
}

// fragmentExts are the file extensions cfn reads under fragments/.
var fragmentExts = []string{".json", ".yaml", ".yml", ".template"}

// ReadFragment reads and parses the fragment file at path. Files above
// limits.FileSize are refused before parsing.
func ReadFragment(path string, limits Limits) (*Fragment, error) {
	data, err := limitio.ReadFile(path, limits.FileSize)
	var tl *limitio.TooLargeError
	if errors.As(err, &tl) {
		return nil, &ValidationError{File: path, Problems: []Problem{{Message: fmt.Sprintf(
			"the total file size of the template fragments exceeds the CloudFormation template size limit of %d bytes; split the module", limits.FileSize)}}}
	}
	if err != nil {
		return nil, err
	}
	return ParseFragment(path, data)
}

// ParseFragment parses fragment bytes (JSON or YAML, short-form tags allowed).
func ParseFragment(file string, data []byte) (*Fragment, error) {
	if le := yamlpos.CheckNodes(data); le != nil {
		return nil, &ValidationError{File: file, Problems: []Problem{{Line: le.Pos.Line, Col: le.Pos.Column, Message: le.Reason()}}}
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		if err := jsonSyntax(data); err != nil {
			return nil, &ValidationError{File: file, Problems: []Problem{*err}}
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &ValidationError{File: file, Problems: []Problem{yamlProblem(data, err)}}
	}
	if len(doc.Content) == 0 {
		return nil, &ValidationError{File: file, Problems: []Problem{{Message: "the fragment is empty; a module fragment is a template with a Resources section"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &ValidationError{File: file, Problems: []Problem{{Line: root.Line, Col: root.Column, Message: "the fragment must be a mapping of template sections (Resources, Parameters, ...)"}}}
	}
	return &Fragment{File: file, Size: int64(len(data)), root: root}, nil
}

// jsonSyntax reports the first JSON syntax error with its line and column.
func jsonSyntax(data []byte) *Problem {
	d := json.NewDecoder(bytes.NewReader(data))
	var v any
	err := d.Decode(&v)
	if err == nil {
		return nil
	}
	off := int(d.InputOffset())
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = int(se.Offset) - 1
	}
	if off < 0 {
		off = 0
	}
	if off > len(data) {
		off = len(data)
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return &Problem{Line: line, Col: col, Message: fmt.Sprintf("invalid JSON: %v; fix the syntax at line %d, column %d", err, line, col)}
}

// yamlProblem turns a YAML parser error into a Problem at the place where
// the parser failed.
func yamlProblem(data []byte, err error) Problem {
	pos, msg := yamlpos.Locate(data, err)
	return Problem{Line: pos.Line, Col: pos.Column, Message: "invalid YAML: " + msg}
}

// section returns the value of a top-level key, or nil.
func (f *Fragment) section(name string) (key, val *yaml.Node) {
	return lookup(f.root, name)
}

func lookup(m *yaml.Node, name string) (key, val *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == name {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// pairs returns a mapping's key/value nodes in source order.
func pairs(m *yaml.Node) [][2]*yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	out := make([][2]*yaml.Node, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, [2]*yaml.Node{m.Content[i], m.Content[i+1]})
	}
	return out
}

// Validate checks every rule of `cfn validate` and returns a
// *ValidationError listing all problems, or nil.
func (f *Fragment) Validate(limits Limits) error {
	var ps []Problem
	add := func(n *yaml.Node, format string, args ...any) {
		p := Problem{Message: fmt.Sprintf(format, args...)}
		if n != nil {
			p.Line, p.Col = n.Line, n.Column
		}
		ps = append(ps, p)
	}
	if f.Size > limits.FileSize {
		add(nil, "the total file size of the template fragments (%d bytes) exceeds the CloudFormation template size limit of %d bytes; split the module", f.Size, limits.FileSize)
	}
	walk(f.root, func(k, v *yaml.Node) {
		switch {
		case k != nil && k.Value == "Fn::ImportValue", v.Tag == "!ImportValue":
			n := v
			if v.Tag != "!ImportValue" {
				n = k
			}
			add(n, "template fragment can't contain any Fn::ImportValue; pass the value in as a module parameter")
		case k != nil && k.Value == "Fn::Transform" && k != f.rootKey("Fn::Transform") && !f.isResourceKey(k):
			add(k, "template fragment can't contain any transform (Fn::Transform); modules are expanded without macros")
		}
	})

	// Resources.
	rk, res := f.section("Resources")
	switch {
	case rk == nil:
		add(nil, "a module template fragment must have a Resources section")
	case res.Kind != yaml.MappingNode:
		add(res, "the Resources section must be a mapping of logical IDs to resources")
	default:
		if n := len(res.Content) / 2; n > limits.Resources {
			add(rk, "the module template fragment has %d resources but must not exceed the limit of %d resources", n, limits.Resources)
		}
		for _, p := range pairs(res) {
			name, r := p[0], p[1]
			typeKey, typ := lookup(r, "Type")
			_, nm := lookup(r, "Name")
			switch {
			case r.Kind != yaml.MappingNode:
				add(r, "resource '%s' must be a mapping with a Type", name.Value)
			case typeKey != nil:
				switch typ.Value {
				case "AWS::CloudFormation::Stack":
					add(typ, "template fragment can't contain nested stack (resource '%s'); use a child module instead", name.Value)
				case "AWS::CloudFormation::Macro":
					add(typ, "template fragment can't contain any macro (resource '%s')", name.Value)
				}
			case nm != nil:
				if nm.Value == "AWS::Include" {
					add(name, "template fragment can't use AWS::Include transform; inline the included template")
				} else {
					add(name, "resource '%s' is invalid: it has a Name but no Type (transforms are not allowed in modules)", name.Value)
				}
			default:
				add(name, "resource '%s' has neither Type nor Name; add its Type", name.Value)
			}
		}
	}

	// The other sections holding named entries must be mappings.
	for _, name := range []string{"Parameters", "Outputs", "Mappings", "Conditions"} {
		if _, v := f.section(name); v != nil && v.Kind != yaml.MappingNode && !isNullNode(v) {
			add(v, "the %s section must be a mapping of names to entries", name)
		}
	}

	// Parameters.
	if _, params := f.section("Parameters"); params != nil {
		for _, p := range pairs(params) {
			if k, _ := lookup(p[1], "Type"); k == nil {
				add(p[0], "parameter '%s' must have a Type", p[0].Value)
			}
		}
	}

	// Transforms.
	for _, name := range []string{"Transform", "transform"} {
		if k, _ := f.section(name); k != nil {
			add(k, "template fragment can't contain transform section; remove %s", name)
		}
	}
	if k, _ := f.section("Fn::Transform"); k != nil {
		add(k, "template fragment can't contain any transform (Fn::Transform)")
	}

	// Outputs.
	if ok, outs := f.section("Outputs"); outs != nil {
		for _, p := range pairs(outs) {
			if k, _ := lookup(p[1], "Export"); k != nil {
				add(k, "template fragment cannot contain any Export; found an Export statement in Output: %s", p[0].Value)
			}
		}
		if n := len(outs.Content) / 2; outs.Kind == yaml.MappingNode && n > limits.Outputs {
			add(ok, "the module template fragment has %d outputs but must not exceed the limit of %d outputs", n, limits.Outputs)
		}
	}

	// Mappings.
	if mk, maps := f.section("Mappings"); maps != nil && maps.Kind == yaml.MappingNode {
		if n := len(maps.Content) / 2; n > limits.Mappings {
			add(mk, "the module template fragment has %d mappings but must not exceed the limit of %d mappings", n, limits.Mappings)
		}
		for _, p := range pairs(maps) {
			if n := len(p[1].Content) / 2; p[1].Kind == yaml.MappingNode && n > limits.MappingAttributes {
				add(p[0], "the mapping %s has %d attributes but must not exceed the limit of %d mapping attributes", p[0].Value, n, limits.MappingAttributes)
			}
		}
	}

	if len(ps) == 0 {
		return nil
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
	return &ValidationError{File: f.File, Problems: ps}
}

func isNullNode(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// rootKey returns the top-level key node named name.
func (f *Fragment) rootKey(name string) *yaml.Node {
	k, _ := f.section(name)
	return k
}

// isResourceKey reports whether k is a logical ID under Resources (those
// are checked as resources, with their own messages).
func (f *Fragment) isResourceKey(k *yaml.Node) bool {
	_, res := f.section("Resources")
	for _, p := range pairs(res) {
		if p[0] == k {
			return true
		}
	}
	return false
}

// walk calls fn for every node with the mapping key it sits under (nil for
// sequence elements and the root).
func walk(n *yaml.Node, fn func(k, v *yaml.Node)) {
	var visit func(k, v *yaml.Node, depth int)
	visit = func(k, v *yaml.Node, depth int) {
		if v == nil || depth > 512 {
			return
		}
		fn(k, v)
		switch v.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(v.Content); i += 2 {
				visit(v.Content[i], v.Content[i+1], depth+1)
			}
		case yaml.SequenceNode:
			for _, e := range v.Content {
				visit(nil, e, depth+1)
			}
		}
	}
	visit(nil, n, 0)
}

// ModuleTypes returns the ::MODULE types the fragment's resources use, in
// source order, without duplicates.
func (f *Fragment) ModuleTypes() []string {
	_, res := f.section("Resources")
	var out []string
	seen := map[string]bool{}
	for _, p := range pairs(res) {
		if _, t := lookup(p[1], "Type"); t != nil && strings.HasSuffix(t.Value, "::MODULE") && !seen[t.Value] {
			seen[t.Value] = true
			out = append(out, t.Value)
		}
	}
	return out
}

// isFragmentFile reports whether cfn would read name as a fragment.
func isFragmentFile(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	for _, e := range fragmentExts {
		if ext == e {
			return true
		}
	}
	return false
}
