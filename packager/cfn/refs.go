package cfn

import (
	"fmt"
	"iter"
	"maps"
	"regexp"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/internal/suggest"
)

// nameKind is what a reference names.
type nameKind uint8

const (
	refKind  nameKind = iota + 1 // Ref, or ${Name} in a Sub: a parameter, resource or pseudo parameter
	attKind                      // Fn::GetAtt, or ${Name.Attr} in a Sub: a resource
	depKind                      // DependsOn: a resource
	condKind                     // Condition, Fn::If: a condition
)

// pseudoParameters are the names CloudFormation defines in every template.
var pseudoParameters = []string{
	"AWS::AccountId", "AWS::NotificationARNs", "AWS::NoValue", "AWS::Partition",
	"AWS::Region", "AWS::StackId", "AWS::StackName", "AWS::URLSuffix",
}

// place is where a reference left as written was written: the scope
// (file, module chain, local names) and the line and column.
type place struct {
	sc        *scope
	line, col int
}

type placeKey struct {
	kind nameKind
	name string
}

// note records where a reference that this scope does not define was
// written, so that a dangling one can be reported at its place in the
// source rather than in the packaged output.
func (e *engine) note(kind nameKind, name string, sc *scope, at *yaml.Node) {
	if at == nil || name != "AWS::NotificationARNs" && slices.Contains(pseudoParameters, name) {
		return // always defined; AWS::NotificationARNs is placed for the Sub check (a list)
	}
	if e.places == nil {
		e.places = map[placeKey][]place{}
	}
	k := placeKey{kind, name}
	e.places[k] = append(e.places[k], place{sc: sc, line: at.Line, col: at.Column})
}

// names holds what the packaged template defines, for the reference check.
type names struct {
	params, resources, conds map[string]bool
	// lists are the parameters whose Ref is a list at deploy time.
	lists map[string]bool
	// patterns match the logical IDs CloudFormation's own Fn::ForEach will
	// make from a collection known only at deploy time.
	resPatterns, condPatterns []*regexp.Regexp
	// prefixes: a name starting with one of them may be made by a
	// transform (AWS::Serverless resources make Name + Role, ...).
	prefixes []string
}

// checkRefs checks that every Ref, Fn::GetAtt, DependsOn, Condition and
// Sub variable of the packaged template names something in it: a
// parameter, resource, condition, pseudo parameter or Fn::ForEach
// identifier in scope. A dangling one is ErrDangling, placed where it was
// written, with the nearest existing name. A Transform other than
// AWS::LanguageExtensions and AWS::Serverless-2016-10-31, or an inline
// Fn::Transform, may add any resource, so then nothing is checked.
func (e *engine) checkRefs(top *scope, out *yaml.Node) error {
	ns := &names{params: map[string]bool{}, resources: map[string]bool{}, conds: map[string]bool{},
		lists: map[string]bool{"AWS::NotificationARNs": true}}
	for _, t := range transformNames(mapGet(out, "Transform")) {
		switch t {
		case "AWS::LanguageExtensions":
		case "AWS::Serverless-2016-10-31":
			ns.prefixes = append(ns.prefixes, "Serverless")
		default:
			return nil // a macro may define names we cannot know
		}
	}
	if hasKey(mapGet(out, "Resources"), "Fn::Transform", 0) {
		return nil // an inline macro (AWS::Include, ...) may define names too
	}
	for _, p := range e.opts.Parameters {
		ns.params[p] = true
	}
	for k, v := range entries(mapGet(out, "Parameters")) {
		ns.params[k.Value] = true
		if deployList(mapGet(v, "Type")) {
			ns.lists[k.Value] = true
		}
	}
	ns.collect(mapGet(out, "Resources"), ns.resources, &ns.resPatterns, nil)
	ns.collect(mapGet(out, "Conditions"), ns.conds, &ns.condPatterns, nil)
	if ns.prefixes != nil {
		for k, v := range entries(mapGet(out, "Resources")) {
			if t := mapGet(v, "Type"); isStr(t) && strings.HasPrefix(t.Value, "AWS::Serverless::") {
				ns.prefixes = append(ns.prefixes, k.Value)
			}
		}
	}
	c := &refChecker{e: e, top: top, ns: ns}
	c.section(mapGet(out, "Conditions"), c.condition, nil)
	c.section(mapGet(out, "Resources"), c.resource, nil)
	c.section(mapGet(out, "Outputs"), c.output, nil)
	return c.err
}

