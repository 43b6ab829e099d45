package blueprint

import (
	"errors"
	"fmt"
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
		hint := "pass a list"
		if got == TObject {
			hint = "to iterate over an object's values, use ${vals(" + n.String() + ")}"
		}
		c.errAtOffset(s.node, n.Pos(), ErrEachType, "%s: ${%s} yields %s, but each takes an array: it does not support substitutions that resolve to objects or mappings; %s", s.what, n, describe(v), hint)
		return
	}
	c.errAtOffset(s.node, n.Pos(), ErrType, "%s must yield %s, but ${%s} yields %s", s.what, s.want, n, describe(v))
}

// checkExportType checks that an export's type matches the field it names,
// where the field's type is known: a literal (or a known substitution) in a
// resource's spec or metadata, or a field of a known value.
func (c *checker) checkExportType(s *site) {
	ref := s.str.Single()
	if s.want == TAny {
		return // the export's type is itself invalid
	}
	switch n := ref.(type) {
	case *subst.Value:
		if len(n.Path) == 0 {
			return // checked against the value's declared type
		}
		v, err := c.deepEval(s, n)
		if err == nil {
			c.checkYield(s, n, v)
		}
	case *subst.Resource:
		r, ok := c.res[n.Name]
		if !ok || c.isFuncRef(n) {
			return
		}
		field, place := c.resourceField(r, n.Path)
		if field == nil {
			return // state, or a field the blueprint does not set
		}
		got := c.nodeType(field)
		if got == 0 || got&s.want != 0 {
			return
		}
		c.errAt(s.node, ErrType, "export %q has type %s, but %s is %s (%s, line %d); set the export's type to %s, or export another field", strings.TrimPrefix(s.owner, "exports."), s.want, n, got, place, field.Line, got)
	}
}

// resourceField finds the node a resource reference's path names in the
// resource's spec or metadata, if the blueprint writes it.
func (c *checker) resourceField(r *resource, path []subst.Accessor) (*yaml.Node, string) {
	if len(path) > 0 && path[0].IsIndex {
		path = path[1:] // one instance of an each resource: the same template
	}
	if len(path) == 0 || path[0].IsIndex || (path[0].Name != "spec" && path[0].Name != "metadata") {
		return nil, ""
	}
	var cur *yaml.Node
	for _, kv := range pairs(r.def) {
		if kv.key.Value == path[0].Name {
			cur = kv.val
		}
	}
	place := fmt.Sprintf("written in resource %q's %s", r.name, path[0].Name)
	for _, a := range path[1:] {
		if cur == nil {
			return nil, ""
		}
		switch {
		case a.IsIndex && cur.Kind == yaml.SequenceNode && a.Index < len(cur.Content):
			cur = cur.Content[a.Index]
		case !a.IsIndex && cur.Kind == yaml.MappingNode:
			var next *yaml.Node
			for _, kv := range pairs(cur) {
				if kv.key.Value == a.Name {
					next = kv.val
				}
			}
			cur = next
		default:
			return nil, ""
		}
	}
	return cur, place
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
