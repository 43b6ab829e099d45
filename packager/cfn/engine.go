package cfn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/internal/suggest"
	"github.com/cloud-assembly/assemble/packager/cfn/paramschema"
	"github.com/cloud-assembly/assemble/packager/cfn/source"
)

// Bounds on what one template may expand to.
const (
	maxInstances = 200_000 // module instances, Fn::Invoke evaluations included
	maxDepth     = 100     // levels of module nesting
)

// maxExpansionBytes bounds the memory one expansion may take, and so the
// packaged output, counted in node bytes (as Parse measures a file): the
// template and every module file parsed, plus, for each module instance,
// its module's size again (an instance copies its module), plus every node
// and byte a function call or a ForEach produces (Fn::InsertFile's file,
// Fn::Flatten's and Fn::Merge's results, the strings Fn::Join and Fn::Sub
// build, parameter and constant values copied by Ref, ForEach copies). A
// fan-out of small modules, or aliases of one Fn::InsertFile, thus stop at a
// memory bound, not only at a count. A var so that tests can lower it.
var maxExpansionBytes int64 = 48 << 20

// Options configures Package.
type Options struct {
	// Root is the project folder; no local file outside it is read. Empty
	// means the template's own folder. Ignored when Sources is set.
	Root string
	// Sources resolves module sources; nil means NewSources(Root).
	Sources Sources
	// NoSourceMap turns off the Metadata.SourceMap of emitted resources.
	NoSourceMap bool
	// Read, if set, is told the path of every local file read (the
	// template, modules, inserted files, package zips). Ignored when
	// Sources is set.
	Read func(path string)
	// Artifacts ships the local files and folders that !Rain::S3 and
	// !Rain::S3Http name; nil refuses them (ErrNoArtifacts).
	Artifacts Artifacts
	// Parameters names parameters the caller adds to the packaged template
	// afterwards (the asset bucket that Artifacts' values may Ref): a Ref
	// or Sub variable naming one is not dangling.
	Parameters []string

	noRefCheck bool // tests of rain's suite, whose templates name what they do not define
}

// Package reads the template at path and expands its modules, constants and
// packaging-time intrinsics. The result is in long form; write it with
// EncodeYAML or EncodeJSON.
func Package(path string, opts Options) (*Template, error) {
	srcs := opts.Sources
	if srcs == nil {
		root := opts.Root
		if root == "" {
			root = filepath.Dir(path)
		}
		var err error
		if srcs, err = NewSources(context.Background(), root, &source.Options{Read: opts.Read}); err != nil {
			return nil, wrapLoad(path, 0, 0, nil, err)
		}
		if c, ok := srcs.(io.Closer); ok {
			defer c.Close()
		}
	}
	e := &engine{
		opts:      opts,
		srcs:      srcs,
		cache:     map[string]*Template{},
		loaded:    map[loadKey]loaded{},
		condExprs: map[string]*yaml.Node{},
		mapNodes:  map[string]*yaml.Node{},
		schemas:   map[*Template]*paramschema.Section{},
		topDir:    filepath.Dir(path),
		condSet:   map[string]bool{},
		mapSet:    map[string]bool{},

		rainEntries: map[*yaml.Node]bool{},
	}
	file, data, err := srcs.Load("", path, "")
	if err != nil {
		return nil, wrapLoad(path, 0, 0, nil, err)
	}
	t, err := Parse(file, data)
	if err != nil {
		return nil, err
	}
	e.expansion = t.size
	if err := e.rainFile(t); err != nil {
		return nil, err
	}
	return e.top(t)
}

// load reads a source named in the file from, once per folder and source.
func (e *engine) load(from, src, hash string) (string, []byte, error) {
	lk := loadKey{filepath.Dir(from), src, hash}
	ld, ok := e.loaded[lk]
	if !ok {
		ld.file, ld.data, ld.err = e.srcs.Load(from, src, hash)
		e.loaded[lk] = ld
	}
	return ld.file, ld.data, ld.err
}

// loadKey identifies a Source as written in a folder; each is loaded once.
type loadKey struct{ dir, source, hash string }

type loaded struct {
	file string
	data []byte
	err  error
}

type engine struct {
	condExprs map[string]*yaml.Node // emitted by modules
	mapNodes  map[string]*yaml.Node // emitted by modules
	schemas   map[*Template]*paramschema.Section
	topRoot   *yaml.Node
	loaded    map[loadKey]loaded
	opts      Options
	srcs      Sources
	cache     map[string]*Template
	topDir    string
	stack     []string // files being expanded, outermost first

	conds      []*yaml.Node // emitted conditions, pairs
	condSet    map[string]bool
	maps       []*yaml.Node // emitted mappings, pairs
	mapSet     map[string]bool
	transforms []*yaml.Node
	instances  int
	places     map[placeKey][]place // references left as written, by name
	combined   map[string]bool      // conditions addCondition made
	expansion  int64                // node bytes parsed, copied and produced so far (maxExpansionBytes)
	// counted holds the results of function calls already counted in
	// expansion and not yet part of a larger result (see produced).
	counted map[*yaml.Node]struct{}

	rainEntries   map[*yaml.Node]bool // Modules entries made from !Rain::Module resources
	rainArtifacts map[rainArtifactKey]rainArtifact
}

// emitted is a resource in its final form.
type emitted struct {
	local string // name in the scope that holds it (module name prefixes added per level)
	name  string // final logical ID
	node  *yaml.Node
}

type module struct {
	name  string
	key   *yaml.Node
	entry *yaml.Node
	state int // 0 pending, 1 expanding, 2 done, 3 removed by a condition
	child *scope
	cond  string // the module's own condition when it cannot be resolved
}

