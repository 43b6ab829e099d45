package cfn

import (
	yaml "go.yaml.in/yaml/v3"
)

// top expands the top template and assembles the packaged template in the
// source's section order.
func (e *engine) top(t *Template) (*Template, error) {
	sc := e.newScope(t, "", true, nil)
	e.topRoot = t.Root
	if c := mapGet(t.Root, "Conditions"); c != nil && c.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(c.Content); i += 2 {
			e.condSet[c.Content[i].Value] = true
		}
	}
	if m := mapGet(t.Root, "Mappings"); m != nil && m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			e.mapSet[m.Content[i].Value] = true
		}
	}
	e.stack = []string{t.Name}
	if err := sc.run(); err != nil {
		return nil, err
	}
	hasModules := mapGet(t.Root, "Modules") != nil
	resources := mapNode()
	seen := map[string]*emitted{}
	for _, r := range sc.emitted {
		if prev := seen[r.name]; prev != nil {
			return nil, sc.errorf(r.node, ErrNameClash, "two resources are named %s (one comes from a module); rename one of them", r.name)
		}
		seen[r.name] = r
		resources.Content = append(resources.Content, strNode(r.name), r.node)
	}
	outputs, err := sc.topOutputs()
	if err != nil {
		return nil, err
	}
	out := mapNode()
	out.Line, out.Column = t.Root.Line, t.Root.Column
	put := func(k string, v *yaml.Node) { out.Content = append(out.Content, strNode(k), v) }
	done := map[string]bool{}
	putExtra := func() { // emitted sections that the source lacks, before Resources
		if len(e.conds) > 0 && !done["Conditions"] && mapGet(t.Root, "Conditions") == nil {
			put("Conditions", mapNode(e.conds...))
			done["Conditions"] = true
		}
		if len(e.maps) > 0 && !done["Mappings"] && mapGet(t.Root, "Mappings") == nil {
			put("Mappings", mapNode(e.maps...))
			done["Mappings"] = true
		}
	}
	needTransform := len(e.transforms) > 0 && mapGet(t.Root, "Transform") == nil
	for i := 0; i+1 < len(t.Root.Content); i += 2 {
		k, v := t.Root.Content[i], t.Root.Content[i+1]
		if needTransform && k.Value != "AWSTemplateFormatVersion" && k.Value != "Description" {
			put("Transform", transformNode(nil, e.transforms))
			needTransform = false
		}
		switch k.Value {
		case "Modules":
			if mapGet(t.Root, "Resources") == nil {
				putExtra()
				put("Resources", resources)
			}
		case "Constants", "Packages":
		case "Resources":
			putExtra()
			put("Resources", resources)
		case "Outputs":
			if outputs != nil {
				put("Outputs", outputs)
			}
		case "Transform":
			put("Transform", transformNode(v, e.transforms))
		case "Parameters", "Rules":
			// Written as they are, but for !Rain::Constant, which rain
			// resolves wherever it is written.
			c, err := sc.rainConstants(clone(v), 0)
			if err != nil {
				return nil, err
			}
			put(k.Value, c)
		case "Conditions":
			c, err := sc.resolve(v)
			if err != nil {
				return nil, err
			}
			if c == nil || c.Kind != yaml.MappingNode {
				if len(e.conds) == 0 {
					put(k.Value, clone(v))
					continue
				}
				c = mapNode()
			}
			c.Content = append(c.Content, e.conds...)
			put(k.Value, c)
		case "Mappings":
			c := clone(v)
			if c.Kind != yaml.MappingNode {
				if len(e.maps) == 0 {
					put(k.Value, c)
					continue
				}
				c = mapNode()
			}
			c.Content = append(c.Content, e.maps...)
			put(k.Value, c)
		default:
			r, err := sc.resolve(v)
			if err != nil {
				return nil, err
			}
			if r != nil {
				put(k.Value, r)
			}
		}
	}
	if needTransform {
		put("Transform", transformNode(nil, e.transforms))
	}
	if mapGet(out, "Resources") == nil && (hasModules || len(resources.Content) > 0) {
		putExtra()
		put("Resources", resources)
	}
	if err := checkDirectives(t.Name, out, 0); err != nil {
		return nil, err
	}
	if e.opts.noRefCheck {
		return &Template{Name: t.Name, Root: out, JSON: t.JSON}, nil
	}
	if err := e.checkRefs(sc, out); err != nil {
		return nil, err
	}
	return &Template{Name: t.Name, Root: out, JSON: t.JSON}, nil
}

func (sc *scope) topOutputs() (*yaml.Node, error) {
	outs := mapGet(sc.t.Root, "Outputs")
	if outs == nil {
		return nil, nil
	}
	return sc.resolve(outs)
}

// transformNode merges the parent's Transform (first) with the modules'.
func transformNode(parent *yaml.Node, mods []*yaml.Node) *yaml.Node {
	var items []*yaml.Node
	if parent != nil && parent.Kind == yaml.ScalarNode && parent.Tag == tagNull {
		parent = nil
	}
	if parent != nil {
		if parent.Kind == yaml.SequenceNode {
			items = append(items, parent.Content...)
		} else {
			items = append(items, parent)
		}
	}
	for _, m := range mods {
		dup := false
		for _, x := range items {
			if equal(x, m) {
				dup = true
				break
			}
		}
		if !dup {
			items = append(items, m)
		}
	}
	if (parent == nil || parent.Kind != yaml.SequenceNode) && len(items) == 1 {
		return clone(items[0])
	}
	s := seqNode()
	for _, x := range items {
		s.Content = append(s.Content, clone(x))
	}
	return s
}