// deployList reports whether a parameter of the packaged template with
// Type t is a list when CloudFormation resolves its Ref: the list types a
// module parameter may have, and SSM parameters holding lists.
func deployList(t *yaml.Node) bool {
	if !isStr(t) {
		return false
	}
	if isListType(t) {
		return true
	}
	v, ok := strings.CutPrefix(t.Value, "AWS::SSM::Parameter::Value<")
	return ok && (strings.HasPrefix(v, "List<") || v == "CommaDelimitedList>")
}

// hasKey reports whether a mapping in n has key k.
func hasKey(n *yaml.Node, k string, depth int) bool {
	if n == nil || depth > 1000 {
		return false
	}
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 && c.Value == k {
			return true
		}
		if hasKey(c, k, depth+1) {
			return true
		}
	}
	return false
}

func transformNames(t *yaml.Node) []string {
	if t == nil {
		return nil
	}
	items := []*yaml.Node{t}
	if t.Kind == yaml.SequenceNode {
		items = t.Content
	}
	var out []string
	for _, x := range items {
		if isStr(x) {
			out = append(out, x.Value)
		} else if x.Kind == yaml.MappingNode {
			if n := mapGet(x, "Name"); isStr(n) {
				out = append(out, n.Value) // {Name: Macro, Parameters: ...}
				continue
			}
			out = append(out, "?")
		}
	}
	return out
}

// entries yields the keys and values of a mapping, in order (nothing for
// anything else).
func entries(m *yaml.Node) iter.Seq2[*yaml.Node, *yaml.Node] {
	return func(yield func(*yaml.Node, *yaml.Node) bool) {
		if m == nil || m.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if !yield(m.Content[i], m.Content[i+1]) {
				return
			}
		}
	}
}

// loop splits a kept Fn::ForEach::Name entry into its identifier,
// collection and template; ok is false when it is malformed.
func loop(k, v *yaml.Node) (string, *yaml.Node, *yaml.Node, bool) {
	if !strings.HasPrefix(k.Value, "Fn::ForEach::") || v.Kind != yaml.SequenceNode || len(v.Content) != 3 || !isStr(v.Content[0]) || v.Content[2].Kind != yaml.MappingNode {
		return "", nil, nil, false
	}
	return v.Content[0].Value, v.Content[1], v.Content[2], true
}

// collect adds the names a section defines: its keys, and those
// CloudFormation's Fn::ForEach will make (each item when the collection is
// a literal list, else a pattern). subst holds outer loops' known values.
func (ns *names) collect(sec *yaml.Node, set map[string]bool, pats *[]*regexp.Regexp, subst map[string]string) {
	for k, v := range entries(sec) {
		id, coll, tmpl, ok := loop(k, v)
		if !ok {
			name := loopName(k.Value, subst)
			if strings.Contains(name, "{") {
				if re, err := regexp.Compile("^" + loopPattern(name) + "$"); err == nil {
					*pats = append(*pats, re)
				}
			} else {
				set[name] = true
			}
			continue
		}
		var items []string
		known := coll.Kind == yaml.SequenceNode && !isIntrinsic(coll)
		for _, x := range coll.Content {
			if !isScalar(x) {
				known = false
			}
			items = append(items, x.Value)
		}
		if !known {
			ns.collect(tmpl, set, pats, subst)
			continue
		}
		for _, it := range items {
			inner := maps.Clone(subst)
			if inner == nil {
				inner = map[string]string{}
			}
			inner[id] = it
			ns.collect(tmpl, set, pats, inner)
		}
	}
}

// loopName replaces ${Id} and &{Id} of known loop values in a key.
func loopName(key string, subst map[string]string) string {
	for id, v := range subst {
		key = strings.ReplaceAll(key, "${"+id+"}", v)
		key = strings.ReplaceAll(key, "&{"+id+"}", alnum(v))
	}
	return key
}

var loopVar = regexp.MustCompile(`[$&]\\\{[A-Za-z0-9_:.]+\\\}`)

// loopPattern turns a key with unknown ${Id} or &{Id} into a regexp.
func loopPattern(key string) string {
	return loopVar.ReplaceAllString(regexp.QuoteMeta(key), `[A-Za-z0-9]*`)
}

type refChecker struct {
	e   *engine
	top *scope
	ns  *names
	err error
}

// section checks each entry of a section with f; Fn::ForEach entries bring
// their identifier into scope for their template's entries.
func (c *refChecker) section(sec *yaml.Node, f func(v *yaml.Node, ids []string), ids []string) {
	for k, v := range entries(sec) {
		if c.err != nil {
			return
		}
		if id, coll, tmpl, ok := loop(k, v); ok {
			c.value(coll, ids)
			c.section(tmpl, f, append(slices.Clip(ids), id))
			continue
		}
		f(v, ids)
	}
}