// scope is one file being expanded: the top template or a module instance.
type scope struct {
	e       *engine
	t       *Template
	file    string
	prefix  string
	top     bool
	invoked bool // an Fn::Invoke evaluation: its resources are not emitted
	chain   []Frame

	params    map[string]*yaml.Node // values in the top template's terms
	consts    map[string]*yaml.Node
	conds     map[string]*yaml.Node
	condMemo  map[string]*condResult
	mappings  map[string]*yaml.Node
	mapEmit   map[string]string
	res       map[string]string // local logical ID -> final
	removed   map[string]bool
	mods      map[string]*module
	missing   map[string]*yaml.Node // declared parameters with no value
	groups    map[string]*group
	modOrder  []*module
	outMemo   map[string]*yaml.Node
	emitted   []*emitted
	byLocal   map[string]*emitted
	defaulted map[string]bool
	given     map[string]bool // parameters set by the module entry's Properties
	constBusy map[string]bool // constants being resolved (cycles)
}

func (e *engine) newScope(t *Template, prefix string, top bool, chain []Frame) *scope {
	return &scope{
		e: e, t: t, file: t.Name, prefix: prefix, top: top, chain: chain,
		params: map[string]*yaml.Node{}, consts: map[string]*yaml.Node{},
		conds: map[string]*yaml.Node{}, condMemo: map[string]*condResult{},
		mappings: map[string]*yaml.Node{}, mapEmit: map[string]string{},
		res: map[string]string{}, groups: map[string]*group{}, missing: map[string]*yaml.Node{}, removed: map[string]bool{}, mods: map[string]*module{},
		outMemo: map[string]*yaml.Node{}, byLocal: map[string]*emitted{},
	}
}

func (sc *scope) errorf(at *yaml.Node, sentinel error, format string, args ...any) error {
	e := &Error{File: sc.file, Msg: fmt.Sprintf(format, args...), Chain: sc.chain, Err: sentinel}
	if at != nil {
		e.Line, e.Col = at.Line, at.Column
	}
	return e
}

// section returns a top-level section of the scope's file, which must be a
// mapping when present.
func (sc *scope) section(name string) (*yaml.Node, error) {
	v := mapGet(sc.t.Root, name)
	if v == nil || (v.Kind == yaml.ScalarNode && v.Tag == tagNull) {
		return nil, nil
	}
	if v.Kind != yaml.MappingNode {
		return nil, sc.errorf(v, ErrInvalid, "%s must be a mapping", name)
	}
	return v, nil
}

// run expands the scope: constants, conditions, mappings, modules, then its
// own resources. Outputs are resolved when something asks for them.
func (sc *scope) run() error {
	if pk, err := sc.section("Packages"); err != nil {
		return err
	} else if pk != nil {
		for i := 0; i+1 < len(pk.Content); i += 2 {
			k, v := pk.Content[i], pk.Content[i+1]
			src, hash := mapGet(v, "Source"), mapGet(v, "Hash")
			if src == nil || !isStr(src) {
				return sc.errorf(v, ErrInvalid, "package %s needs a Source (a zip file or an https:// URL)", k.Value)
			}
			h := ""
			if hash != nil {
				h = hash.Value
			}
			if err := sc.e.srcs.AddPackage(sc.file, k.Value, src.Value, h); err != nil {
				return wrapLoad(sc.file, k.Line, k.Column, sc.chain, err)
			}
		}
	}
	consts, err := sc.section("Constants")
	if err != nil {
		return err
	}
	if consts != nil {
		for i := 0; i+1 < len(consts.Content); i += 2 {
			k, v := consts.Content[i], consts.Content[i+1]
			if isStr(v) {
				s, err := sc.replaceConsts(v.Value, v)
				if err != nil {
					return err
				}
				c := *v
				c.Value = s
				v = &c
			}
			sc.consts[k.Value] = v
		}
	}
	if conds, err := sc.section("Conditions"); err != nil {
		return err
	} else if conds != nil {
		for i := 0; i+1 < len(conds.Content); i += 2 {
			sc.conds[conds.Content[i].Value] = conds.Content[i+1]
		}
	}
	if maps, err := sc.section("Mappings"); err != nil {
		return err
	} else if maps != nil {
		for i := 0; i+1 < len(maps.Content); i += 2 {
			sc.mappings[maps.Content[i].Value] = maps.Content[i+1]
		}
	}
	if conds, _ := sc.section("Conditions"); conds != nil && !sc.top && !sc.invoked {
		// Every condition that depends on deploy-time values is emitted
		// into the parent, prefixed, whether or not anything uses it.
		for i := 0; i+1 < len(conds.Content); i += 2 {
			if _, _, err := sc.condName(conds.Content[i].Value, conds.Content[i]); err != nil {
				return err
			}
		}
	}
	resources, err := sc.section("Resources")
	if err != nil {
		return err
	}
	var pairs []*yaml.Node
	if resources != nil {
		if pairs, err = sc.expandForEach(resources.Content, "Resources"); err != nil {
			return err
		}
		for i := 0; i+1 < len(pairs); i += 2 {
			name, def := pairs[i].Value, pairs[i+1]
			if strings.HasPrefix(name, "Fn::ForEach::") {
				continue
			}
			if def.Kind != yaml.MappingNode {
				return sc.errorf(def, ErrInvalid, "resource %s must be a mapping with a Type", name)
			}
			if _, dup := sc.res[name]; dup {
				return sc.errorf(pairs[i], ErrNameClash, "two resources are named %s (one made by ForEach); rename one of them", name)
			}
			if err := sc.checkLogicalID("resource", pairs[i]); err != nil {
				return err
			}
			sc.res[name] = sc.prefix + name
		}
		if !sc.top && !sc.invoked { // an Fn::Invoke evaluation resolves no resource
			for i := 0; i+1 < len(pairs); i += 2 {
				if c := mapGet(pairs[i+1], "Condition"); c != nil && pairs[i+1].Kind == yaml.MappingNode {
					st, _, err := sc.condRef(c)
					if err != nil {
						return err
					}
					if st == condFalse {
						delete(sc.res, pairs[i].Value)
						sc.removed[pairs[i].Value] = true
					}
				}
			}
			sc.rainIfParams(pairs)
		}
	}
	mods, err := sc.section("Modules")
	if err != nil {
		return err
	}
	if mods != nil {
		mpairs, err := sc.expandForEach(mods.Content, "Modules")
		if err != nil {
			return err
		}
		for i := 0; i+1 < len(mpairs); i += 2 {
			k, v := mpairs[i], mpairs[i+1]
			if _, dup := sc.mods[k.Value]; dup {
				return sc.errorf(k, ErrNameClash, "two modules are named %s (one made by ForEach); rename one of them", k.Value)
			}
			if v.Kind != yaml.MappingNode {
				return sc.errorf(v, ErrInvalid, "module %s must be a mapping with a Source", k.Value)
			}
			if _, dup := sc.res[k.Value]; dup {
				return sc.errorf(k, ErrNameClash, "%s is both a resource and a module; rename one", k.Value)
			}
			if err := sc.checkEntry(k.Value, v); err != nil {
				return err
			}
			if err := sc.checkLogicalID("module", k); err != nil {
				return err
			}
			m := &module{name: k.Value, key: k, entry: v}
			sc.mods[k.Value] = m
			sc.modOrder = append(sc.modOrder, m)
		}
		for _, m := range sc.modOrder {
			if err := sc.expand(m); err != nil {
				return err
			}
		}
	}
	// Own resources first, then each module's, in declaration order.
	for i := 0; i+1 < len(pairs); i += 2 {
		name := pairs[i].Value
		if sc.removed[name] {
			continue
		}
		if strings.HasPrefix(name, "Fn::ForEach::") {
			v, err := sc.resolve(pairs[i+1])
			if err != nil {
				return err
			}
			if v != nil {
				sc.add(&emitted{local: name, name: name, node: v})
			}
			continue
		}
		if sc.invoked {
			// Fn::Invoke returns outputs only: the resources are named, for
			// the outputs' references, but not resolved.
			sc.add(&emitted{local: name, name: sc.prefix + name, node: mapNode()})
			continue
		}
		r, err := sc.resource(pairs[i], pairs[i+1])
		if err != nil {
			return err
		}
		if !sc.top {
			dropIfParams(r.node)
		}
		sc.add(r)
	}
	for _, m := range sc.modOrder {
		if m.state != 2 {
			continue
		}
		for _, c := range m.child.emitted {
			sc.add(&emitted{local: m.name + c.local, name: c.name, node: c.node})
		}
	}
	return nil
}

