package deploy

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// A templateParam is a parameter a stack's template declares.
type templateParam struct {
	def        string // its Default, as CloudFormation reads it
	hasDefault bool
	noEcho     bool
}

// templateInfo is what deploy reads from a signed template: the
// parameters it declares, and its nested stacks' TemplateURLs by logical
// ID (a literal URL, or the string of a Fn::Sub).
type templateInfo struct {
	params map[string]templateParam
	nested map[string]string
}

// parseTemplate reads a CloudFormation template (YAML or JSON).
func parseTemplate(body []byte) (*templateInfo, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("reading the template: %w", err)
	}
	info := &templateInfo{params: map[string]templateParam{}, nested: map[string]string{}}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return info, nil
	}
	root := doc.Content[0]
	if ps := mapGet(root, "Parameters"); ps != nil && ps.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(ps.Content); i += 2 {
			name, p := ps.Content[i].Value, ps.Content[i+1]
			var tp templateParam
			if def := mapGet(p, "Default"); def != nil {
				tp.def, tp.hasDefault = scalarText(def), true
			}
			if ne := mapGet(p, "NoEcho"); ne != nil && strings.EqualFold(ne.Value, "true") {
				tp.noEcho = true
			}
			info.params[name] = tp
		}
	}
	if rs := mapGet(root, "Resources"); rs != nil && rs.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(rs.Content); i += 2 {
			id, r := rs.Content[i].Value, rs.Content[i+1]
			if t := mapGet(r, "Type"); t == nil || t.Value != "AWS::CloudFormation::Stack" {
				continue
			}
			if url := templateURL(mapGet(mapGet(r, "Properties"), "TemplateURL")); url != "" {
				info.nested[id] = url
			}
		}
	}
	return info, nil
}

// mapGet is the value of key in a mapping node (nil when absent).
func mapGet(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// scalarText is a Default as CloudFormation passes it: a scalar's text,
// a list's items joined by commas.
func scalarText(n *yaml.Node) string {
	if n.Kind == yaml.SequenceNode {
		var items []string
		for _, c := range n.Content {
			items = append(items, c.Value)
		}
		return strings.Join(items, ",")
	}
	return n.Value
}

// templateURL is a TemplateURL's text: a literal, !Sub "..." or
// {"Fn::Sub": "..."} (or its list form's string).
func templateURL(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value
	case yaml.SequenceNode:
		if n.Tag == "!Sub" && len(n.Content) > 0 {
			return n.Content[0].Value
		}
	case yaml.MappingNode:
		if s := mapGet(n, "Fn::Sub"); s != nil {
			if s.Kind == yaml.SequenceNode && len(s.Content) > 0 {
				return s.Content[0].Value
			}
			return s.Value
		}
	}
	return ""
}

// effectiveParams is every parameter the stack runs with, as the droplet
// signs it: its own, then each parameter the template declares with a
// Default left at that Default.
func effectiveParams(set map[string]string, info *templateInfo) map[string]string {
	out := make(map[string]string, len(set))
	for k, v := range set {
		out[k] = v
	}
	if info == nil {
		return out
	}
	for name, p := range info.params {
		if _, ok := out[name]; !ok && p.hasDefault {
			out[name] = p.def
		}
	}
	return out
}
