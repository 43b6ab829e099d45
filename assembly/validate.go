package assembly

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cloud-assembly/assemble/droplets"
)

// A Diagnostic is a message about a valid manifest: a warning found while
// validating it, or a "warning" or "error" metadata entry of a droplet.
type Diagnostic struct {
	Level   string // "warning" or "error"
	Droplet string // logical ID; empty for the manifest as a whole
	Field   string // dotted path inside the droplet, may be empty
	Message string
}

func (d Diagnostic) String() string {
	var b strings.Builder
	if d.Droplet != "" {
		fmt.Fprintf(&b, "droplet %s: ", d.Droplet)
	}
	if d.Field != "" {
		b.WriteString(d.Field + ": ")
	}
	if d.Level == "error" {
		b.WriteString("error: ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// A ValidationError is a problem with one droplet (or the manifest, when
// Droplet is empty) at a field path such as "properties.parameters.Bucket".
// It matches ErrManifest, its class (ErrLogicalID, ErrReference, ...) and
// the underlying error.
type ValidationError struct {
	Droplet string
	Field   string
	Err     error
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	if e.Droplet != "" {
		fmt.Fprintf(&b, "droplet %s: ", e.Droplet)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *ValidationError) Unwrap() []error { return []error{e.Err, ErrManifest} }

// classErr is an error message of a class (ErrCycle, ...) that prints
// without the class's own text.
type classErr struct {
	class error
	msg   string
}

func (e *classErr) Error() string { return e.msg }
func (e *classErr) Unwrap() error { return e.class }

func classf(class error, format string, args ...any) error {
	return &classErr{class, fmt.Sprintf(format, args...)}
}

// A Report is what Validate learns about a valid manifest.
type Report struct {
	// Diagnostics: warnings and metadata messages, by droplet then field.
	Diagnostics []Diagnostic
	// Graph is the dependency graph from dependsOn and references.
	Graph *Graph
	// Order is the deploy order: dependencies first, ties by logical ID.
	Order []string
}

// Validate checks the manifest against the spec and the known droplet
// kinds: logical IDs, type specifiers, environments, metadata, missing
// entries, property types, references (syntax, target, attribute) and the
// dependency graph. Every problem found is returned, joined; each is a
// *ValidationError. Unknown protocols and droplet kinds are warnings.
func (m *Manifest) Validate() (*Report, error) {
	rep := &Report{}
	var errs []error
	fail := func(id, field string, err error) {
		errs = append(errs, &ValidationError{Droplet: id, Field: field, Err: err})
	}
	warn := func(id, field, format string, args ...any) {
		rep.Diagnostics = append(rep.Diagnostics, Diagnostic{Level: "warning", Droplet: id, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if m.Schema != SchemaVersion {
		fail("", "schema", fmt.Errorf("unsupported schema %q, want %q", m.Schema, SchemaVersion))
	}
	if len(m.Droplets) > MaxDroplets {
		return nil, &ValidationError{Field: "droplets", Err: fmt.Errorf("%w: %d droplets, at most %d allowed", ErrTooLarge, len(m.Droplets), MaxDroplets)}
	}
	g := &Graph{deps: map[string][]Edge{}}
	ids := m.IDs()
	for _, id := range ids {
		d := m.Droplets[id]
		if !ValidLogicalID(id) {
			fail(id, "", classf(ErrLogicalID, "logical ID %q must match ^[A-Za-z0-9+/_-]{1,256}$ (no dots, spaces or other punctuation)", id))
			continue
		}
		if d == nil {
			fail(id, "", errors.New("droplet is null"))
			continue
		}
		g.IDs = append(g.IDs, id)
		var kind *droplets.Kind
		switch sp, err := droplets.ParseSpecifier(d.Type); {
		case d.Type == "":
			fail(id, "type", errors.New("missing type specifier"))
		case err != nil:
			fail(id, "type", err)
		case !sp.Known():
			warn(id, "type", "unknown protocol %q: the droplet's kind is not checked", sp.Protocol)
		default:
			k, ok := droplets.Lookup(sp)
			if !ok {
				warn(id, "type", "unknown droplet kind %s: its properties and attributes are not checked", d.Type)
			}
			kind = k
		}
		switch env, err := ParseEnvironment(d.Environment); {
		case d.Environment == "":
			fail(id, "environment", classf(ErrEnvironment, "missing environment (want e.g. aws://123456789012/eu-west-1)"))
		case err != nil:
			fail(id, "environment", err)
		case !env.Known():
			warn(id, "environment", "unknown protocol %q in environment %s", env.Protocol, d.Environment)
		}
		for _, key := range sortedKeys(d.Metadata) {
			md := d.Metadata[key]
			field := "metadata." + key
			switch {
			case md == nil:
				fail(id, field, errors.New("metadata entry is null"))
			case md.Kind == "":
				fail(id, field+".kind", errors.New("empty metadata kind"))
			case md.Kind == "warning" || md.Kind == "error":
				msg, ok := md.Value.(string)
				if !ok {
					msg = fmt.Sprint(md.Value)
				}
				rep.Diagnostics = append(rep.Diagnostics, Diagnostic{Level: md.Kind, Droplet: id, Field: field, Message: msg})
			}
		}
		for i, dep := range d.DependsOn {
			field := fmt.Sprintf("dependsOn[%d]", i)
			if _, ok := m.Droplets[dep]; !ok {
				fail(id, field, classf(ErrReference, "depends on %q, which is not a droplet of this assembly%s", dep, suggest(dep, ids)))
				continue
			}
			g.add(Edge{From: id, To: dep, Via: "dependsOn"})
		}
		if kind != nil {
			if err := kind.CheckProperties(d.Properties); err != nil {
				for _, e := range unjoin(err) {
					var pe *droplets.PropertyError
					if errors.As(e, &pe) {
						fail(id, "properties."+pe.Property, pe.Err)
					} else {
						fail(id, "properties", e)
					}
				}
			}
		}
		refs, err := ScanProperties(d.Properties)
		if err != nil {
			var fe *FieldRefError
			errors.As(err, &fe)
			fail(id, "properties."+fe.Field, fe.Err)
		}
		for _, r := range refs {
			field := "properties." + r.Field
			target, ok := m.Droplets[r.Droplet]
			if !ok {
				fail(id, field, classf(ErrReference, "%s names droplet %q, which is not in this assembly%s", r.Reference, r.Droplet, suggest(r.Droplet, ids)))
				continue
			}
			if target != nil {
				if sp, err := droplets.ParseSpecifier(target.Type); err == nil {
					if k, ok := droplets.Lookup(sp); ok {
						if err := k.CheckAttribute(r.Attribute); err != nil {
							fail(id, field, classf(ErrReference, "%s: %v", r.Reference, err))
							continue
						}
					}
				}
			}
			g.add(Edge{From: id, To: r.Droplet, Via: r.Reference.String()})
		}
	}
	for _, key := range sortedKeys(m.Missing) {
		ms := m.Missing[key]
		switch {
		case ms == nil:
			fail("", "missing."+key, errors.New("entry is null"))
		case ms.Provider == "":
			fail("", "missing."+key+".provider", errors.New("empty provider"))
		case ms.Props == nil:
			fail("", "missing."+key+".props", errors.New("missing props"))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	order, err := g.Order()
	if err != nil {
		return nil, err
	}
	rep.Graph, rep.Order = g, order
	return rep, nil
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// suggest returns ` (did you mean "X"?)` for a close logical ID.
func suggest(name string, ids []string) string {
	best, bestD := "", 3
	for _, id := range ids {
		if d := editDistance(strings.ToLower(name), strings.ToLower(id)); d < bestD {
			best, bestD = id, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 99
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// An Edge says droplet From depends on droplet To, because of Via: the
// word "dependsOn" or a reference token.
type Edge struct {
	From, To string
	Via      string
}

// A Graph is the droplets' dependency graph.
type Graph struct {
	// IDs lists the droplets, sorted.
	IDs  []string
	deps map[string][]Edge
}

func (g *Graph) add(e Edge) {
	for _, x := range g.deps[e.From] {
		if x == e {
			return
		}
	}
	g.deps[e.From] = append(g.deps[e.From], e)
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
		return nil, &ValidationError{Droplet: c[0], Field: "dependsOn", Err: classf(ErrCycle, "dependency cycle %s", strings.Join(c, " -> "))}
	}
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
	return order, nil
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