// checkLogicalID checks that the name written at k, with the scope's
// prefix, is a valid logical ID.
func (sc *scope) checkLogicalID(what string, k *yaml.Node) error {
	final := sc.prefix + k.Value
	if validLogicalID(final) || sc.top && k.Value == "Fn::Transform" { // AWS::Include of resources
		return nil
	}
	if len(final) > maxLogicalID {
		return sc.errorf(k, ErrInvalid, "%s %s makes the logical ID %s, longer than %d characters; shorten the module or resource names", what, k.Value, final, maxLogicalID)
	}
	return sc.errorf(k, ErrInvalid, "%s name %q makes the logical ID %q; logical IDs hold only letters and digits (A-Z, a-z, 0-9)", what, k.Value, final)
}

// entryKeys are the keys a Modules entry may hold (ForEach is taken off
// before the entry is checked).
var entryKeys = []string{"Source", "Properties", "Overrides", "ForEach", "Condition", "DependsOn", "Hash"}

// entryRenames says what to write instead of keys people carry over from
// elsewhere.
var entryRenames = map[string]string{
	"Map":        "ForEach (Map is the design's earlier name for it)",
	"Parameters": "Properties (a module's Parameters are set by the entry's Properties)",
	"Override":   "Overrides",
	"Path":       "Source",
	"Template":   "Source",
	"Type":       "Source to name the module file (Type is allowed only as LocalModule)",
}

// checkEntry refuses a module entry key the design does not define, saying
// what to use instead. Type: LocalModule, left over from the design's
// earlier form, is ignored.
func (sc *scope) checkEntry(name string, v *yaml.Node) error {
	for i := 0; i+1 < len(v.Content); i += 2 {
		k := v.Content[i]
		if slices.Contains(entryKeys, k.Value) {
			continue
		}
		if k.Value == "Type" && isStr(v.Content[i+1]) && v.Content[i+1].Value == "LocalModule" {
			continue
		}
		fix := entryRenames[k.Value]
		if fix == "" {
			fix = suggest.Closest(k.Value, entryKeys)
		}
		if fix != "" {
			fix = ": use " + fix
		}
		return sc.errorf(k, ErrInvalid, "module %s: unknown key %s%s; a module entry takes %s", name, k.Value, fix, strings.Join(entryKeys, ", "))
	}
	return nil
}

func (sc *scope) add(r *emitted) {
	sc.emitted = append(sc.emitted, r)
	sc.byLocal[r.local] = r
}

// resource resolves one resource of the scope.
func (sc *scope) resource(key, def *yaml.Node) (*emitted, error) {
	name := key.Value
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: tagMap, Line: def.Line, Column: def.Column}
	for i := 0; i+1 < len(def.Content); i += 2 {
		k, v := def.Content[i], def.Content[i+1]
		if k.Value == "Type" {
			out.Content = append(out.Content, k, clone(v))
			continue
		}
		r, _, err := sc.attr(k, v)
		if err != nil {
			return nil, err
		}
		if r != nil {
			out.Content = append(out.Content, k, r)
		}
	}
	if !sc.top && !sc.e.opts.NoSourceMap {
		rel := sc.file // a package entry ($alias/path) or a URL as it is
		if !strings.HasPrefix(rel, "$") && !strings.Contains(rel, "://") {
			r, err := filepath.Rel(sc.e.topDir, sc.file)
			if err != nil || filepath.IsAbs(sc.file) && strings.HasPrefix(r, "..") {
				r = sc.file
			}
			rel = filepath.ToSlash(r)
			if !strings.HasPrefix(rel, ".") && !strings.HasPrefix(rel, "/") {
				rel = "./" + rel
			}
		}
		sm := strNode(fmt.Sprintf("%s:%s:%d", rel, name, key.Line))
		md := mapGet(out, "Metadata")
		if md == nil || md.Kind != yaml.MappingNode {
			md = mapNode()
			insertAfter(out, "Type", "Metadata", md)
		}
		mapSet(md, "SourceMap", sm)
	}
	return &emitted{local: name, name: sc.prefix + name, node: out}, nil
}

