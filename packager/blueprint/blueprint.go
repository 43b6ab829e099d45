package blueprint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cloud-assembly/assemble/internal/projectfs"
	"github.com/cloud-assembly/assemble/packager/blueprint/subst"
	"go.yaml.in/yaml/v3"
)

// Options configures Load.
type Options struct {
	// Cwd is the folder ${cwd()} stands for when include paths are
	// resolved. Empty means the process's working directory.
	Cwd string
	// Root, when set, is the folder every loaded blueprint must lie in:
	// an include resolving outside it is an ErrInclude error.
	Root string
	// Variables gives values for the root blueprint's variables (string,
	// int, int64, float64 or bool). Variables without a value keep their
	// default, or stay unknown until deploy time.
	Variables map[string]any
	// Read, if set, is told the path of every blueprint file read.
	Read func(path string)
}

// Blueprint is a loaded and validated blueprint file.
type Blueprint struct {
	// Path is the file's path as given (the root) or as resolved (children).
	Path string
	// Source is the file's bytes.
	Source []byte
	// Root is the document's top-level mapping.
	Root *yaml.Node
	// Depth is 1 for the root, 2 for what it includes, and so on.
	Depth int

	Variables []*Variable
	Values    []*Value
	Includes  []*Include
	// Children are the included blueprints that could be loaded at
	// validation time, by include name. Includes whose path is only known at
	// deploy time, or that name a remote source, are not loaded.
	Children map[string]*Child

	// Known holds the variable values known at validation time: those
	// passed in, else the defaults.
	Known map[string]any

	c *checker
}

// Child is an included blueprint.
type Child struct {
	Include   *Include
	Blueprint *Blueprint
	// Resolved is the local file the include's path resolved to.
	Resolved string
}

// Load reads, validates and resolves the blueprint at path and, recursively,
// every local blueprint it includes. The error, if any, is an ErrorList
// holding every problem found; each wraps one of the Err* classes.
//
// The Blueprint is returned even when the error is not nil, as far as it
// could be loaded (nil only when the file could not be read or parsed).
func Load(path string, opts Options) (*Blueprint, error) {
	cwd := opts.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		}
		cwd = wd
	}
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	var errs ErrorList
	l := &loader{cwd: cwd, errs: &errs, read: opts.Read}
	if opts.Root != "" {
		root, err := filepath.Abs(opts.Root)
		if err != nil {
			return nil, fmt.Errorf("root: %w", err)
		}
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
		l.root = root
		// Files are read through the root: a link swapped in after the
		// include was checked cannot lead outside it.
		if l.fsroot, err = os.OpenRoot(root); err != nil {
			return nil, fmt.Errorf("root: %w", err)
		}
		defer l.fsroot.Close()
	}
	bp := l.load(path, opts.Variables, nil, nil, 1)
	if len(errs) > 0 {
		return bp, errs.sorted()
	}
	return bp, nil
}

type loader struct {
	work   workBudget // shared by every blueprint the load evaluates
	loaded int
	nodes  int // YAML nodes of the files loaded, bounded by MaxNodes
	cwd    string
	root   string   // "" for no restriction
	fsroot *os.Root // root, opened; nil for no restriction
	read   func(path string)
	errs   *ErrorList
}

// readFile reads a blueprint file, through the root when there is one,
// and reports it to Options.Read.
func (l *loader) readFile(path string) ([]byte, error) {
	var src []byte
	var err error
	if l.fsroot == nil {
		src, err = readFile(path)
	} else {
		src, err = l.readInRoot(path)
	}
	if err == nil && l.read != nil {
		l.read(path)
	}
	return src, err
}

// readInRoot reads path, which must lie in the root, through it.
func (l *loader) readInRoot(path string) ([]byte, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	rel, err := filepath.Rel(l.root, abs)
	if err != nil || !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("%s lies outside the project folder %s", path, l.root)
	}
	f, err := projectfs.Open(l.fsroot, rel) // the one project-path rule: regular files, no link out, no FIFO waited on
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(path, f)
}