func (c *refChecker) resource(r *yaml.Node, ids []string) {
	for k, v := range entries(r) {
		switch k.Value {
		case "Type":
		case "Condition":
			c.name(condKind, "Condition", v, v, ids)
		case "DependsOn":
			items := []*yaml.Node{v}
			if v.Kind == yaml.SequenceNode {
				items = v.Content
			}
			for _, x := range items {
				c.name(depKind, "DependsOn", x, x, ids)
			}
		default:
			c.value(v, ids)
		}
	}
}

func (c *refChecker) output(o *yaml.Node, ids []string) {
	for k, v := range entries(o) {
		if k.Value == "Condition" {
			c.name(condKind, "Condition", v, v, ids)
		} else {
			c.value(v, ids)
		}
	}
	if o.Kind != yaml.MappingNode {
		c.value(o, ids)
	}
}

// condition checks a condition expression: Condition names a condition.
func (c *refChecker) condition(n *yaml.Node, ids []string) {
	if k, v, ok := single(n); ok && k == "Condition" {
		c.name(condKind, "Condition", v, n, ids)
		return
	}
	if k, v, ok := single(n); ok && strings.HasPrefix(k, "Fn::") && v.Kind == yaml.SequenceNode {
		for _, x := range v.Content {
			if x.Kind == yaml.MappingNode {
				c.condition(x, ids)
			} else {
				c.value(x, ids)
			}
		}
		return
	}
	c.value(n, ids)
}

// value checks the references in a value.
func (c *refChecker) value(n *yaml.Node, ids []string) {
	if c.err != nil || n == nil {
		return
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, x := range n.Content {
			c.value(x, ids)
		}
		return
	case yaml.MappingNode:
	default:
		return
	}
	if k, v, ok := single(n); ok {
		switch k {
		case "Ref":
			c.name(refKind, "Ref", v, n, ids)
			return
		case "Fn::GetAtt":
			if v.Kind == yaml.SequenceNode && len(v.Content) == 2 {
				c.name(attKind, "Fn::GetAtt", v.Content[0], n, ids)
				c.value(v.Content[1], ids)
			}
			return
		case "Fn::Sub":
			c.sub(n, v, ids)
			return
		case "Fn::If":
			if v.Kind == yaml.SequenceNode && len(v.Content) == 3 {
				c.name(condKind, "Fn::If", v.Content[0], v.Content[0], ids)
				c.value(v.Content[1], ids)
				c.value(v.Content[2], ids)
			}
			return
		}
	}
	c.section(n, func(v *yaml.Node, ids []string) { c.value(v, ids) }, ids)
}

// sub checks the variables of a Fn::Sub string that its own variable map
// does not define.
func (c *refChecker) sub(n, arg *yaml.Node, ids []string) {
	str, vars := arg, (*yaml.Node)(nil)
	if arg.Kind == yaml.SequenceNode && len(arg.Content) == 2 {
		str, vars = arg.Content[0], arg.Content[1]
		c.value(vars, ids)
		for k, v := range entries(vars) {
			if r, x, ok := single(v); ok && r == "Ref" && isStr(x) && c.ns.lists[x.Value] && !slices.Contains(ids, x.Value) {
				c.list(refKind, "Fn::Sub variable "+k.Value, x.Value, v)
			}
		}
	}
	if !isStr(str) {
		return
	}
	rest := str.Value
	for {
		i := strings.Index(rest, "${")
		if i < 0 {
			return
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return
		}
		v := rest[i+2 : i+j]
		rest = rest[i+j+1:]
		if strings.HasPrefix(v, "!") || mapGet(vars, v) != nil {
			continue
		}
		kind, what := refKind, "${"+v+"} in Fn::Sub"
		if base, _, ok := strings.Cut(v, "."); ok {
			kind, v = attKind, base
		} else if c.ns.lists[v] && !slices.Contains(ids, v) {
			c.list(kind, what, v, n)
		}
		c.name(kind, what, strNode(v), n, ids)
	}
}

// name checks one name written at at (n holds the name; what says how it
// is used, for the message).
func (c *refChecker) name(kind nameKind, what string, n, at *yaml.Node, ids []string) {
	if c.err != nil || !isStr(n) {
		return
	}
	v := n.Value
	if strings.ContainsAny(v, "${}&") || c.defined(kind, v, ids) {
		return
	}
	c.err = c.dangling(kind, what, v, at)
}

