package review

import (
	"bytes"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/errcode"
)

// Limits on the templates Parse reads (both may come from the cloud).
const (
	// MaxTemplateBytes is CloudFormation's largest template (in S3).
	MaxTemplateBytes = 1 << 20
	// maxNodes bounds the values one template expands to (aliases can
	// stand for exponentially many).
	maxNodes = 1 << 21
	maxDepth = 200
)

// ErrTemplate: a template that cannot be read (its position says where).
var ErrTemplate = errcode.New("review_template", "cannot read template",
	"the template must be CloudFormation JSON or YAML of at most 1 MiB; fix it where the message points")

// A TemplateError says where a template could not be read.
type TemplateError struct {
	Name      string
	Line, Col int
	Msg       string
}

func (e *TemplateError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.Name, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Name, e.Msg)
}

func (e *TemplateError) Unwrap() error { return ErrTemplate }

// A Template is a parsed CloudFormation template: JSON values (maps,
// lists, strings, numbers, booleans), intrinsic functions in long form
// ({"Ref": X}, {"Fn::GetAtt": [A, B]}).
type Template map[string]any

// Resources returns the Resources section (nil when absent).
func (t Template) Resources() map[string]any { return mapOf(t["Resources"]) }

// Parse reads a template, JSON or YAML (short-form tags such as !Ref and
// !GetAtt A.B become their long forms). An empty document is an empty
// template.
func Parse(name string, data []byte) (Template, error) {
	if len(data) > MaxTemplateBytes {
		return nil, &TemplateError{Name: name, Msg: fmt.Sprintf("%d bytes, over CloudFormation's %d", len(data), MaxTemplateBytes)}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Template{}, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 0
		fmt.Sscanf(msg, "line %d:", &line)
		return nil, &TemplateError{Name: name, Line: line, Msg: msg}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return Template{}, nil
	}
	c := &converter{name: name}
	v, err := c.value(doc.Content[0], 0)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		top := doc.Content[0]
		return nil, &TemplateError{Name: name, Line: top.Line, Col: top.Column, Msg: "a template is a mapping of sections (Resources, Parameters, ...)"}
	}
	return Template(m), nil
}

type converter struct {
	name  string
	nodes int
}

func (c *converter) errAt(n *yaml.Node, format string, args ...any) error {
	return &TemplateError{Name: c.name, Line: n.Line, Col: n.Column, Msg: fmt.Sprintf(format, args...)}
}

func (c *converter) value(n *yaml.Node, depth int) (any, error) {
	c.nodes++
	if c.nodes > maxNodes {
		return nil, c.errAt(n, "more than %d values (aliases expand to too many)", maxNodes)
	}
	if depth > maxDepth {
		return nil, c.errAt(n, "nested deeper than %d", maxDepth)
	}
	if n.Kind == yaml.AliasNode {
		return c.value(n.Alias, depth+1)
	}
	fn := ""
	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		fn = n.Tag[1:]
	}
	var v any
	switch n.Kind {
	case yaml.ScalarNode:
		if fn != "" || n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
			v = n.Value
			break
		}
		if err := n.Decode(&v); err != nil {
			return nil, c.errAt(n, "%v", err)
		}
		if f, ok := v.(float64); ok && f == float64(int64(f)) && !strings.ContainsAny(n.Value, ".eE") {
			v = int64(f)
		}
		if i, ok := v.(int); ok {
			v = int64(i)
		}
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			x, err := c.value(e, depth+1)
			if err != nil {
				return nil, err
			}
			l = append(l, x)
		}
		v = l
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, c.errAt(k, "a key must be a string")
			}
			if k.Value == "<<" && k.Tag == "!!merge" {
				return nil, c.errAt(k, "merge keys (<<) are not CloudFormation")
			}
			if _, dup := m[k.Value]; dup {
				return nil, c.errAt(k, "key %q given twice", k.Value)
			}
			x, err := c.value(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = x
		}
		v = m
	default:
		return nil, c.errAt(n, "unexpected YAML node")
	}
	if fn == "" {
		return v, nil
	}
	return longForm(fn, v), nil
}

// longForm turns a short-form tag's value into the intrinsic function.
func longForm(fn string, v any) any {
	switch fn {
	case "Ref", "Condition":
		return map[string]any{fn: v}
	case "GetAtt":
		if s, ok := v.(string); ok {
			res, attr, _ := strings.Cut(s, ".")
			return map[string]any{"Fn::GetAtt": []any{res, attr}}
		}
	}
	return map[string]any{"Fn::" + fn: v}
}

// mapOf is v as a map, or nil.
func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
