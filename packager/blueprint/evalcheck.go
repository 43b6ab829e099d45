package blueprint

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cloud-assembly/assemble/packager/blueprint/subst"
	"go.yaml.in/yaml/v3"
)

// checkEvaluation evaluates, with the evaluator Package uses, every
// substitution known before deploy time (literals, variables with a value
// or default, values built from them, core function calls on such
// arguments), and reports at its place what fails: a function call on bad
// arguments, a field or index a known value does not have, a result above
// MaxEvalSize, work beyond MaxEvalWork, an array or object interpolated
// into a string, a result of the wrong type for its place (each over an
// object), and an export whose type differs from the field it names. What
// depends on deploy-time inputs is left alone, its known parts still
// evaluated. So validate and build give one verdict.
func (c *checker) checkEvaluation() {
	for _, s := range c.sites {
		if s.bad {
			continue // its errors are reported already
		}
		if s.field == "export" {
			c.checkExportType(s)
			continue
		}
		c.checkSite(s)
	}
}

func (c *checker) checkSite(s *site) {
	single := s.str.Single()
	for _, part := range s.str.Parts {
		if part.Sub == nil {
			continue
		}
		v, err := c.deepEval(s, part.Sub)
		if err == nil && single == nil {
			if _, ok := scalarString(v); !ok {
				c.reportEval(s, &evalErr{node: part.Sub, err: errComplex{v}})
			}
		}
	}
	if single != nil && s.want != 0 && s.field != "value" && c.typeOf(single)&s.want != 0 {
		if v, err := c.ev.eval(single); err == nil {
			c.checkYield(s, single, v)
		}
	}
	if s.field == "value" {
		// The definition as a whole: its type, its interpolated size.
		name := strings.TrimPrefix(s.owner, "values.")
		_, err := c.ev.value(name)
		var ve *valueErr
		if errors.As(err, &ve) && ve.name == name {
			c.reportEval(s, ve.err)
		}
	}
}

// deepEval evaluates n; when n depends on deploy-time inputs it still
// evaluates n's arguments, reporting their failures.
func (c *checker) deepEval(s *site, n subst.Node) (any, error) {
	v, err := c.ev.eval(n)
	switch {
	case err == nil:
	case errors.Is(err, notKnown):
		if call, ok := n.(*subst.Call); ok {
			for _, a := range call.Args {
				c.deepEval(s, a.Value)
			}
		}
	default:
		c.reportEval(s, err)
	}
	return v, err
}

// reportEval reports an evaluation failure in site s.
func (c *checker) reportEval(s *site, err error) {
	var ve *valueErr
	switch {
	case errors.As(err, &ve):
		return // reported where the value is defined
	case errors.Is(err, errWork):
		if !c.workReported {
			c.workReported = true
			c.errAtOffset(s.node, 0, ErrEvalLimit, "%v", err)
		}
		return
	}
	class := ErrFunction
	var cx errComplex
	var te typeErr
	switch {
	case errors.Is(err, errTooLarge):
		class = ErrEvalLimit
	case errors.As(err, &cx), errors.As(err, &te):
		class = ErrType
	}
	off := 0
	var ee *evalErr
	if errors.As(err, &ee) {
		off = ee.node.Pos()
	}
	c.errAtOffset(s.node, off, class, "%v", err)
}

// checkYield checks the type a site's sole substitution yields, once known.
func (c *checker) checkYield(s *site, n subst.Node, v any) {
	if fits(v, s.want) {
		return
	}
	got := typeOfValue(v)
	if s.field == "each" {
		if got == TObject {
			c.errAtOffset(s.node, n.Pos(), ErrEachType, "%s: ${%s} yields %s, but each takes an array: it does not support substitutions that resolve to objects or mappings; to iterate over an object's values, use ${vals(%s)}", s.what, n, describe(v), n)
			return
		}
		c.errAtOffset(s.node, n.Pos(), ErrEachType, "%s: ${%s} yields %s, but each takes an array; pass a list", s.what, n, describe(v))
		return
	}
	c.errAtOffset(s.node, n.Pos(), ErrType, "%s must yield %s, but ${%s} yields %s", s.what, s.want, n, describe(v))
}

// checkExportType checks that an export's type matches a field of a known
// value it names. Exports of resource fields and children's exports are
// checked by checkRefTypes, once the children are loaded.
func (c *checker) checkExportType(s *site) {
	n, ok := s.str.Single().(*subst.Value)
	if !ok || s.want == TAny || len(n.Path) == 0 {
		return // the export's type is itself invalid, or checked against the value's declared type
	}
	v, err := c.deepEval(s, n)
	if err == nil {
		c.checkYield(s, n, v)
	}
}

