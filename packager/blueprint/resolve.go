package blueprint

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cloud-assembly/assemble/packager/blueprint/subst"
)

// resolve checks every recorded substitution: references resolve, elem and
// i sit inside each resources, functions exist and get the right arguments,
// and places get the types they need. It records the dependency edges.
func (c *checker) resolve() {
	for _, s := range c.sites {
		before := len(*c.errs)
		c.resolveSite(s)
		s.bad = len(*c.errs) > before
	}
}

// resolveSite resolves one site and checks the types it yields.
func (c *checker) resolveSite(s *site) {
	for _, part := range s.str.Parts {
		if part.Sub == nil {
			continue
		}
		c.resolveNode(s, part.Sub)
		t := c.typeOf(part.Sub)
		if s.str.Single() == nil && t&^(TArray|TObject|TFunc) == 0 {
			c.errAtOffset(s.node, part.Sub.Pos(), ErrType, "${%s} yields %s, which can not be interpolated into a string", part.Sub, t)
		}
	}
	if one := s.str.Single(); one != nil && s.want != 0 {
		t := c.typeOf(one)
		switch {
		case t&s.want != 0:
		case s.field == "each" && t == TObject:
			c.errAtOffset(s.node, one.Pos(), ErrEachType, "%s must yield array, object found: each does not support substitutions that resolve to objects or mappings; to iterate over an object's values, use ${vals(%s)}", s.what, one)
		case s.field == "each":
			c.errAtOffset(s.node, one.Pos(), ErrEachType, "%s must yield %s, %s found", s.what, s.want, t)
		default:
			c.errAtOffset(s.node, one.Pos(), ErrType, "%s must yield %s, %s found", s.what, s.want, t)
		}
	}
}

func (c *checker) dep(s *site, to, why string) {
	s.refs = append(s.refs, to)
	c.edges[s.owner] = append(c.edges[s.owner], edge{to: to, why: why})
}

func (c *checker) refErr(s *site, n subst.Node, format string, args ...any) {
	c.errAtOffset(s.node, n.Pos(), ErrReference, format, args...)
}

// isFuncRef reports whether a bare name refers to a core function (used as
// a function value, as in map(xs, to_upper)).
func (c *checker) isFuncRef(r *subst.Resource) bool {
	if !r.Bare || len(r.Path) > 0 {
		return false
	}
	if _, isRes := c.res[r.Name]; isRes {
		return false
	}
	_, ok := coreFunctions[r.Name]
	return ok
}

func (c *checker) resolveNode(s *site, n subst.Node) {
	switch n := n.(type) {
	case *subst.Variable:
		if _, ok := c.vars[n.Name]; !ok {
			c.refErr(s, n, "variables.%s is not defined; add it to variables", n.Name)
		}
	case *subst.Value:
		v, ok := c.values[n.Name]
		if !ok {
			c.refErr(s, n, "values.%s is not defined; add it to values", n.Name)
			return
		}
		if len(n.Path) > 0 && v.Type != "array" && v.Type != "object" {
			c.refErr(s, n, "values.%s is a %s; it has no fields or items", n.Name, v.Type)
		}
		c.dep(s, "values."+n.Name, "reference")
	case *subst.DataSource:
		d, ok := c.ds[n.Name]
		if !ok {
			c.refErr(s, n, "datasources.%s is not defined; add it to datasources", n.Name)
			return
		}
		typ, ok := d.exports[n.Field]
		if !ok {
			c.refErr(s, n, "data source %q does not export %q; add it to its exports", n.Name, n.Field)
		} else if n.Index != nil && typ != "array" {
			c.refErr(s, n, "datasources.%s.%s is a %s; only array fields take an index", n.Name, n.Field, typ)
		}
		c.dep(s, "datasources."+n.Name, "reference")
	case *subst.Child:
		if _, ok := c.inc[n.Name]; !ok {
			c.refErr(s, n, "children.%s is not defined; add it to include", n.Name)
			return
		}
		c.dep(s, "children."+n.Name, "reference")
	case *subst.Resource:
		if c.isFuncRef(n) {
			return
		}
		r, ok := c.res[n.Name]
		if !ok {
			hint := "add it to resources"
			if n.Bare {
				hint = "a name without a prefix is a resource; use variables., values., datasources. or children. for other references"
			}
			c.refErr(s, n, "resource %q is not defined; %s", n.Name, hint)
			return
		}
		if msg := checkResourcePath(n, r.hasEach); msg != "" {
			c.refErr(s, n, "%s", msg)
		}
		c.dep(s, "resources."+n.Name, "reference")
	case *subst.Elem, *subst.ElemIndex:
		if !s.inEach {
			where := "outside a resource with each"
			if s.field == "each" {
				where = "in each itself"
			}
			c.errAtOffset(s.node, n.Pos(), ErrElemOutsideEach, "${%s} is used %s; elem and i only refer to the current item of a resource's each", n, where)
		}
	case *subst.Call:
		c.checkCall(s, n)
		for _, a := range n.Args {
			c.resolveNode(s, a.Value)
		}
	}
}

