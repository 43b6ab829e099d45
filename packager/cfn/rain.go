package cfn

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/internal/suggest"
)

// rain's directives (aws-cloudformation/rain, cft/pkg), read in templates
// and modules. Each file is read in rain's order: its Rain section first
// (Constants, Packages), then the directives that insert files
// (Rain::Embed, Rain::Include), then its !Rain::Module resources, which
// become Modules entries expanded by the engine like any other. Rain::S3,
// Rain::S3Http and Rain::Constant are intrinsics, resolved where the engine
// resolves values (their arguments may name module parameters).

// rainDirectives are the directives rain defines; Rain::Env is among them
// so that it is refused with its own message.
var rainDirectives = []string{"Rain::Constant", "Rain::Embed", "Rain::Env", "Rain::Include", "Rain::Module", "Rain::S3", "Rain::S3Http"}

// rainIntrinsics are the directives resolved with the other intrinsics
// (added to the intrinsics table).
var rainIntrinsics = map[string]intrinsic{
	"Rain::Constant": (*scope).rainConstant,
	"Rain::S3":       (*scope).rainS3,
	"Rain::S3Http":   (*scope).rainS3Http,
}

// maxIncludeDepth bounds !Rain::Include inside included files.
const maxIncludeDepth = 32

// rainFile applies the Rain section, the file directives and the
// !Rain::Module resources of a file just parsed (the template or a module).
func (e *engine) rainFile(t *Template) error {
	rf := &rainFiler{e: e, file: t.Name, base: t.Name, aliases: map[string]string{}}
	if err := rf.section(t.Root); err != nil {
		return err
	}
	rf.folderPackages(t.Root)
	v, err := rf.walk(t.Root, whereRoot, 0, nil)
	if err != nil {
		return err
	}
	if v.Kind != yaml.MappingNode {
		return rf.errorf(t.Root, ErrSyntax, "a template must be a mapping of sections (Resources, Parameters, ...); the file it includes holds %s", kindName(v))
	}
	if v != t.Root {
		// The template is one !Rain::Include: its file's Rain section
		// is the template's.
		t.Root = v
		if err := rf.section(t.Root); err != nil {
			return err
		}
		rf.folderPackages(t.Root)
	}
	return rf.modules(t.Root)
}

// rainFiler reads the rain parts of one file.
type rainFiler struct {
	e       *engine
	file    string            // the file being read: the template or module, or a file it includes
	base    string            // the template or module, whose folder the engine resolves paths from
	aliases map[string]string // Rain.Packages aliases of folders: alias -> folder
}

func (rf *rainFiler) errorf(at *yaml.Node, sentinel error, format string, args ...any) error {
	e := &Error{File: rf.file, Msg: fmt.Sprintf(format, args...), Err: sentinel}
	if at != nil {
		e.Line, e.Col = at.Line, at.Column
	}
	return e
}

// section moves the Rain section's Constants into the file's Constants
// and its Packages into Packages (a zip or a URL) or into rf.aliases (a
// folder, resolved by rewriting the Type $alias/path of the file's modules,
// as rain does), then removes it.
func (rf *rainFiler) section(root *yaml.Node) error {
	k := mapKey(root, "Rain")
	if k == nil {
		return nil
	}
	sec := mapGet(root, "Rain")
	defer mapDelete(root, "Rain")
	if isScalar(sec) && sec.Tag == tagNull {
		return nil
	}
	if sec.Kind != yaml.MappingNode {
		return rf.errorf(sec, ErrInvalid, "the Rain section must be a mapping with Constants or Packages")
	}
	for sk, sv := range entries(sec) {
		switch sk.Value {
		case "Constants":
			if err := rf.merge(root, "Constants", sv); err != nil {
				return err
			}
		case "Packages":
			if err := rf.packages(root, sv); err != nil {
				return err
			}
		default:
			return rf.errorf(sk, ErrInvalid, "the Rain section holds Constants and Packages, not %s%s", sk.Value, suggest.Hint(sk.Value, []string{"Constants", "Packages"}))
		}
	}
	return nil
}