// attr resolves one attribute of a resource written in this scope, its
// own or an Override's: Condition names a condition of the scope (its
// value at packaging time is returned; a nil node then drops the
// attribute), DependsOn names its resources and modules, anything else is
// resolved. At the top level Condition stays as written.
func (sc *scope) attr(k, v *yaml.Node) (*yaml.Node, tri, error) {
	switch k.Value {
	case "Condition":
		if sc.top {
			return clone(v), condUnknown, nil
		}
		st, final, err := sc.condRef(v)
		if err != nil || st != condUnknown {
			return nil, st, err
		}
		c := strNode(final)
		c.Line, c.Column = v.Line, v.Column
		return c, st, nil
	case "DependsOn":
		d, err := sc.dependsOn(v)
		return d, condUnknown, err
	}
	r, err := sc.resolve(v)
	return r, condUnknown, err
}

// override resolves the Override ov of resource name of module m in this
// scope, the scope that writes it: its references name this scope's
// resources, modules, parameters and conditions. A Condition that is
// false at packaging time removes the resource; one that is true makes it
// unconditional.
func (sc *scope) override(m *module, k, ov *yaml.Node, file string) error {
	child := m.child
	target := child.byLocal[k.Value]
	if target == nil {
		if child.removed[k.Value] {
			return nil
		}
		if g := child.groups[k.Value]; g != nil && len(g.names) > 0 {
			return sc.errorf(k, ErrInvalid, "Overrides of module %s names %s, which ForEach repeats in the module (%s) as %s: override each instance by its name",
				m.name, k.Value, file, strings.Join(g.names, ", "))
		}
		return sc.errorf(k, ErrInvalid, "Overrides of module %s names %s, which the module (%s) does not define%s", m.name, k.Value, file,
			suggest.Hint(k.Value, slices.Sorted(maps.Keys(child.byLocal))))
	}
	if ov.Kind != yaml.MappingNode {
		return sc.errorf(ov, ErrInvalid, "override of %s must be a mapping", k.Value)
	}
	// A resource or parameter of the module that this scope has no name
	// for may be named as the module writes it (Ref Q for the module's
	// resource Q, ${Name} for its parameter Name), as in the aws-cli; on a
	// clash this scope's name wins.
	resAliases := map[string]string{} // the module's local name: its emitted name
	for _, c := range child.emitted {
		if !sc.defines(c.local) {
			resAliases[c.local] = c.name
		}
	}
	var paramAliases []string
	for p := range child.params {
		if _, isRes := resAliases[p]; !isRes && !sc.defines(p) {
			paramAliases = append(paramAliases, p)
		}
	}
	maps.Copy(sc.res, resAliases)
	for _, p := range paramAliases {
		sc.params[p] = child.params[p]
	}
	defer func() {
		for a := range resAliases {
			delete(sc.res, a)
		}
		for _, p := range paramAliases {
			delete(sc.params, p)
		}
	}()
	r := &yaml.Node{Kind: yaml.MappingNode, Tag: tagMap, Line: ov.Line, Column: ov.Column}
	for i := 0; i+1 < len(ov.Content); i += 2 {
		a, v := ov.Content[i], ov.Content[i+1]
		x, st, err := sc.attr(a, v)
		if err != nil {
			return err
		}
		switch {
		case a.Value == "Condition" && st == condFalse:
			child.drop(target)
			delete(sc.res, m.name+k.Value)
			sc.removed[m.name+k.Value] = true
			return nil
		case a.Value == "Condition" && st == condTrue:
			mapDelete(target.node, "Condition")
		case x != nil:
			r.Content = append(r.Content, a, x)
		}
	}
	if sc.e.rainEntries[m.entry] {
		rainMerge(target.node, r)
	} else {
		mergeOverride(target.node, r)
	}
	return nil
}

// defines reports whether name is a resource, module, ForEach group or
// parameter of this scope (or a pseudo parameter).
func (sc *scope) defines(name string) bool {
	if _, ok := sc.res[name]; ok || sc.mods[name] != nil || sc.groups[name] != nil || sc.removed[name] {
		return true
	}
	if _, ok := sc.params[name]; ok {
		return true
	}
	if _, ok := sc.missing[name]; ok {
		return true
	}
	return strings.HasPrefix(name, "AWS::") || mapGet(mapGet(sc.t.Root, "Parameters"), name) != nil
}

// drop removes an emitted resource from the scope.
func (sc *scope) drop(r *emitted) {
	sc.emitted = slices.DeleteFunc(sc.emitted, func(x *emitted) bool { return x == r })
	delete(sc.byLocal, r.local)
	sc.removed[r.local] = true
}

// insertAfter inserts key: v after the pair named after (or first).
func insertAfter(m *yaml.Node, after, key string, v *yaml.Node) {
	pos := 0
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == after {
			pos = i + 2
		}
	}
	kv := []*yaml.Node{strNode(key), v}
	m.Content = append(m.Content[:pos:pos], append(kv, m.Content[pos:]...)...)
}

