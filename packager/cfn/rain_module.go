package cfn

import (
	yaml "go.yaml.in/yaml/v3"
)

// rain's module rules, for the Modules entries made from !Rain::Module
// resources (engine.rainEntries), and its Metadata.Rain.IfParam and
// IfNotParam, read in every module.

// rainOverrides refuses, for a !Rain::Module entry, an override of a
// property that has the name of a module parameter: rain refuses it, since
// the parameter is the way to set it.
func (sc *scope) rainOverrides(m *module, ov *yaml.Node, file string) error {
	if !sc.e.rainEntries[m.entry] {
		return nil
	}
	params := mapGet(m.child.t.Root, "Parameters")
	for k, o := range entries(ov) {
		for pk := range entries(mapGet(o, "Properties")) {
			if mapKey(params, pk.Value) != nil {
				return sc.errorf(pk, ErrInvalid, "Overrides of module %s: %s.Properties.%s has the name of a parameter of the module (%s); set %s under the module's Properties instead",
					m.name, k.Value, pk.Value, file, pk.Value)
			}
		}
	}
	return nil
}

// rainMerge merges an override into a resource as rain does: as
// mergeOverride, except that DependsOn adds to the resource's own.
func rainMerge(dst, src *yaml.Node) {
	deps := mapGet(src, "DependsOn")
	if deps == nil {
		mergeOverride(dst, src)
		return
	}
	rest := mapNode()
	for k, v := range entries(src) {
		if k.Value != "DependsOn" {
			rest.Content = append(rest.Content, k, v)
		}
	}
	mergeOverride(dst, rest)
	addDepends(dst, deps)
}

// rainIfParams removes the module's resources that Metadata.Rain.IfParam
// (kept only when the parameter is set) or IfNotParam (kept only when it
// is not) turn off. A parameter counts as set when the module entry's
// Properties give it a value that is not empty.
func (sc *scope) rainIfParams(pairs []*yaml.Node) {
	decl := mapGet(sc.t.Root, "Parameters")
	set := func(name string) bool {
		v := sc.params[name]
		if !sc.given[name] || v == nil {
			return false
		}
		if isScalar(v) {
			return v.Value != "" && v.Tag != tagNull
		}
		return len(v.Content) > 0
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		rm := mapGet(mapGet(pairs[i+1], "Metadata"), "Rain")
		omit := false
		if p := mapGet(rm, "IfParam"); isStr(p) && mapKey(decl, p.Value) != nil && !set(p.Value) {
			omit = true
		}
		if p := mapGet(rm, "IfNotParam"); isStr(p) && mapKey(decl, p.Value) != nil && set(p.Value) {
			omit = true
		}
		if omit {
			delete(sc.res, pairs[i].Value)
			sc.removed[pairs[i].Value] = true
		}
	}
}

// dropIfParams takes IfParam and IfNotParam out of an emitted resource's
// Metadata.Rain, and Rain and Metadata when nothing is left in them.
func dropIfParams(r *yaml.Node) {
	md := mapGet(r, "Metadata")
	rm := mapGet(md, "Rain")
	if rm == nil || rm.Kind != yaml.MappingNode || (mapKey(rm, "IfParam") == nil && mapKey(rm, "IfNotParam") == nil) {
		return
	}
	mapDelete(rm, "IfParam")
	mapDelete(rm, "IfNotParam")
	if len(rm.Content) == 0 {
		mapDelete(md, "Rain")
		if len(md.Content) == 0 {
			mapDelete(r, "Metadata")
		}
	}
}