// checkResourcePath checks the fields accessed on a resource.
func checkResourcePath(n *subst.Resource, hasEach bool) string {
	p := n.Path
	if len(p) > 0 && p[0].IsIndex {
		if !hasEach {
			return fmt.Sprintf("resource %q has no each, so it takes no index", n.Name)
		}
		p = p[1:]
	}
	if len(p) == 0 {
		return ""
	}
	switch p[0].Name {
	case "state", "spec":
		if p[0].IsIndex {
			break
		}
		return ""
	case "metadata":
		if len(p) == 1 || slices.Contains([]string{"displayName", "labels", "annotations", "custom"}, p[1].Name) && !p[1].IsIndex {
			return ""
		}
		return fmt.Sprintf("resource metadata fields are displayName, labels, annotations and custom; found %s", p[1])
	}
	return fmt.Sprintf("resource fields are accessed through .state, .spec or .metadata; found %s in %s", p[0], n)
}

// typeOf infers what a substitution yields (TAny when unknown).
func (c *checker) typeOf(n subst.Node) Type {
	switch n := n.(type) {
	case *subst.Literal:
		switch n.Kind {
		case subst.StringLit:
			return TString
		case subst.IntLit:
			return TInt
		case subst.FloatLit:
			return TFloat
		}
		return TBool
	case *subst.Variable:
		if v, ok := c.vars[n.Name]; ok {
			return typeOfName(v.Type)
		}
	case *subst.Value:
		if v, ok := c.values[n.Name]; ok && len(n.Path) == 0 {
			return typeOfName(v.Type)
		}
	case *subst.DataSource:
		if d, ok := c.ds[n.Name]; ok && n.Index == nil {
			if t, ok := d.exports[n.Field]; ok && t != "" {
				return typeOfName(t)
			}
		}
		if n.Index != nil {
			return TString | TInt | TFloat | TBool
		}
	case *subst.ElemIndex:
		return TInt
	case *subst.Resource:
		if c.isFuncRef(n) {
			return TFunc
		}
		return TAny &^ TFunc
	case *subst.Call:
		if n.Name == "normalize" && len(n.Args) == 1 && len(n.Path) == 0 {
			return c.typeOf(n.Args[0].Value) // the argument's type, normalized
		}
		if f, ok := coreFunctions[n.Name]; ok && len(n.Path) == 0 {
			return f.Return
		}
	}
	return TAny &^ TFunc
}

// checkCall checks a call against its core function definition.
func (c *checker) checkCall(s *site, call *subst.Call) {
	f, ok := coreFunctions[call.Name]
	if !ok {
		c.errAtOffset(s.node, call.Pos(), ErrFunction, "%s() is not a core function; see the specification's core function definitions (for example len, join, map)", call.Name)
		return
	}
	n := len(call.Args)
	if f.Named {
		seen := map[string]bool{}
		for i, a := range call.Args {
			if a.Name == "" {
				c.errAtOffset(s.node, a.Value.Pos(), ErrFunction, "argument %d of %s() must be named, as in %s(id = \"x\")", i+1, f.Name, f.Name)
			} else if seen[a.Name] {
				c.errAtOffset(s.node, a.Value.Pos(), ErrFunction, "%s() gets the attribute %q twice", f.Name, a.Name)
			}
			seen[a.Name] = true
		}
	}
	if f.Variadic != nil {
		if n < f.MinArgs {
			c.errAtOffset(s.node, call.Pos(), ErrFunction, "%s() takes %s, got %d", f.Name, f.Arity(), n)
		}
		for i, a := range call.Args {
			c.checkArg(s, f, i, *f.Variadic, a.Value)
		}
		return
	}
	lo, hi := f.argRange()
	if n < lo || n > hi {
		c.errAtOffset(s.node, call.Pos(), ErrFunction, "%s() takes %s, got %d", f.Name, f.Arity(), n)
	}
	for i, a := range call.Args {
		if i < len(f.Params) {
			c.checkArg(s, f, i, f.Params[i], a.Value)
		}
	}
	if f.Name == "link" {
		for _, a := range call.Args {
			if l, ok := a.Value.(*subst.Literal); ok && l.Kind == subst.StringLit {
				if _, ok := c.res[l.Str]; !ok {
					c.refErr(s, l, "link(): resource %q is not defined", l.Str)
					continue
				}
				c.dep(s, "resources."+l.Str, "link()")
			}
		}
	}
}