// dependsOn renames a DependsOn value; a module name stands for all of its
// resources. It returns nil when nothing is left.
func (sc *scope) dependsOn(v *yaml.Node) (*yaml.Node, error) {
	var names []*yaml.Node
	switch v.Kind {
	case yaml.ScalarNode:
		names = []*yaml.Node{v}
	case yaml.SequenceNode:
		names = v.Content
	default:
		return nil, sc.errorf(v, ErrInvalid, "DependsOn must be a name or a list of names")
	}
	var out []*yaml.Node
	seen := map[string]bool{}
	addName := func(s string, at *yaml.Node) {
		if !seen[s] {
			seen[s] = true
			n := strNode(s)
			n.Line, n.Column = at.Line, at.Column
			out = append(out, n)
		}
	}
	for _, n := range names {
		if !isScalar(n) {
			return nil, sc.errorf(n, ErrInvalid, "DependsOn must be a name or a list of names")
		}
		if g := sc.groups[n.Value]; g != nil && sc.mods[n.Value] == nil && sc.res[n.Value] == "" {
			for _, inst := range g.names {
				if m := sc.mods[inst]; m != nil {
					if err := sc.expand(m); err != nil {
						return nil, err
					}
					if m.state == 2 {
						for _, r := range m.child.emitted {
							addName(r.name, n)
						}
					}
				} else if f, ok := sc.res[inst]; ok {
					addName(f, n)
				}
			}
			continue
		}
		if m := sc.mods[n.Value]; m != nil {
			if err := sc.expand(m); err != nil {
				return nil, err
			}
			if m.state == 2 {
				for _, r := range m.child.emitted {
					addName(r.name, n)
				}
			}
			continue
		}
		if f, ok := sc.res[n.Value]; ok {
			addName(f, n)
			continue
		}
		if sc.removed[n.Value] {
			continue
		}
		sc.e.note(depKind, n.Value, sc, n)
		addName(n.Value, n)
	}
	if len(out) == 0 {
		return nil, nil
	}
	if v.Kind == yaml.ScalarNode && len(out) == 1 {
		return out[0], nil
	}
	s := seqNode(out...)
	s.Line, s.Column = v.Line, v.Column
	return s, nil
}

// expand expands module m of the scope, once.
func (sc *scope) expand(m *module) error {
	switch m.state {
	case 1:
		return sc.errorf(m.key, ErrCycle, "module %s refers to its own outputs through its Properties or Overrides", m.name)
	case 2, 3:
		return nil
	}
	m.state = 1
	entry := m.entry
	if c := mapGet(entry, "Condition"); c != nil {
		st, final, err := sc.condRef(c)
		if err != nil {
			return err
		}
		switch st {
		case condFalse:
			m.state = 3
			return nil
		case condUnknown:
			m.cond = final
		}
	}
	child, _, file, err := sc.instantiate(m, nil, false)
	if err != nil {
		return err
	}
	m.child = child
	m.state = 2
	for _, c := range child.emitted {
		sc.res[m.name+c.local] = c.name
	}
	if sc.invoked {
		return nil // resources of an Fn::Invoke evaluation are not emitted
	}
	if ov := mapGet(entry, "Overrides"); ov != nil && !(isScalar(ov) && ov.Tag == tagNull) {
		if ov.Kind != yaml.MappingNode {
			return sc.errorf(ov, ErrInvalid, "Overrides of module %s must be a mapping of resource names", m.name)
		}
		if err := sc.rainOverrides(m, ov, file); err != nil {
			return err
		}
		for i := 0; i+1 < len(ov.Content); i += 2 {
			if err := sc.override(m, ov.Content[i], ov.Content[i+1], file); err != nil {
				return err
			}
		}
	}
	if d := mapGet(entry, "DependsOn"); d != nil {
		deps, err := sc.dependsOn(d)
		if err != nil {
			return err
		}
		if deps != nil {
			for _, r := range child.emitted {
				addDepends(r.node, deps)
			}
		}
	}
	if m.cond != "" {
		for _, r := range child.emitted {
			if err := sc.addCondition(r, m.cond, m.key); err != nil {
				return err
			}
		}
	}
	return nil
}

// instantiate loads module m and expands one instance of it, with extra
// properties (already resolved) replacing those of the entry. An invoked
// instance (Fn::Invoke) emits only what its outputs use.
func (sc *scope) instantiate(m *module, extra *yaml.Node, invoked bool) (*scope, *Template, string, error) {
	entry := m.entry
	src := mapGet(entry, "Source")
	if src == nil || !isStr(src) || src.Value == "" {
		at := m.key
		if src != nil {
			at = src
		}
		return nil, nil, "", sc.errorf(at, ErrInvalid, "module %s needs a Source: the path of its module file", m.name)
	}
	e := sc.e
	e.instances++
	if e.instances > maxInstances {
		return nil, nil, "", sc.errorf(m.key, ErrTooLarge, "more than %d module instances", maxInstances)
	}
	hash := ""
	if h := mapGet(entry, "Hash"); h != nil && isStr(h) {
		hash = h.Value
	}
	file, data, err := e.load(sc.file, src.Value, hash)
	if err != nil {
		return nil, nil, "", wrapLoad(sc.file, src.Line, src.Column, sc.chain, err)
	}
	if len(e.stack) > maxDepth {
		return nil, nil, "", sc.errorf(src, ErrTooLarge, "modules nested deeper than %d levels", maxDepth)
	}
	for i, f := range e.stack {
		if f == file {
			loop := append(append([]string{}, e.stack[i:]...), file)
			return nil, nil, "", sc.errorf(src, ErrCycle, "module %s includes itself: %s", m.name, strings.Join(loop, " -> "))
		}
	}
	chain := append([]Frame{{Module: m.name, Source: src.Value, File: sc.file, Line: m.key.Line}}, sc.chain...)
	t := e.cache[file]
	if t == nil {
		if t, err = Parse(file, data); err == nil {
			if err = e.rainFile(t); err == nil {
				err = checkOutputs(t)
			}
		}
		if err != nil {
			var pe *Error
			if errors.As(err, &pe) && pe.Chain == nil {
				pe.Chain = chain
			}
			return nil, nil, "", err
		}
		e.cache[file] = t
		e.expansion += t.size
	}
	if e.expansion += t.size; e.expansion > maxExpansionBytes {
		return nil, nil, "", sc.errorf(m.key, ErrTooLarge, "the template and its module instances would take more than %d MiB (%d instances so far); use fewer or smaller modules", maxExpansionBytes>>20, e.instances)
	}
	child := e.newScope(t, sc.prefix+m.name, false, chain)
	child.invoked = invoked || sc.invoked

	// Properties are written in this scope's terms: resolve them here.
	var props *yaml.Node
	if p := mapGet(entry, "Properties"); p != nil && !(isScalar(p) && p.Tag == tagNull) {
		if p.Kind != yaml.MappingNode {
			return nil, nil, "", sc.errorf(p, ErrInvalid, "Properties of module %s must be a mapping", m.name)
		}
		if props, err = sc.resolve(p); err != nil {
			return nil, nil, "", err
		}
	}
	if extra != nil {
		if props == nil {
			props = mapNode()
		}
		for i := 0; i+1 < len(extra.Content); i += 2 {
			if mapKey(props, extra.Content[i].Value) != nil {
				mapSet(props, extra.Content[i].Value, extra.Content[i+1])
			} else { // keep the key where it is written, for messages
				props.Content = append(props.Content, extra.Content[i], extra.Content[i+1])
			}
		}
	}
	if err := child.setParams(props, sc, m); err != nil {
		return nil, nil, "", err
	}
	if tr := mapGet(t.Root, "Transform"); tr != nil {
		e.addTransforms(tr) // before the module's own modules: parents first
	}
	e.stack = append(e.stack, file)
	err = child.run()
	e.stack = e.stack[:len(e.stack)-1]
	if err != nil {
		return nil, nil, "", err
	}
	return child, t, file, nil
}

