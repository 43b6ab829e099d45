package assembly

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/internal/suggest"
)

// validate checks a parsed manifest: logical IDs, type specifiers,
// environments, metadata, missing entries, the properties of the known
// droplet kinds, references and the dependency graph; then, when files is
// not nil, every path property against the archive's files.
func (c *checker) validate(m *Manifest, files *FileSet, rep *Report) {
	if len(m.Droplets) > MaxDroplets {
		c.add(ruleTooLarge, "", "droplets", nil, "%d droplets, at most %d allowed", len(m.Droplets), MaxDroplets)
		return
	}
	g := &Graph{deps: map[string][]Edge{}}
	ids := m.IDs()
	for _, id := range ids {
		d := m.Droplets[id]
		if !ValidLogicalID(id) {
			c.add(ruleLogicalID, id, "", nil, "logical ID %q must match ^[A-Za-z0-9+/_-]{1,256}$ (no dots, spaces or other punctuation)", id)
			continue
		}
		if d == nil {
			c.add(ruleSchema, id, "", nil, "want an object, got null")
			continue
		}
		g.IDs = append(g.IDs, id)
		kind := c.dropletType(id, d)
		c.environment(id, d)
		c.metadata(id, d)
		for i, dep := range d.DependsOn {
			if _, ok := m.Droplets[dep]; !ok {
				c.add(ruleRefDroplet, id, fmt.Sprintf("dependsOn[%d]", i), nil, "depends on %q, which is not a droplet of this assembly%s", dep, suggest.Hint(dep, ids))
				continue
			}
			g.add(Edge{From: id, To: dep, Via: "dependsOn", field: "dependsOn"})
		}
		if kind != nil {
			c.properties(id, d, kind)
			if files != nil {
				c.paths(id, d, kind, files)
			}
		}
		c.references(m, id, d, ids, g)
	}
	c.targets(m)
	c.stacks(m)
	for _, key := range slices.Sorted(maps.Keys(m.Missing)) {
		ms, field := m.Missing[key], "missing."+key
		switch {
		case ms == nil:
			c.add(ruleSchema, "", field, nil, "want an object, got null")
		case ms.Provider == "":
			c.add(ruleSchema, "", field+".provider", nil, "empty provider")
		case ms.Props == nil:
			c.add(ruleSchema, "", field+".props", nil, "missing props")
		}
	}
	if cyc := g.Cycle(); cyc != nil {
		c.add(ruleCycle, cyc[0], g.edgeField(cyc[0], cyc[1]), nil, "dependency cycle %s", strings.Join(cyc, " -> "))
		return
	}
	rep.Graph, rep.Order = g, g.order()
}

// dropletType checks the type specifier and returns the droplet's kind
// when it is a known one.
func (c *checker) dropletType(id string, d *Droplet) *droplets.Kind {
	sp, err := droplets.ParseSpecifier(d.Type)
	switch {
	case d.Type == "":
		c.add(ruleTypeSpecifier, id, "type", nil, "missing type specifier (want protocol://path, e.g. %s)", droplets.StackType)
	case err != nil:
		c.add(ruleTypeSpecifier, id, "type", err, "%v", err)
	case !sp.Known():
		c.add(ruleUnknownProto, id, "type", nil, "unknown protocol %q: the droplet's kind is not checked", sp.Protocol)
	default:
		if k, ok := droplets.Lookup(sp); ok {
			return k
		}
		c.add(ruleUnknownKind, id, "type", nil, "unknown droplet kind %s: its properties and attributes are not checked", d.Type)
	}
	return nil
}

func (c *checker) environment(id string, d *Droplet) {
	switch env, err := ParseEnvironment(d.Environment); {
	case d.Environment == "":
		c.add(ruleEnvironment, id, "environment", nil, "missing environment (want e.g. aws://123456789012/eu-west-1)")
	case err != nil:
		c.add(ruleEnvironment, id, "environment", err, "%v", err)
	case !env.Known():
		c.add(ruleUnknownProto, id, "environment", nil, "unknown protocol %q in environment %s", env.Protocol, d.Environment)
	}
}

// metadata checks the entries and turns warning and error messages into
// notes.
func (c *checker) metadata(id string, d *Droplet) {
	for _, key := range slices.Sorted(maps.Keys(d.Metadata)) {
		md := d.Metadata[key]
		field := "metadata." + key
		switch {
		case md == nil:
			c.add(ruleSchema, id, field, nil, "want an object, got null")
		case md.Kind == "":
			c.add(ruleSchema, id, field+".kind", nil, "empty metadata kind")
		case md.Kind == "warning" || md.Kind == "error":
			msg, ok := md.Value.(string)
			if !ok {
				msg = fmt.Sprint(md.Value)
			}
			if md.Kind == "error" {
				msg = "error: " + msg
			}
			c.add(ruleMetadata, id, field, nil, "%s", msg)
		}
	}
}