// load loads one blueprint. stack holds the absolute paths of the
// blueprints including it; at is the include entry (in the parent) that led
// here, for errors about the passed variables.
func (l *loader) load(path string, vars map[string]any, stack []string, at *includeSite, depth int) *Blueprint {
	l.loaded++
	if l.loaded > MaxBlueprints {
		if l.loaded == MaxBlueprints+1 {
			at.errAt(ErrInclude, "include %q: more than %d blueprint files in one load; include fewer blueprints", at.inc.Name, MaxBlueprints)
		}
		return nil
	}
	if l.nodes > MaxNodes {
		return nil // reported once, where the limit was passed
	}
	src, err := l.readFile(path)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			*l.errs = append(*l.errs, e)
		} else if at != nil {
			at.errAt(ErrInclude, "include %q: %v; check the path", at.inc.Name, unwrapPathErr(err))
		} else {
			*l.errs = append(*l.errs, &Error{File: path, Err: ErrRead, Msg: fmt.Sprintf("can not read the blueprint: %v", unwrapPathErr(err))})
		}
		return nil
	}
	root, perr := parseDocument(path, src, true)
	if perr != nil {
		*l.errs = append(*l.errs, perr)
		return nil
	}
	if l.nodes += countNodes(root, MaxNodes-l.nodes); l.nodes > MaxNodes {
		msg := fmt.Sprintf("the blueprints loaded hold more than %d YAML nodes; simplify the blueprint or split out what it does not need", MaxNodes)
		if at != nil {
			at.errAt(ErrTooLarge, "include %q: %s", at.inc.Name, msg)
		} else {
			*l.errs = append(*l.errs, &Error{File: path, Err: ErrTooLarge, Msg: fmt.Sprintf("the blueprint holds more than %d YAML nodes, the limit for a blueprint and its includes; simplify it", MaxNodes)})
		}
		return nil
	}
	bp := &Blueprint{Path: path, Source: src, Root: root, Depth: depth, Children: map[string]*Child{}}
	c := &checker{
		bp: bp, file: path, src: src, errs: l.errs,
		vars: map[string]*Variable{}, values: map[string]*Value{}, ds: map[string]*dataSource{},
		res: map[string]*resource{}, inc: map[string]*Include{},
		edges: map[string][]edge{}, keyNode: map[string]*yaml.Node{},
	}
	c.checkDocument(root)
	c.resolve()
	c.linkEdges()
	c.findCycles()
	c.checkEachDeps()
	bp.Known = c.knownVariables(vars, at)
	bp.c = c
	c.ev = newEvaluator(c, bp.Known, &l.work)
	c.checkEvaluation()

	abs, _ := filepath.Abs(path)
	stack = append(stack, abs)
	for _, in := range bp.Includes {
		l.include(c, bp, in, stack, depth)
	}
	c.checkChildRefs()
	c.checkRefTypes()
	return bp
}

// checkChildRefs checks that references to loaded children name one of
// their exports.
func (c *checker) checkChildRefs() {
	for _, s := range c.sites {
		for _, part := range s.str.Parts {
			subst.Walk(part.Sub, func(n subst.Node) {
				ref, ok := n.(*subst.Child)
				if !ok || len(ref.Path) == 0 || ref.Path[0].IsIndex {
					return
				}
				ch, ok := c.bp.Children[ref.Name]
				if !ok || ch.Blueprint == nil {
					return
				}
				exports := ch.Blueprint.exportNames()
				if !slices.Contains(exports, ref.Path[0].Name) {
					c.errAtOffset(s.node, ref.Pos(), ErrReference, "child blueprint %q (%s) does not export %q; its exports are %s", ref.Name, ch.Resolved, ref.Path[0].Name, quoteList(exports))
				}
			})
		}
	}
}

// exportNames lists the blueprint's exports in source order.
func (bp *Blueprint) exportNames() []string {
	var out []string
	for _, sec := range pairs(bp.Root) {
		if sec.key.Value == "exports" {
			for _, kv := range pairs(sec.val) {
				out = append(out, kv.key.Value)
			}
		}
	}
	return out
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Path, pe.Err)
	}
	return err
}

// includeSite is where an include sits, for errors reported in the parent.
type includeSite struct {
	c   *checker
	inc *Include
}

func (s *includeSite) errAt(class error, format string, args ...any) {
	n := s.inc.key
	if s.inc.Path != nil {
		n = s.inc.Path
	}
	s.c.errAt(n, class, format, args...)
}