// setParams fills the module's parameters from the resolved Properties and
// the Defaults.
func (child *scope) setParams(props *yaml.Node, parent *scope, m *module) error {
	decl := mapGet(child.t.Root, "Parameters")
	if decl != nil && decl.Kind != yaml.MappingNode && !(isScalar(decl) && decl.Tag == tagNull) {
		return child.errorf(decl, ErrInvalid, "Parameters must be a mapping")
	}
	schema, err := child.e.paramSchema(child)
	if err != nil {
		return err
	}
	if err := child.checkProperties(props, decl, schema, parent, m); err != nil {
		return err
	}
	var defaults []int
	for i := 0; decl != nil && i+1 < len(decl.Content); i += 2 {
		name := decl.Content[i].Value
		if v := mapGet(props, name); v != nil {
			child.params[name] = v
			continue
		}
		if d := mapGet(decl.Content[i+1], "Default"); d != nil {
			defaults = append(defaults, i)
			continue
		}
		if schema != nil && schema.Schema(name) != nil && schema.Schema(name).Default() != nil {
			continue // the ParameterSchema supplies it
		}
		// Only an error when something uses it (as the aws-cli does).
		child.missing[name] = decl.Content[i]
	}
	given := map[string]bool{}
	for name := range child.params {
		given[name] = true
	}
	child.given = given
	for _, i := range defaults {
		d, err := child.resolve(mapGet(decl.Content[i+1], "Default"))
		if err != nil {
			return err
		}
		if d != nil {
			child.params[decl.Content[i].Value] = d
		}
	}
	for i := 0; decl != nil && i+1 < len(decl.Content); i += 2 {
		name := decl.Content[i].Value
		if v, ok := child.params[name]; ok && isListType(mapGet(decl.Content[i+1], "Type")) {
			child.params[name] = splitList(v)
		}
	}
	if schema == nil {
		return nil
	}
	for _, name := range schema.Names() {
		v, err := schema.Validate(name, child.params[name])
		if err != nil {
			var pe *paramschema.Error
			file := child.file
			if errors.As(err, &pe) && !pe.InSchema && given[name] {
				file = parent.file
			}
			e := &Error{File: file, Msg: fmt.Sprintf("module %s: parameter %v", m.name, err), Chain: child.chain, Err: ErrInvalid}
			if file == parent.file {
				e.Chain = parent.chain
			}
			if pe != nil {
				e.Line, e.Col = pe.Line, pe.Column
			}
			return e
		}
		if v != nil {
			child.params[name] = v
		}
	}
	return nil
}

// checkProperties refuses a module property the module does not declare
// under Parameters, as CloudFormation refuses a stack parameter its
// template does not declare: a misspelt property would otherwise leave the
// parameter at its Default. (A name only ParameterSchema describes is not a
// parameter: its value would never be used.) The error is placed at the
// property in the including file and names the nearest parameter.
func (child *scope) checkProperties(props, decl *yaml.Node, schema *paramschema.Section, parent *scope, m *module) error {
	names := keys(decl)
	for k := range entries(props) {
		if slices.Contains(names, k.Value) {
			continue
		}
		hint := "; it declares no parameters, remove the property"
		switch near := suggest.Nearest(k.Value, names); {
		case schema != nil && schema.Schema(k.Value) != nil:
			hint = fmt.Sprintf("; ParameterSchema describes %s but Parameters does not declare it: add it under Parameters", k.Value)
		case near != "":
			hint = fmt.Sprintf("; did you mean %s? (its parameters: %s)", near, strings.Join(names, ", "))
		}
		return parent.errorf(k, ErrUnknownParameter, "module %s: property %s is not a parameter of %s%s", m.name, k.Value, child.file, hint)
	}
	return nil
}

// isListType reports whether a parameter Type is a list that CloudFormation
// also accepts as a comma-separated string: CommaDelimitedList and
// List<...>.
func isListType(t *yaml.Node) bool {
	return isStr(t) && (t.Value == "CommaDelimitedList" || strings.HasPrefix(t.Value, "List<"))
}