// properties checks a droplet of a known kind against the kind's table.
func (c *checker) properties(id string, d *Droplet, kind *droplets.Kind) {
	for _, e := range unjoin(kind.CheckProperties(d.Properties)) {
		var pe *droplets.PropertyError
		if !errors.As(e, &pe) {
			c.add(rulePropertyType, id, "properties", e, "%v", e)
			continue
		}
		r := rulePropertyType
		if pe.Missing {
			r = rulePropertyNeeded
		}
		c.add(r, id, "properties."+pe.Property, pe.Err, "%v", pe.Err)
	}
	for _, e := range kind.UnknownProperties(d.Properties) {
		pe := e.(*droplets.PropertyError)
		c.add(ruleUnknownProp, id, "properties."+pe.Property, pe.Err, "%v", pe.Err)
	}
}

// paths checks that every path property of a droplet of a known kind
// names a file (or a folder holding files) inside the archive, and that
// every value naming a file below that folder (InDirectory) does.
func (c *checker) paths(id string, d *Droplet, kind *droplets.Kind, files *FileSet) {
	folder := "" // the droplet's folder, once it is known to hold files
	for _, p := range kind.Properties {
		v, ok := d.Properties[p.Name].(string)
		if p.Path == 0 || !ok {
			continue
		}
		field := "properties." + p.Name
		name := v
		if p.Path == droplets.PathDirectory {
			name = strings.TrimSuffix(v, "/")
		}
		if why := pathProblem(name, "the archive"); why != "" {
			c.add(rulePathUnsafe, id, field, nil, "%q is %s: name a file inside the archive, relative to its root", v, why)
			continue
		}
		switch {
		case name == SignatureName:
			c.add(ruleMissingFile, id, field, nil, "names %s, which holds the signature, not a file of the assembly", SignatureName)
		case p.Path == droplets.PathFile && !files.Has(name):
			if files.HasDir(name) {
				c.add(ruleMissingFile, id, field, nil, "names %q, a folder in the archive, where a file is needed", v)
			} else {
				c.add(ruleMissingFile, id, field, nil, "names %q, which is not a file in the archive", v)
			}
		case p.Path == droplets.PathDirectory && !files.HasDir(name):
			if files.Has(name) {
				c.add(ruleMissingFile, id, field, nil, "names %q, a file in the archive, where a folder is needed", v)
			} else {
				c.add(ruleMissingFile, id, field, nil, "names folder %q, which holds no file in the archive", v)
			}
		case p.Path == droplets.PathDirectory:
			folder = name
		}
	}
	if folder == "" {
		return
	}
	for _, p := range kind.Properties {
		if !p.InDirectory {
			continue
		}
		field := "properties." + p.Name
		switch v := d.Properties[p.Name].(type) {
		case string:
			c.inFolder(id, field, folder, v, files)
		case []any:
			for i, e := range v {
				if s, ok := e.(string); ok {
					c.inFolder(id, fmt.Sprintf("%s[%d]", field, i), folder, s, files)
				}
			}
		}
	}
}

// inFolder checks that v, relative to folder, names a file below it.
func (c *checker) inFolder(id, field, folder, v string, files *FileSet) {
	if why := pathProblem(v, "the folder"); why != "" {
		c.add(rulePathUnsafe, id, field, nil, "%q is %s: name a file below %q, relative to it", v, why, folder)
		return
	}
	switch name := folder + "/" + v; {
	case files.Has(name):
	case files.HasDir(name):
		c.add(ruleMissingFile, id, field, nil, "names %q, a folder in %q, where a file is needed", v, folder)
	default:
		c.add(ruleMissingFile, id, field, nil, "names %q, which is not a file in folder %q", v, folder)
	}
}

// pathProblem says why name is not a plain path inside within (the
// archive, or a folder of it), or "".
func pathProblem(name, within string) string {
	switch {
	case name == "":
		return "empty"
	case strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || (len(name) >= 2 && name[1] == ':'):
		return "an absolute path"
	}
	for _, seg := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg == ".." {
			return `outside ` + within + ` ("..")`
		}
	}
	if CheckName(name) != nil {
		return "not a plain archive path (no ./, //, backslash or control characters)"
	}
	return ""
}