// folderPackages takes the entries of the Packages section whose Source is
// a local folder into rf.aliases, as rain reads them (the design's
// packages are zip files; a folder was an error).
func (rf *rainFiler) folderPackages(root *yaml.Node) {
	pk := mapGet(root, "Packages")
	if pk == nil || pk.Kind != yaml.MappingNode || isRemote(rf.file) {
		return
	}
	var kept []*yaml.Node
	for k, v := range entries(pk) {
		src := mapGet(v, "Source")
		if isStr(src) && src.Value != "" && !strings.Contains(src.Value, "://") && mapKey(v, "Hash") == nil {
			p := filepath.FromSlash(src.Value)
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(rf.file), p)
			}
			if st, err := os.Stat(p); err == nil && st.IsDir() {
				rf.aliases[k.Value] = src.Value
				continue
			}
		}
		kept = append(kept, k, v)
	}
	pk.Content = kept
}

// folderSource rewrites $alias/path, for an alias of a folder package,
// to the path in that folder.
func (rf *rainFiler) folderSource(src *yaml.Node) {
	alias, rest, ok := strings.Cut(src.Value, "/")
	if !ok || !strings.HasPrefix(alias, "$") {
		return
	}
	if folder, ok := rf.aliases[alias[1:]]; ok {
		src.Value = strings.TrimSuffix(folder, "/") + "/" + rest
		if !strings.Contains(folder, "://") {
			src.Value = path.Clean(src.Value)
		}
	}
}

// merge adds the entries of v to the root section name, creating it.
func (rf *rainFiler) merge(root *yaml.Node, name string, v *yaml.Node) error {
	if isScalar(v) && v.Tag == tagNull {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		return rf.errorf(v, ErrInvalid, "Rain.%s must be a mapping", name)
	}
	dst := mapGet(root, name)
	if dst == nil || isScalar(dst) && dst.Tag == tagNull {
		dst = mapNode()
		mapSet(root, name, dst)
	}
	if dst.Kind != yaml.MappingNode {
		return rf.errorf(dst, ErrInvalid, "%s must be a mapping", name)
	}
	for k, x := range entries(v) {
		if mapKey(dst, k.Value) != nil {
			return rf.errorf(k, ErrNameClash, "%s %s is declared both in the Rain section and in %s; keep one", strings.TrimSuffix(name, "s"), k.Value, name)
		}
		dst.Content = append(dst.Content, k, x)
	}
	return nil
}

// packages reads Rain.Packages: alias: {Location: ..., Hash: ...}.
func (rf *rainFiler) packages(root, v *yaml.Node) error {
	if isScalar(v) && v.Tag == tagNull {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		return rf.errorf(v, ErrInvalid, "Rain.Packages must be a mapping of aliases")
	}
	zips := mapNode()
	for k, p := range entries(v) {
		if p.Kind != yaml.MappingNode {
			return rf.errorf(p, ErrInvalid, "package %s must be a mapping with a Location", k.Value)
		}
		var loc, hash *yaml.Node
		for pk, pv := range entries(p) {
			switch pk.Value {
			case "Location":
				loc = pv
			case "Hash":
				hash = pv
			default:
				return rf.errorf(pk, ErrInvalid, "package %s: unknown key %s; a Rain package takes Location and Hash%s", k.Value, pk.Value, suggest.Hint(pk.Value, []string{"Location", "Hash"}))
			}
		}
		if loc == nil || !isStr(loc) || loc.Value == "" {
			return rf.errorf(k, ErrInvalid, "package %s needs a Location: a folder, a zip file or an https:// URL", k.Value)
		}
		if strings.HasSuffix(loc.Value, ".zip") {
			entry := mapNode(strNode("Source"), loc)
			if hash != nil {
				entry.Content = append(entry.Content, strNode("Hash"), hash)
			}
			zips.Content = append(zips.Content, k, entry)
			continue
		}
		if hash != nil {
			return rf.errorf(hash, ErrInvalid, "package %s: a Hash pins a zip file; %s is a folder, so pin its modules with Hash on each module entry or drop it", k.Value, loc.Value)
		}
		rf.aliases[k.Value] = loc.Value
	}
	if len(zips.Content) > 0 {
		return rf.merge(root, "Packages", zips)
	}
	return nil
}

// Where a node is in its file, for the directives that are only allowed
// in one place.
type where int

const (
	whereOther     where = iota
	whereRoot            // the file's root mapping
	whereResources       // the Resources section
	whereResource        // one resource
	whereType            // a resource's Type
)