// splitList turns a comma-separated string into the list it stands for,
// each item trimmed of spaces as CloudFormation does; any other value is
// returned as it is.
func splitList(v *yaml.Node) *yaml.Node {
	if !isScalar(v) || v.Tag == tagNull {
		return v
	}
	parts := strings.Split(v.Value, ",")
	out := seqNode()
	out.Line, out.Column = v.Line, v.Column
	for _, p := range parts {
		n := strNode(strings.TrimSpace(p))
		n.Line, n.Column = v.Line, v.Column
		out.Content = append(out.Content, n)
	}
	return out
}

// paramSchema compiles the ParameterSchema section of a module file, once.
func (e *engine) paramSchema(sc *scope) (*paramschema.Section, error) {
	if s, ok := e.schemas[sc.t]; ok {
		return s, nil
	}
	var sec *paramschema.Section
	if n := mapGet(sc.t.Root, "ParameterSchema"); n != nil {
		var err error
		if sec, err = paramschema.CompileSection(n); err != nil {
			e := &Error{File: sc.file, Msg: "ParameterSchema: " + err.Error(), Chain: sc.chain, Err: ErrInvalid}
			var pe *paramschema.Error
			if errors.As(err, &pe) {
				e.Line, e.Col = pe.Line, pe.Column
			}
			return nil, e
		}
	}
	e.schemas[sc.t] = sec
	return sec, nil
}

// addCondition puts condition cond (a final name) on an emitted resource,
// combining it with the resource's own condition when there is one.
func (sc *scope) addCondition(r *emitted, cond string, at *yaml.Node) error {
	own := mapGet(r.node, "Condition")
	if own == nil {
		insertAfter(r.node, "Type", "Condition", strNode(cond))
		return nil
	}
	name := r.name + "Condition"
	if own.Value == name && sc.e.combined[name] {
		// The resource's condition is already one this function made (an
		// inner module's condition): add this one to its Fn::And.
		and := sc.e.condExprs[name].Content[1]
		if len(and.Content) >= maxAnd {
			and.Content = []*yaml.Node{fn("Fn::And", seqNode(and.Content...), nil)}
		}
		and.Content = append(and.Content, fn("Condition", strNode(cond), nil))
		return nil
	}
	expr := fn("Fn::And", seqNode(fn("Condition", strNode(own.Value), nil), fn("Condition", strNode(cond), nil)), nil)
	if err := sc.e.emitCondition(sc, name, expr, at); err != nil {
		return err
	}
	if sc.e.combined == nil {
		sc.e.combined = map[string]bool{}
	}
	sc.e.combined[name] = true
	mapSet(r.node, "Condition", strNode(name))
	return nil
}

// maxAnd is the most conditions CloudFormation's Fn::And takes.
const maxAnd = 10

func addDepends(res, deps *yaml.Node) {
	cur := mapGet(res, "DependsOn")
	var list []*yaml.Node
	if cur != nil {
		if cur.Kind == yaml.SequenceNode {
			list = append(list, cur.Content...)
		} else {
			list = append(list, cur)
		}
	}
	if deps.Kind == yaml.SequenceNode {
		list = append(list, deps.Content...)
	} else {
		list = append(list, deps)
	}
	seen := map[string]bool{}
	var out []*yaml.Node
	for _, n := range list {
		if !seen[n.Value] {
			seen[n.Value] = true
			out = append(out, clone(n))
		}
	}
	var v *yaml.Node
	if len(out) == 1 {
		v = out[0]
	} else {
		v = seqNode(out...)
	}
	if cur == nil {
		insertAfter(res, "Type", "DependsOn", v)
	} else {
		mapSet(res, "DependsOn", v)
	}
}

// mergeOverride merges override src into dst: mappings recursively, lists appended,
// anything else replaced.
func mergeOverride(dst, src *yaml.Node) {
	for i := 0; i+1 < len(src.Content); i += 2 {
		k, v := src.Content[i], src.Content[i+1]
		cur := mapGet(dst, k.Value)
		switch {
		case cur == nil:
			dst.Content = append(dst.Content, k, clone(v))
		case cur.Kind == yaml.MappingNode && v.Kind == yaml.MappingNode && !isIntrinsic(cur) && !isIntrinsic(v):
			mergeOverride(cur, v)
		case cur.Kind == yaml.SequenceNode && v.Kind == yaml.SequenceNode:
			for _, x := range v.Content {
				cur.Content = append(cur.Content, clone(x))
			}
		default:
			mapSet(dst, k.Value, clone(v))
		}
	}
}

// isIntrinsic reports whether n is a one-key mapping naming a function.
func isIntrinsic(n *yaml.Node) bool {
	k, _, ok := single(n)
	return ok && (k == "Ref" || k == "Condition" || strings.HasPrefix(k, "Fn::"))
}

// checkOutputs checks the Outputs section of a module file: each output
// is {Value: ...} (with Description, Condition, ... beside it) or, as the
// design's discussion shows, the value itself (BucketArn: !GetAtt
// Bucket.Arn). A mapping that is neither, such as a Description alone, is
// an error.
func checkOutputs(t *Template) error {
	outs := mapGet(t.Root, "Outputs")
	if outs == nil || isScalar(outs) && outs.Tag == tagNull {
		return nil
	}
	if outs.Kind != yaml.MappingNode {
		return &Error{File: t.Name, Line: outs.Line, Col: outs.Column, Msg: "Outputs must be a mapping of output names", Err: ErrInvalid}
	}
	for i := 0; i+1 < len(outs.Content); i += 2 {
		k, o := outs.Content[i], outs.Content[i+1]
		if v := mapGet(o, "Value"); isScalar(o) && o.Tag == tagNull || !isIntrinsic(o) && v != nil && isScalar(v) && v.Tag == tagNull {
			// CloudFormation refuses null values: one written where the
			// output is used would make the packaged template invalid.
			return &Error{File: t.Name, Line: k.Line, Col: k.Column, Err: ErrInvalid,
				Msg: fmt.Sprintf("output %s has an empty Value; give it a value (\"\" for an empty string)", k.Value)}
		}
		if o.Kind != yaml.MappingNode || isIntrinsic(o) || mapKey(o, "Value") != nil {
			continue
		}
		keys := make([]string, 0, len(o.Content)/2)
		for j := 0; j+1 < len(o.Content); j += 2 {
			keys = append(keys, o.Content[j].Value)
		}
		holds := "it is empty"
		if len(keys) > 0 {
			holds = "it holds " + strings.Join(keys, ", ")
		}
		return &Error{File: t.Name, Line: k.Line, Col: k.Column, Err: ErrInvalid,
			Msg: fmt.Sprintf("output %s has no Value (%s); write %s: {Value: ...}, or the value itself as %s: !GetAtt Resource.Attribute",
				k.Value, holds, k.Value, k.Value)}
	}
	return nil
}