// references checks every reference in a droplet's properties and adds
// its edges to the graph.
func (c *checker) references(m *Manifest, id string, d *Droplet, ids []string, g *Graph) {
	refs, err := ScanProperties(d.Properties)
	if err != nil {
		var fe *FieldRefError
		errors.As(err, &fe)
		c.add(ruleRefSyntax, id, "properties."+fe.Field, fe.Err, "%v", fe.Err)
	}
	for _, r := range refs {
		field := "properties." + r.Field
		if c.targetReference(m, id, field, r) {
			continue // a target's value: no droplet, no edge
		}
		target, ok := m.Droplets[r.Droplet]
		if !ok {
			c.add(ruleRefDroplet, id, field, nil, "%s names droplet %q, which is not in this assembly%s", r.Reference, r.Droplet, suggest.Hint(r.Droplet, ids))
			continue
		}
		if target != nil {
			if sp, err := droplets.ParseSpecifier(target.Type); err == nil {
				if k, ok := droplets.Lookup(sp); ok {
					if err := k.CheckAttribute(r.Attribute); err != nil {
						c.add(ruleRefAttribute, id, field, err, "%s: %v", r.Reference, err)
						continue
					}
				}
			}
		}
		g.add(Edge{From: id, To: r.Droplet, Via: r.Reference.String(), field: field})
	}
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// An Edge says droplet From depends on droplet To, because of Via: the
// word "dependsOn" or a reference token.
type Edge struct {
	From, To string
	Via      string
	field    string // where From says so: "dependsOn", "properties.x"
}

// A Graph is the droplets' dependency graph.
type Graph struct {
	// IDs lists the droplets, sorted.
	IDs  []string
	deps map[string][]Edge
}

func (g *Graph) add(e Edge) {
	for _, x := range g.deps[e.From] {
		if x.To == e.To && x.Via == e.Via {
			return
		}
	}
	g.deps[e.From] = append(g.deps[e.From], e)
}

// edgeField is where from says it depends on to: "dependsOn" when it
// does so there, else the first property (sorted) that references to.
func (g *Graph) edgeField(from, to string) string {
	field := ""
	for _, e := range g.deps[from] {
		switch {
		case e.To != to:
		case e.field == "dependsOn":
			return e.field
		case field == "" || e.field < field:
			field = e.field
		}
	}
	return field
}

// Edges lists every edge, sorted by From, To, Via.
func (g *Graph) Edges() []Edge {
	var es []Edge
	for _, id := range g.IDs {
		es = append(es, g.deps[id]...)
	}
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.To != b.To {
			return a.To < b.To
		}
		return a.Via < b.Via
	})
	return es
}

// Dependencies lists the droplets id depends on, sorted, without repeats.
func (g *Graph) Dependencies(id string) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range g.deps[id] {
		if !seen[e.To] {
			seen[e.To] = true
			out = append(out, e.To)
		}
	}
	sort.Strings(out)
	return out
}

// Order returns a deploy order: every droplet after its dependencies, ties
// broken by logical ID. A cycle is an error (wrapping ErrCycle) that names
// it: "Network -> Service -> Network".
func (g *Graph) Order() ([]string, error) {
	if c := g.Cycle(); c != nil {
		f := Finding{Severity: Error, Rule: ruleCycle.Code, Droplet: c[0], Field: g.edgeField(c[0], c[1]), Message: "dependency cycle " + strings.Join(c, " -> ")}
		f.Err = &ruleError{msg: f.Message, sentinel: ErrCycle}
		return nil, &CheckError{Findings: []Finding{f}}
	}
	return g.order(), nil
}

// order is the deploy order of an acyclic graph.
func (g *Graph) order() []string {
	pending := map[string]int{}
	users := map[string][]string{}
	for _, id := range g.IDs {
		deps := g.Dependencies(id)
		pending[id] = len(deps)
		for _, d := range deps {
			users[d] = append(users[d], id)
		}
	}
	var ready []string
	for _, id := range g.IDs {
		if pending[id] == 0 {
			ready = append(ready, id)
		}
	}
	order := make([]string, 0, len(g.IDs))
	for len(ready) > 0 {
		// ready stays sorted: take the smallest, insert new ones in place.
		id := ready[0]
		ready = ready[1:]
		order = append(order, id)
		for _, u := range users[id] {
			pending[u]--
			if pending[u] == 0 {
				i := sort.SearchStrings(ready, u)
				ready = append(ready, "")
				copy(ready[i+1:], ready[i:])
				ready[i] = u
			}
		}
	}
	return order
}

// Cycle returns a dependency cycle as a chain that starts and ends with the
// same droplet, or nil. The search visits droplets and edges in sorted
// order, so the same graph always names the same cycle.
func (g *Graph) Cycle() []string {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var visit func(id string) []string
	visit = func(id string) []string {
		color[id] = grey
		stack = append(stack, id)
		for _, dep := range g.Dependencies(id) {
			switch color[dep] {
			case grey:
				i := len(stack) - 1
				for stack[i] != dep {
					i--
				}
				return append(append([]string{}, stack[i:]...), dep)
			case white:
				if c := visit(dep); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[id] = black
		return nil
	}
	for _, id := range g.IDs {
		if color[id] == white {
			if c := visit(id); c != nil {
				return c
			}
		}
	}
	return nil
}