// knownVariables checks the values passed for variables and returns the
// values known now: passed ones, else defaults.
func (c *checker) knownVariables(vars map[string]any, at *includeSite) map[string]any {
	known := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		v, ok := c.vars[name]
		val := vars[name]
		if !ok {
			if at != nil {
				at.errAt(ErrInclude, "include %q passes variable %q, which %s does not define", at.inc.Name, name, c.file)
			} else {
				*c.errs = append(*c.errs, &Error{File: c.file, Err: ErrSchema, Msg: fmt.Sprintf("a value is given for variable %q, which the blueprint does not define", name)})
			}
			continue
		}
		if val == nil { // passed, but known only at deploy time
			continue
		}
		val = normaliseVar(val)
		passed := ""
		if str, isStr := val.(string); isStr {
			// Strings (from the command line or assembly.yaml) are read as
			// the variable's type.
			if parsed, ok := parseAs(str, v.Type); ok {
				val = parsed
			} else {
				passed = valueKindOfText(str)
			}
		}
		if !goHasType(val, v.Type) {
			kind := valueKind(val)
			if passed != "" {
				kind = passed
			}
			msg := fmt.Sprintf("variable %q of %s has type %s, but the value passed is %s (%v): pass %s", name, c.file, v.Type, kind, val, typeArticle(v.Type))
			if at != nil {
				at.errAt(ErrInclude, "include %q: %s", at.inc.Name, msg)
			} else {
				c.errAt(v.key, ErrSchema, "%s", msg)
			}
			continue
		}
		if v.allowed != nil && !allowedHas(v.allowed, val) {
			msg := fmt.Sprintf("variable %q of %s: value %v is not one of its allowedValues", name, c.file, val)
			if at != nil {
				at.errAt(ErrInclude, "include %q: %s", at.inc.Name, msg)
			} else {
				c.errAt(v.key, ErrSchema, "%s", msg)
			}
			continue
		}
		known[name] = val
	}
	for _, v := range c.bp.Variables {
		if _, passed := vars[v.Name]; passed {
			continue
		}
		if v.Default != nil && scalarHasType(v.Default, v.Type) {
			known[v.Name] = scalarValue(v.Default, v.Type)
		} else if at != nil {
			at.errAt(ErrInclude, "include %q does not pass variable %q, which %s requires (it has no default); add it to the include's variables", at.inc.Name, v.Name, c.file)
		}
	}
	return known
}

// normaliseVar turns the number types callers may pass (json.Number, int,
// float32, ...) into int64 or float64.
func normaliseVar(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint:
		return int64(x)
	case float32:
		return float64(x)
	}
	return v
}

// parseAs reads a string as a value of a variable type.
func parseAs(s, typ string) (any, bool) {
	switch typ {
	case "integer":
		v, err := strconv.ParseInt(s, 10, 64)
		return v, err == nil
	case "float":
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil
	case "boolean":
		v, err := strconv.ParseBool(s)
		return v, err == nil
	}
	return s, true
}

func allowedHas(allowed []*yaml.Node, val any) bool {
	s := fmt.Sprint(val)
	for _, a := range allowed {
		if a.Value == s {
			return true
		}
		if f, err := strconv.ParseFloat(a.Value, 64); err == nil {
			if g, err := strconv.ParseFloat(s, 64); err == nil && f == g {
				return true
			}
		}
	}
	return false
}

// scalarValue decodes a YAML scalar as a Go value of a variable type.
func scalarValue(n *yaml.Node, typ string) any {
	switch typ {
	case "integer":
		if v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
			return v
		}
	case "float":
		if v, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64); err == nil {
			return v
		}
	case "boolean":
		return n.Value == "true"
	}
	return n.Value
}

// literalValue decodes any YAML scalar by its tag.
func literalValue(n *yaml.Node) any {
	switch n.Tag {
	case "!!int":
		return scalarValue(n, "integer")
	case "!!float":
		return scalarValue(n, "float")
	case "!!bool":
		return n.Value == "true"
	}
	return n.Value
}