// output returns a copy of module output name (path may reach into an
// object output), resolved in the module's scope.
func (m *module) output(sc *scope, name string, at *yaml.Node) (*yaml.Node, error) {
	child := m.child
	outName, path, _ := strings.Cut(name, ".")
	v, ok := child.outMemo[outName]
	if !ok {
		outs := mapGet(child.t.Root, "Outputs")
		o := mapGet(outs, outName)
		if o == nil {
			return nil, sc.errorf(at, ErrInvalid, "module %s (%s) has no output %s%s", m.name, child.file, outName, suggest.Hint(outName, keys(outs)))
		}
		val := o
		if o.Kind == yaml.MappingNode && mapGet(o, "Value") != nil {
			val = mapGet(o, "Value")
			if c := mapGet(o, "Condition"); c != nil {
				st, _, err := child.condRef(c)
				if err != nil {
					return nil, err
				}
				if st == condFalse {
					return nil, sc.errorf(at, ErrInvalid, "output %s of module %s is turned off by its condition", outName, m.name)
				}
			}
		}
		var err error
		if v, err = child.resolve(val); err != nil {
			return nil, err
		}
		child.outMemo[outName] = v
	}
	if v == nil {
		return nil, nil
	}
	if path != "" {
		x, ok := walkPath(v, path)
		if !ok {
			return nil, sc.errorf(at, ErrInvalid, "output %s of module %s has no field %s", outName, m.name, path)
		}
		v = x
	}
	return clone(v), nil
}

// walkPath follows a dotted path of keys (or list indexes) into v.
func walkPath(v *yaml.Node, path string) (*yaml.Node, bool) {
	for _, p := range strings.Split(path, ".") {
		switch v.Kind {
		case yaml.MappingNode:
			if v = mapGet(v, p); v == nil {
				return nil, false
			}
		case yaml.SequenceNode:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(v.Content) {
				return nil, false
			}
			v = v.Content[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func (e *engine) addTransforms(tr *yaml.Node) {
	items := []*yaml.Node{tr}
	if tr.Kind == yaml.SequenceNode {
		items = tr.Content
	}
	for _, x := range items {
		dup := false
		for _, y := range e.transforms {
			if equal(x, y) {
				dup = true
				break
			}
		}
		if !dup {
			e.transforms = append(e.transforms, clone(x))
		}
	}
}

func (e *engine) emitCondition(sc *scope, name string, expr, at *yaml.Node) error {
	if prev, ok := e.condExprs[name]; ok && equal(prev, expr) {
		return nil // the same module condition again (Fn::Invoke)
	}
	if !validLogicalID(name) {
		return sc.errorf(at, ErrInvalid, "condition %s would be emitted as %q; condition names hold only letters and digits", strings.TrimPrefix(name, sc.prefix), name)
	}
	if e.condSet[name] {
		return sc.errorf(at, ErrNameClash, "condition %s emitted by module %s clashes with an existing condition of that name; rename one of them", name, sc.prefix)
	}
	e.condSet[name] = true
	e.condExprs[name] = expr
	e.conds = append(e.conds, strNode(name), expr)
	return nil
}

func (e *engine) emitMapping(sc *scope, name string, m, at *yaml.Node) error {
	if prev, ok := e.mapNodes[name]; ok && equal(prev, m) {
		return nil
	}
	if !validLogicalID(name) {
		return sc.errorf(at, ErrInvalid, "mapping %s would be emitted as %q; mapping names hold only letters and digits", strings.TrimPrefix(name, sc.prefix), name)
	}
	if e.mapSet[name] {
		return sc.errorf(at, ErrNameClash, "mapping %s emitted by module %s clashes with an existing mapping of that name; rename one of them", name, sc.prefix)
	}
	e.mapSet[name] = true
	e.mapNodes[name] = m
	e.maps = append(e.maps, strNode(name), clone(m))
	return nil
}

// hasParams reports whether the scope has module parameters: a module
// always, the top template only while it resolves an Override that names
// the overridden module's parameters.
func (sc *scope) hasParams() bool { return !sc.top || len(sc.params) > 0 }

// param returns the value of module parameter name. Using a parameter
// that has no value and no Default is an error at the module entry.
func (sc *scope) param(name string, at *yaml.Node) (*yaml.Node, bool, error) {
	if !sc.hasParams() {
		return nil, false, nil
	}
	if v, ok := sc.params[name]; ok {
		return v, true, nil
	}
	decl, ok := sc.missing[name]
	if !ok {
		return nil, false, nil
	}
	f := sc.chain[0]
	where := ""
	if at != nil {
		where = fmt.Sprintf(" (used at %s:%d:%d)", sc.file, at.Line, at.Column)
	}
	return nil, true, &Error{
		File: f.File, Line: f.Line, Col: 3,
		Msg: fmt.Sprintf("module %s: parameter %s (declared at %s:%d) has no Default and is not set; add %s under the module's Properties%s",
			f.Module, name, sc.file, decl.Line, name, where),
		Chain: sc.chain[1:], Err: ErrMissingParameter,
	}
}