// walk replaces the file directives in n (Rain::Embed, Rain::Include) and
// refuses Rain::Env, unknown directives and a Rain::Module that is not a
// resource's Type. inc is the chain of files being included.
func (rf *rainFiler) walk(n *yaml.Node, at where, depth int, inc []string) (*yaml.Node, error) {
	switch n.Kind {
	case yaml.SequenceNode:
		for i, x := range n.Content {
			v, err := rf.walk(x, whereOther, depth+1, inc)
			if err != nil {
				return nil, err
			}
			n.Content[i] = v
		}
		return n, nil
	case yaml.MappingNode:
	default:
		return n, nil
	}
	if k, arg, ok := single(n); ok && strings.HasPrefix(k, "Rain::") {
		switch k {
		case "Rain::Embed":
			return rf.embed(n, arg)
		case "Rain::Include":
			return rf.include(n, arg, at, depth, inc)
		case "Rain::Env":
			name := "Name"
			if isStr(arg) {
				if s := alnum(arg.Value); validLogicalID(s) {
					name = s
				}
			}
			return nil, rf.errorf(n, ErrInvalid, "!Rain::Env reads the environment, and a build must not depend on it: declare a parameter (Parameters: {%s: {Type: String}}), write !Ref %s here and give its value when deploying", name, name)
		case "Rain::Module":
			if at != whereType {
				return nil, rf.errorf(n, ErrInvalid, "!Rain::Module names a module in a resource's Type (Resources: {Name: {Type: !Rain::Module ./module.yaml}})")
			}
			rf.rebase(arg)
			return n, nil
		case "Rain::S3", "Rain::S3Http":
			// Resolved as intrinsics, from the folder of the template or
			// module: a path written in an included file is made relative
			// to it.
			rf.rebase(arg)
			if p := mapGet(arg, "Path"); p != nil {
				rf.rebase(p)
			}
			return n, nil
		case "Rain::Constant":
			return n, nil
		}
		return nil, rf.errorf(n.Content[0], ErrInvalid, "unknown directive %s%s; rain's directives are %s", k, suggest.Hint(k, rainDirectives), strings.Join(rainDirectives, ", "))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		inner := whereOther
		switch {
		case at == whereRoot && n.Content[i].Value == "Resources":
			inner = whereResources
		case at == whereResources:
			inner = whereResource
		case at == whereResource && n.Content[i].Value == "Type":
			inner = whereType
		}
		v, err := rf.walk(n.Content[i+1], inner, depth+1, inc)
		if err != nil {
			return nil, err
		}
		n.Content[i+1] = v
	}
	return n, nil
}

// rebase rewrites a relative path p written in an included file so that
// it names the same file from the folder of the template or module that
// includes it (rain resolves it from the included file's folder).
func (rf *rainFiler) rebase(p *yaml.Node) {
	if rf.file == rf.base || !isStr(p) || p.Value == "" || filepath.IsAbs(filepath.FromSlash(p.Value)) ||
		strings.HasPrefix(p.Value, "$") || strings.Contains(p.Value, "://") || isRemote(rf.file) || isRemote(rf.base) {
		return
	}
	rel, err := filepath.Rel(filepath.Dir(rf.base), filepath.Join(filepath.Dir(rf.file), filepath.FromSlash(p.Value)))
	if err == nil {
		p.Value = filepath.ToSlash(rel)
	}
}

// isRemote reports whether a file name is a package entry or a URL.
func isRemote(file string) bool {
	return strings.HasPrefix(file, "$") || strings.Contains(file, "://")
}

// fileArg checks the path argument of a file directive.
func (rf *rainFiler) fileArg(name string, n, arg *yaml.Node) error {
	if !isStr(arg) || arg.Value == "" {
		return rf.errorf(n, ErrInvalid, "!%s needs the path of a file, relative to %s", name, rf.file)
	}
	if strings.Contains(arg.Value, "://") {
		return rf.errorf(arg, ErrInvalid, "!%s %s: name a file of the project, not a URL (a build reads no file from the network through a directive)", name, arg.Value)
	}
	return nil
}