// checkRefTypes checks the references whose type the blueprint fixes
// without evaluating them: a resource field written in the resource's spec
// or metadata (a literal, or a substitution of known type), a part of a
// resource that is always a mapping (spec, state, metadata, labels,
// annotations, custom), and a loaded child's export, whose type the child
// declares. Such a reference interpolated into a string must be a scalar;
// one standing alone must yield what its place wants (an export's type, a
// condition's boolean, a value's type). It runs after the includes load.
func (c *checker) checkRefTypes() {
	for _, s := range c.sites {
		if s.bad {
			continue // its errors are reported already
		}
		single := s.str.Single()
		for _, part := range s.str.Parts {
			if part.Sub == nil {
				continue
			}
			got, where := c.refType(part.Sub)
			switch {
			case got == 0:
			case single == nil && got&(TArray|TObject) != 0:
				c.errAtOffset(s.node, part.Sub.Pos(), ErrType, "${%s} yields %s (%s), which can not be interpolated into a string; use a field or item of it", part.Sub, got, where)
			case single == nil || s.want == 0 || s.want == TAny || got&s.want != 0:
			case s.field == "export":
				c.errAt(s.node, ErrType, "export %q has type %s, but %s is %s (%s); set the export's type to %s, or export another field", strings.TrimPrefix(s.owner, "exports."), s.want, part.Sub, got, where, got)
			default:
				c.errAtOffset(s.node, part.Sub.Pos(), ErrType, "%s must yield %s, but ${%s} yields %s (%s)", s.what, s.want, part.Sub, got, where)
			}
		}
	}
}

// refType is the type a resource or child reference is known to yield
// before deploy time (0 when not known), and where that is written.
func (c *checker) refType(n subst.Node) (Type, string) {
	switch n := n.(type) {
	case *subst.Resource:
		r, ok := c.res[n.Name]
		if !ok || c.isFuncRef(n) {
			return 0, ""
		}
		path := n.Path
		switch {
		case len(path) > 0 && path[0].IsIndex:
			path = path[1:] // one instance of an each resource: the same template
		case r.hasEach:
			return 0, "" // every instance's field: not the template's type
		}
		if field, line := c.resourceField(r, path); field != nil {
			if t := c.nodeType(field); t != 0 {
				return t, fmt.Sprintf("written in resource %q's %s, line %d", r.name, path[0].Name, line)
			}
		}
		if isMappingPart(path) {
			text := path[0].Name
			if len(path) == 2 {
				text += "." + path[1].Name
			}
			return TObject, "a resource's " + text + " is always a mapping"
		}
	case *subst.Child:
		if len(n.Path) != 1 || n.Path[0].IsIndex {
			return 0, ""
		}
		ch, ok := c.bp.Children[n.Name]
		if !ok || ch.Blueprint == nil {
			return 0, ""
		}
		if typ := ch.Blueprint.exportType(n.Path[0].Name); typ != nil && slices.Contains(exportTypes, typ.Value) {
			return typeOfName(typ.Value), fmt.Sprintf("its type in %s, line %d", ch.Resolved, typ.Line)
		}
	}
	return 0, ""
}

// isMappingPart reports whether a resource path names a part of every
// resource that is a mapping whatever the blueprint writes.
func isMappingPart(path []subst.Accessor) bool {
	switch {
	case len(path) == 1:
		return !path[0].IsIndex && (path[0].Name == "spec" || path[0].Name == "state" || path[0].Name == "metadata")
	case len(path) == 2:
		return !path[0].IsIndex && path[0].Name == "metadata" && !path[1].IsIndex && slices.Contains([]string{"labels", "annotations", "custom"}, path[1].Name)
	}
	return false
}

// resourceField finds the node a resource path names in the resource's spec
// or metadata, if the blueprint writes it, and the line where it is written
// (its key's, for a field of a mapping).
func (c *checker) resourceField(r *resource, path []subst.Accessor) (*yaml.Node, int) {
	if len(path) == 0 || path[0].IsIndex || (path[0].Name != "spec" && path[0].Name != "metadata") {
		return nil, 0
	}
	cur, line := field(r.def, path[0].Name)
	for _, a := range path[1:] {
		switch {
		case cur == nil:
			return nil, 0
		case a.IsIndex && cur.Kind == yaml.SequenceNode && a.Index < len(cur.Content):
			cur = cur.Content[a.Index]
			line = cur.Line
		case !a.IsIndex && cur.Kind == yaml.MappingNode:
			cur, line = field(cur, a.Name)
		default:
			return nil, 0
		}
	}
	return cur, line
}

// field returns the value of a mapping's key (the last, if repeated) and
// the key's line.
func field(m *yaml.Node, key string) (*yaml.Node, int) {
	var val *yaml.Node
	line := 0
	for _, kv := range pairs(m) {
		if kv.key.Value == key {
			val, line = kv.val, kv.key.Line
		}
	}
	return val, line
}

// exportType returns the type node of the blueprint's export name, if it
// is a string.
func (bp *Blueprint) exportType(name string) *yaml.Node {
	exports, _ := field(bp.Root, "exports")
	export, _ := field(exports, name)
	if typ, _ := field(export, "type"); typ != nil && isStr(typ) {
		return typ
	}
	return nil
}

// nodeType is the type a field of the blueprint holds (0 when not known
// before deploy time).
func (c *checker) nodeType(n *yaml.Node) Type {
	switch n.Kind {
	case yaml.MappingNode:
		return TObject
	case yaml.SequenceNode:
		return TArray
	case yaml.ScalarNode:
	default:
		return 0
	}
	if isNull(n) {
		return 0
	}
	if n.Tag != "!!str" {
		return scalarType(n)
	}
	s, ok := c.siteOf[n]
	if !ok {
		return TString
	}
	one := s.str.Single()
	if one == nil {
		return TString // text and substitutions make a string
	}
	if v, err := c.ev.eval(one); err == nil {
		return typeOfValue(v)
	}
	if t := c.typeOf(one); t&(t-1) == 0 {
		return t // one type, known statically
	}
	return 0
}