// include resolves and loads one include entry.
func (l *loader) include(c *checker, parent *Blueprint, in *Include, stack []string, depth int) {
	at := &includeSite{c: c, inc: in}
	if in.Path == nil {
		return
	}
	if src := metaString(in.Metadata, "sourceType"); src != "" && src != "file" && src != "local" {
		return // a remote source, fetched by the deploying tool
	}
	known := map[string]any{}
	for name, v := range parent.Known {
		if def, ok := c.vars[name]; ok && !def.Secret {
			known[name] = v
		}
	}
	p, ok := evalString(in.Path.Value, known, l.cwd)
	if !ok {
		return // known only at deploy time
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(parent.Path), p)
	}
	abs, _ := filepath.Abs(p)
	if l.root != "" {
		real := abs
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			real = r
		}
		if rel, err := filepath.Rel(l.root, real); err != nil || !filepath.IsLocal(rel) {
			at.errAt(ErrInclude, "include %q names %s, which lies outside the project folder %s; keep included blueprints inside it", in.Name, p, l.root)
			return
		}
	}
	for _, s := range stack {
		if s == abs {
			chain := append(stack[indexOf(stack, abs):], abs)
			at.errAt(ErrIncludeCycle, "include %q makes a cycle: %s; a blueprint can not include itself, directly or not", in.Name, strings.Join(relAll(chain, l.cwd), " -> "))
			return
		}
	}
	if depth+1 > MaxDepth {
		at.errAt(ErrIncludeDepth, "include %q would be blueprint depth %d; includes may nest at most %d blueprints deep (the root is depth 1)", in.Name, depth+1, MaxDepth)
		return
	}
	vars := map[string]any{}
	for _, kv := range pairs(in.Variables) {
		if isStr(kv.val) && strings.Contains(kv.val.Value, "${") {
			vars[kv.key.Value] = c.knownAt(kv.val, known, l.cwd) // nil: known at deploy time
			continue
		}
		if isScalar(kv.val) {
			vars[kv.key.Value] = literalValue(kv.val)
		}
	}
	child := l.load(p, vars, stack, at, depth+1)
	if child != nil {
		parent.Children[in.Name] = &Child{Include: in, Blueprint: child, Resolved: p}
	}
}

// knownAt evaluates a string holding substitutions as the evaluator does
// (a sole substitution keeps its type), with ${cwd()} standing for the
// folder include paths resolve from. It returns nil when the string is
// known only at deploy time.
func (c *checker) knownAt(n *yaml.Node, known map[string]any, cwd string) any {
	if s, ok := c.siteOf[n]; ok {
		var v any
		var err error
		if one := s.str.Single(); one != nil {
			v, err = c.ev.eval(one)
		} else {
			v, err = c.ev.interpolate(s.str)
		}
		if err == nil {
			return v
		}
	}
	if v, ok := evalString(n.Value, known, cwd); ok {
		return v
	}
	return nil
}

func indexOf(xs []string, x string) int {
	for i, s := range xs {
		if s == x {
			return i
		}
	}
	return 0
}

func relAll(paths []string, base string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		if r, err := filepath.Rel(base, p); err == nil && !strings.HasPrefix(r, "..") {
			out[i] = r
		} else {
			out[i] = p
		}
	}
	return out
}

func metaString(n *yaml.Node, key string) string {
	for _, kv := range pairs(n) {
		if kv.key.Value == key && isStr(kv.val) {
			return kv.val.Value
		}
	}
	return ""
}

// evalString evaluates a string whose substitutions are known now: ${cwd()},
// variables with known values, and literals. ok is false when any part is
// known only at deploy time.
func evalString(s string, known map[string]any, cwd string) (string, bool) {
	in, err := subst.ParseString(s)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range in.Parts {
		if p.Sub == nil {
			b.WriteString(p.Text)
			continue
		}
		v, ok := evalStatic(p.Sub, known, cwd)
		if !ok {
			return "", false
		}
		b.WriteString(fmt.Sprint(v))
	}
	return b.String(), true
}

// evalStatic evaluates literals, known variables and cwd().
func evalStatic(n subst.Node, known map[string]any, cwd string) (any, bool) {
	switch n := n.(type) {
	case *subst.Literal:
		switch n.Kind {
		case subst.StringLit:
			return n.Str, true
		case subst.IntLit:
			return n.Int, true
		case subst.FloatLit:
			return n.Float, true
		}
		return n.Bool, true
	case *subst.Variable:
		v, ok := known[n.Name]
		return v, ok
	case *subst.Call:
		if n.Name == "cwd" && len(n.Args) == 0 && len(n.Path) == 0 {
			return cwd, true
		}
	}
	return nil, false
}

// valueKind names a passed value's kind for messages (not its Go type).
func valueKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64:
		return "an integer"
	case float64:
		return "a float"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a value of another kind"
}

// valueKindOfText names what a value passed as text (--var, a droplet's
// variables) reads as: "1.5" passed for an integer is a float, not a string.
func valueKindOfText(s string) string {
	for _, t := range []string{"integer", "float", "boolean"} {
		if v, ok := parseAs(s, t); ok {
			return valueKind(v)
		}
	}
	return "a string"
}

// typeArticle is "a string", "an integer", ... for a variable type.
func typeArticle(t string) string {
	if t != "" && strings.ContainsRune("aeiou", rune(t[0])) {
		return "an " + t
	}
	return "a " + t
}