// embed returns the content of a file as a string, without the white space
// around it (as rain does).
func (rf *rainFiler) embed(n, arg *yaml.Node) (*yaml.Node, error) {
	if err := rf.fileArg("Rain::Embed", n, arg); err != nil {
		return nil, err
	}
	_, data, err := rf.e.load(rf.file, arg.Value, "")
	if err != nil {
		return nil, wrapLoad(rf.file, arg.Line, arg.Column, nil, err)
	}
	if len(data) > maxInsertFile {
		return nil, rf.errorf(arg, ErrTooLarge, "!Rain::Embed %s: file is larger than %d bytes; ship it with !Rain::S3 instead", arg.Value, maxInsertFile)
	}
	if !utf8.Valid(data) || slices.Contains(data, 0) {
		return nil, rf.errorf(arg, ErrInvalid, "!Rain::Embed %s: the file is not text (UTF-8); ship it with !Rain::S3 instead", arg.Value)
	}
	if rf.e.expansion += int64(len(data)) + nodeCost; rf.e.expansion > maxExpansionBytes {
		return nil, rf.errorf(arg, ErrTooLarge, "the template and the files it inserts would take more than %d MiB", maxExpansionBytes>>20)
	}
	s := strNode(strings.TrimSpace(string(data)))
	s.Line, s.Column = n.Line, n.Column
	if strings.Contains(s.Value, "\n") {
		s.Style = yaml.LiteralStyle
	}
	return s, nil
}

// include returns the YAML or JSON value of a file, with its own file
// directives applied relative to it.
func (rf *rainFiler) include(n, arg *yaml.Node, at where, depth int, inc []string) (*yaml.Node, error) {
	if err := rf.fileArg("Rain::Include", n, arg); err != nil {
		return nil, err
	}
	file, data, err := rf.e.load(rf.file, arg.Value, "")
	if err != nil {
		return nil, wrapLoad(rf.file, arg.Line, arg.Column, nil, err)
	}
	chain := append(append([]string{}, inc...), rf.file)
	if slices.Contains(chain, file) {
		return nil, rf.errorf(arg, ErrCycle, "!Rain::Include %s includes itself: %s -> %s", arg.Value, strings.Join(chain, " -> "), file)
	}
	if len(chain) > maxIncludeDepth {
		return nil, rf.errorf(arg, ErrTooLarge, "!Rain::Include nested deeper than %d files", maxIncludeDepth)
	}
	v, size, err := parseValue(file, data)
	if err != nil {
		if ce, ok := err.(*Error); ok {
			ce.Msg = fmt.Sprintf("%s (included at %s:%d:%d; !Rain::Include takes a YAML or JSON file)", ce.Msg, rf.file, arg.Line, arg.Column)
		}
		return nil, err
	}
	if rf.e.expansion += size; rf.e.expansion > maxExpansionBytes {
		return nil, rf.errorf(arg, ErrTooLarge, "the template and the files it includes would take more than %d MiB", maxExpansionBytes>>20)
	}
	sub := &rainFiler{e: rf.e, file: file, base: rf.base, aliases: rf.aliases}
	return sub.walk(v, at, depth+1, chain)
}

// modules turns each resource whose Type is !Rain::Module (or a package
// path, $alias/module.yaml) into an entry of the file's Modules section.
func (rf *rainFiler) modules(root *yaml.Node) error {
	for _, e := range entries(mapGet(root, "Modules")) {
		if src := mapGet(e, "Source"); isStr(src) {
			rf.folderSource(src)
		}
	}
	res := mapGet(root, "Resources")
	if res == nil || res.Kind != yaml.MappingNode {
		return nil
	}
	var kept []*yaml.Node
	var mods []*yaml.Node
	for i := 0; i+1 < len(res.Content); i += 2 {
		k, def := res.Content[i], res.Content[i+1]
		if ext := mapGet(mapGet(def, "Metadata"), "Extends"); ext != nil && mapKey(def, "Type") == nil {
			return rf.errorf(ext, ErrInvalid, "resource %s: Metadata.Extends (the module extensions of early rain releases, gone from its last one) is not supported: give the resource a Type (%s) and set the module instance's properties on it through Overrides", k.Value, ext.Value)
		}
		src := rainModuleSource(def)
		if src == nil {
			kept = append(kept, k, def)
			continue
		}
		if !isStr(src) || src.Value == "" {
			return rf.errorf(src, ErrInvalid, "resource %s: !Rain::Module needs the path of a module file", k.Value)
		}
		s := *src
		rf.folderSource(&s)
		entry := mapNode(strNode("Source"), &s)
		entry.Line, entry.Column = def.Line, def.Column
		for ek, ev := range entries(def) {
			switch ek.Value {
			case "Type":
			case "Properties", "Overrides", "Condition", "DependsOn":
				entry.Content = append(entry.Content, ek, ev)
			default:
				return rf.errorf(ek, ErrInvalid, "resource %s is a module (Type %s): it takes Properties and Overrides (and Condition, DependsOn), not %s; set %s on the module's resources with Overrides",
					k.Value, src.Value, ek.Value, ek.Value)
			}
		}
		rf.e.rainEntries[entry] = true
		mods = append(mods, k, entry)
	}
	if len(mods) == 0 {
		return nil
	}
	res.Content = kept
	return rf.merge(root, "Modules", mapNode(mods...))
}