func (c *checker) checkArg(s *site, f *Function, i int, p Param, arg subst.Node) {
	t := c.typeOf(arg)
	if t&p.Type == 0 {
		c.errAtOffset(s.node, arg.Pos(), ErrFunction, "argument %d (%s) of %s() must be %s, found %s", i+1, p.Label, f.Name, p.Type, t)
		return
	}
	if l, ok := arg.(*subst.Literal); ok && p.Choices != nil && l.Kind == subst.StringLit && !slices.Contains(p.Choices, l.Str) {
		c.errAtOffset(s.node, arg.Pos(), ErrFunction, "argument %d (%s) of %s() is %q; choose from %s", i+1, p.Label, f.Name, l.Str, quoteList(p.Choices))
	}
}

// --- dependency graph ---

// namespace is a resource type without its last segment: aws/dynamodb/table
// gives aws/dynamodb.
func namespace(typ string) string {
	if i := strings.LastIndex(typ, "/"); i > 0 {
		return typ[:i]
	}
	return typ
}

// linkEdges adds an edge for every link a linkSelector forms. Without a
// provider registry to say which links are hard (ordered), this package
// takes a link between two different resource types of one namespace (the
// parts of one service, such as aws/dynamodb/table and aws/dynamodb/stream)
// as soft, and every other link as hard, with the selecting resource
// depending on the selected one.
func (c *checker) linkEdges() {
	names := slices.Sorted(maps.Keys(c.res))
	for _, a := range names {
		ra := c.res[a]
		if len(ra.selector) == 0 {
			continue
		}
		for _, b := range names {
			rb := c.res[b]
			if a == b || !matches(ra.selector, rb.labels) {
				continue
			}
			if ra.typ != rb.typ && namespace(ra.typ) == namespace(rb.typ) {
				continue
			}
			c.edges["resources."+a] = append(c.edges["resources."+a], edge{to: "resources." + b, why: "link"})
		}
	}
	for _, a := range names {
		for _, d := range c.res[a].dependsOn {
			if _, ok := c.res[d.Value]; !ok {
				c.errAt(d, ErrReference, "resource %q depends on %q, which is not defined", a, d.Value)
				continue
			}
			c.edges["resources."+a] = append(c.edges["resources."+a], edge{to: "resources." + d.Value, why: "dependsOn"})
		}
	}
}

func matches(selector, labels map[string]string) bool {
	if len(labels) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// findCycles reports each strongly connected group of graph nodes (values,
// resources, data sources, children) once.
func (c *checker) findCycles() {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	reported := map[string]bool{}
	var visit func(n string)
	visit = func(n string) {
		color[n] = grey
		stack = append(stack, n)
		for _, e := range c.edges[n] {
			if _, isNode := c.keyNode[e.to]; !isNode {
				continue
			}
			switch color[e.to] {
			case white:
				visit(e.to)
			case grey:
				i := slices.Index(stack, e.to)
				cycle := append(slices.Clone(stack[i:]), e.to)
				key := slices.Clone(cycle[:len(cycle)-1])
				slices.Sort(key)
				k := strings.Join(key, ",")
				if !reported[k] {
					reported[k] = true
					c.errAt(c.keyNode[e.to], ErrReferenceCycle, "reference cycle: %s (through references, links or dependsOn); break one of the references", strings.Join(cycle, " -> "))
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
	}
	for _, n := range c.order {
		if color[n] == white {
			visit(n)
		}
	}
}

// checkEachDeps reports each fields that depend, directly or through values
// and data sources, on resources or child blueprints.
func (c *checker) checkEachDeps() {
	for _, s := range c.sites {
		if s.field != "each" {
			continue
		}
		seen := map[string]bool{}
		queue := slices.Clone(s.refs)
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			if seen[n] {
				continue
			}
			seen[n] = true
			kind, name, _ := strings.Cut(n, ".")
			switch kind {
			case "resources", "children":
				elem := map[string]string{"resources": "resource", "children": "child"}[kind]
				via := ""
				if !slices.Contains(s.refs, n) {
					via = " (through values or data sources)"
				}
				c.errAt(s.node, ErrEachDependency, "element type %q can not be a dependency for the \"each\" property of %s: it depends on %s%s, known only at deploy time; derive each from variables, values or data sources", elem, s.owner, n, via)
				_ = name
				queue = nil
			case "values", "datasources":
				for _, e := range c.edges[n] {
					queue = append(queue, e.to)
				}
			}
		}
	}
}