func (c *refChecker) defined(kind nameKind, v string, ids []string) bool {
	ns := c.ns
	switch kind {
	case condKind:
		return ns.conds[v] || matches(ns.condPatterns, v)
	case refKind:
		if ns.params[v] || slices.Contains(pseudoParameters, v) || slices.Contains(ids, v) {
			return true
		}
	}
	if ns.resources[v] || matches(ns.resPatterns, v) {
		return true
	}
	for _, p := range ns.prefixes {
		if strings.HasPrefix(v, p) {
			return true
		}
	}
	return false
}

func matches(pats []*regexp.Regexp, v string) bool {
	for _, re := range pats {
		if re.MatchString(v) {
			return true
		}
	}
	return false
}

var kindWords = map[nameKind]string{
	refKind:  "no parameter, resource or pseudo parameter",
	attKind:  "no resource",
	depKind:  "no resource",
	condKind: "no condition",
}

// list reports a Sub variable (what) that is the list parameter v: a Sub
// can only write text.
func (c *refChecker) list(kind nameKind, what, v string, at *yaml.Node) {
	if c.err != nil {
		return
	}
	sc, line, col := c.place(kind, v, at)
	param := "parameter " + v
	if strings.HasPrefix(v, "AWS::") {
		param = v // a pseudo parameter
	}
	msg := fmt.Sprintf("%s is a list (%s); join it (!Join [\",\", !Ref %s]) or pick one (!Select [0, !Ref %s])", what, param, v, v)
	c.err = &Error{File: sc.file, Line: line, Col: col, Msg: msg, Chain: sc.chain, Err: ErrInvalid}
}

// place returns where name v of kind was written: where the expansion
// recorded it, else at (a node of the top template).
func (c *refChecker) place(kind nameKind, v string, at *yaml.Node) (*scope, int, int) {
	sc, line, col := c.top, at.Line, at.Column
	if ps := c.e.places[placeKey{kind, v}]; len(ps) > 0 {
		p := ps[0]
		for _, q := range ps {
			if q.line == line && q.col == col {
				p = q
				break
			}
		}
		sc, line, col = p.sc, p.line, p.col
	}
	return sc, line, col
}

// dangling builds the error for name v of kind, placed where it was
// written when the expansion recorded that, else at its place in the top
// template.
func (c *refChecker) dangling(kind nameKind, what, v string, at *yaml.Node) error {
	sc, line, col := c.place(kind, v, at)
	if !strings.HasPrefix(what, "$") {
		what += " " + v
	}
	msg := fmt.Sprintf("%s: the packaged template has %s named %s", what, kindWords[kind], v)
	if m := sc.mods[v]; m != nil && kind == refKind {
		msg = fmt.Sprintf("%s: %s is a module, not a resource; name one of its outputs (!GetAtt %s.Output or ${%s.Output})", what, v, v, v)
		if m.child != nil {
			if outs := keys(mapGet(m.child.t.Root, "Outputs")); len(outs) > 0 {
				msg += ": " + strings.Join(outs, ", ")
			}
		}
	} else if near := closest(v, c.candidates(kind, sc)); near != "" {
		msg += "; the nearest name is " + near
	}
	return &Error{File: sc.file, Line: line, Col: col, Msg: msg, Chain: sc.chain, Err: ErrDangling}
}

// closest returns the candidate nearest to v: the shortest one that ends
// with v (the final name of a module's resource written by its local
// name), else the one at the least edit distance.
func closest(v string, cands []string) string {
	best := ""
	for _, c := range cands {
		if c != v && strings.HasSuffix(c, v) && (best == "" || len(c) < len(best)) {
			best = c
		}
	}
	if best != "" {
		return best
	}
	return suggest.Nearest(v, cands)
}

// candidates lists the names a reference of kind could have meant: those
// of the scope that wrote it first, then the packaged template's.
func (c *refChecker) candidates(kind nameKind, sc *scope) []string {
	var out []string
	add := func(m map[string]bool) {
		out = append(out, slices.Sorted(maps.Keys(m))...)
	}
	if kind == condKind {
		for k := range entries(mapGet(sc.t.Root, "Conditions")) {
			out = append(out, k.Value)
		}
		add(c.ns.conds)
		return out
	}
	if kind == refKind {
		for k := range entries(mapGet(sc.t.Root, "Parameters")) {
			out = append(out, k.Value)
		}
	}
	for k := range entries(mapGet(sc.t.Root, "Resources")) {
		out = append(out, k.Value)
	}
	for _, m := range sc.modOrder {
		out = append(out, m.name)
	}
	if kind == refKind {
		add(c.ns.params)
		out = append(out, pseudoParameters...)
	}
	add(c.ns.resources)
	return out
}