// rainModuleSource returns the module named by a resource's Type
// (!Rain::Module path, or $alias/path as rain reads it), or nil.
func rainModuleSource(def *yaml.Node) *yaml.Node {
	typ := mapGet(def, "Type")
	if typ == nil {
		return nil
	}
	if k, v, ok := single(typ); ok && k == "Rain::Module" {
		return v
	}
	if isStr(typ) && strings.HasPrefix(typ.Value, "$") && strings.Contains(typ.Value, "/") {
		return typ
	}
	return nil
}

// rainConstant resolves !Rain::Constant Name: the constant's value, of any
// type, as Ref Const::Name gives it.
func (sc *scope) rainConstant(n, arg *yaml.Node) (*yaml.Node, error) {
	if !isStr(arg) || arg.Value == "" {
		return nil, sc.errorf(n, ErrInvalid, "!Rain::Constant needs the name of a constant of the Rain section")
	}
	if _, ok := sc.consts[arg.Value]; !ok {
		return nil, sc.errorf(arg, ErrInvalid, "!Rain::Constant %s: no constant %s in this file's Rain Constants%s", arg.Value, arg.Value, suggest.Hint(arg.Value, slices.Sorted(maps.Keys(sc.consts))))
	}
	return sc.constant(arg.Value, arg)
}

// rainConstants replaces every !Rain::Constant in n (a section the engine
// does not otherwise resolve: Parameters, Rules) by the constant's value,
// as rain does wherever the directive is written.
func (sc *scope) rainConstants(n *yaml.Node, depth int) (*yaml.Node, error) {
	if depth > maxConstDepth {
		return n, nil // checkDirectives refuses what is left
	}
	if k, arg, ok := single(n); ok && k == "Rain::Constant" {
		return sc.rainConstant(n, arg)
	}
	for i, c := range n.Content {
		r, err := sc.rainConstants(c, depth+1)
		if err != nil {
			return nil, err
		}
		n.Content[i] = r
	}
	return n, nil
}

// maxConstDepth bounds rainConstants' walk, as checkDirectives' is.
const maxConstDepth = 1000

// constant resolves the value of constant name (!Ref Const::Name,
// !Rain::Constant Name). A constant whose value uses itself, directly or
// through others, is ErrCycle.
func (sc *scope) constant(name string, at *yaml.Node) (*yaml.Node, error) {
	if sc.constBusy[name] {
		return nil, sc.errorf(at, ErrCycle, "constant %s refers to itself", name)
	}
	if sc.constBusy == nil {
		sc.constBusy = map[string]bool{}
	}
	sc.constBusy[name] = true
	defer delete(sc.constBusy, name)
	return sc.resolve(sc.consts[name])
}

// checkDirectives refuses a directive left in the packaged template: one
// written where the engine does not resolve values (Parameters, Rules, a
// resource's Type).
func checkDirectives(file string, n *yaml.Node, depth int) error {
	if depth > 1000 {
		return nil
	}
	if k, _, ok := single(n); ok && strings.HasPrefix(k, "Rain::") {
		return &Error{File: file, Line: n.Line, Col: n.Column, Err: ErrInvalid,
			Msg: fmt.Sprintf("!%s cannot be used here (it is resolved in resource attributes, Outputs, Conditions, Metadata and Properties of modules); move it into a resource's Properties", k)}
	}
	for _, x := range n.Content {
		if err := checkDirectives(file, x, depth+1); err != nil {
			return err
		}
	}
	return nil
}
