package blueprint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cloud-assembly/assemble/packager/blueprint/subst"
	"go.yaml.in/yaml/v3"
)

// Packaged is a blueprint and the local blueprints it includes, rewritten
// for an archive.
type Packaged struct {
	// Main is the archive name of the root blueprint.
	Main string
	// Names lists every file, the root first, then children depth first in
	// include-name order.
	Names []string
	// Files holds each file's bytes by name. Names are slash-separated and
	// relative; a child of "app.yaml" included as "core" is
	// "app.include/core.yaml", and the parent's include path says so.
	Files map[string][]byte
}

// Package loads and validates the blueprint at path and its includes (as
// Load does; it fails exactly when Load does, with the same errors), then
// inlines what Load evaluated and returns the rewritten files:
//
//   - references to variables with a value (opts.Variables) or a default,
//     except secret variables, are replaced by the value; a variable given a
//     value here gets it as its default, so the packaged blueprint stands
//     alone;
//   - references to (non-secret) values built only from those, and core function calls
//     on known arguments, are replaced by their result; where a whole
//     substitution can not be evaluated, its known arguments are still
//     folded to literals (as in ${eq("prod", resources.db.state.tier)});
//   - datetime(), cwd() and link() calls, and references to resources, data
//     sources, child blueprints, elem and i, are left for deploy time;
//   - the paths of included local blueprints point at their copies in the
//     archive; remote and deploy-time includes are left as they are.
//
// version is written as the string "2023-04-20". YAML blueprints are written
// as YAML (comments kept), JSON blueprints as JSON (key order kept).
func Package(file string, opts Options) (*Packaged, error) {
	bp, err := Load(file, opts)
	if err != nil {
		return nil, err
	}
	p := &Packaged{Files: map[string][]byte{}}
	p.Main = path.Base(filepath.ToSlash(file))
	var errs ErrorList
	p.add(bp, p.Main, opts.Variables, &errs)
	if len(errs) > 0 {
		return nil, errs.sorted()
	}
	return p, nil
}

func (p *Packaged) add(bp *Blueprint, name string, passed map[string]any, errs *ErrorList) {
	c := bp.c
	ev := c.ev // the evaluation Load checked
	includePaths := map[*yaml.Node]string{}
	stem := strings.TrimSuffix(path.Base(name), path.Ext(name))
	for _, inName := range slices.Sorted(maps.Keys(bp.Children)) {
		ch := bp.Children[inName]
		rel := stem + ".include/" + includeFileName(inName) + extOf(ch.Resolved)
		includePaths[ch.Include.Path] = rel
		// A literal path holds no substitution, so it is not among the
		// sites below: point it at the copy here.
		setScalar(ch.Include.Path, rel)
	}
	for _, s := range c.sites {
		if s.field == "export" {
			continue
		}
		if rel, ok := includePaths[s.node]; ok {
			setScalar(s.node, rel)
			continue
		}
		if err := ev.rewrite(s); err != nil {
			// Load evaluated every site with this evaluator and reported
			// its failures, so this is a bug; fail rather than ship.
			line, col := c.posOf(s.node, 0)
			*errs = append(*errs, &Error{File: c.file, Line: line, Column: col, Err: ErrFunction, Msg: fmt.Sprintf("evaluating at packaging time (validation passed; please report this): %v", err)})
		}
	}
	for _, v := range bp.Variables {
		if val, ok := passed[v.Name]; ok && !v.Secret {
			if known, ok := bp.Known[v.Name]; ok && val != nil {
				setDefault(c, v, known)
			}
		}
	}
	for _, kv := range pairs(bp.Root) {
		if kv.key.Value == "version" {
			kv.val.Tag, kv.val.Style = "!!str", yaml.DoubleQuotedStyle
		}
	}
	out, err := encode(bp.Root, extOf(bp.Path) == ".json")
	if err != nil {
		*errs = append(*errs, &Error{File: c.file, Err: ErrSyntax, Msg: fmt.Sprintf("writing the packaged blueprint: %v", err)})
		return
	}
	p.Names = append(p.Names, name)
	p.Files[name] = out
	for _, inName := range slices.Sorted(maps.Keys(bp.Children)) {
		ch := bp.Children[inName]
		childName := path.Join(path.Dir(name), includePaths[ch.Include.Path])
		p.add(ch.Blueprint, childName, nil, errs)
	}
}

// includeFileName makes an include name one safe path segment: "/", "\\",
// "%" and control characters are percent-encoded, and "." and ".." are
// spelled out, so that no include name ("../../x") can place its copy outside
// the parent's .include folder.
func includeFileName(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '/' || c == '\\' || c == '%' || c < 0x20 || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	switch s := b.String(); s {
	case "", ".", "..":
		return strings.Repeat("%2E", len(s))
	default:
		return s
	}
}

func extOf(p string) string {
	switch e := strings.ToLower(filepath.Ext(p)); e {
	case ".json", ".yml", ".yaml", ".jsonc":
		return e
	}
	return ".yaml"
}

// setDefault records a value given at packaging time as a variable's default.
func setDefault(c *checker, v *Variable, val any) {
	for _, sec := range pairs(c.bp.Root) {
		if sec.key.Value != "variables" {
			continue
		}
		for _, kv := range pairs(sec.val) {
			if kv.key.Value != v.Name || kv.val.Kind != yaml.MappingNode {
				continue
			}
			n := toNode(val)
			for _, f := range pairs(kv.val) {
				if f.key.Value == "default" {
					*f.val = *n
					return
				}
			}
			kv.val.Content = append(kv.val.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "default"}, n)
		}
	}
}

// rewrite evaluates one site in place: what is known is inlined, within
// MaxInlineSize, and the known arguments of what is not are folded to
// literals.
func (e *evaluator) rewrite(s *site) error {
	if one := s.str.Single(); one != nil {
		v, err := e.eval(one)
		if failed(err) {
			return err
		}
		if err == nil && e.inline(s, v) {
			return nil
		}
		if folded := e.fold(one); folded.String() != one.String() {
			setScalar(s.node, "${"+folded.String()+"}")
		}
		return nil
	}
	var b strings.Builder
	changed := false
	for _, part := range s.str.Parts {
		if part.Sub == nil {
			b.WriteString(part.Text)
			continue
		}
		v, err := e.eval(part.Sub)
		if failed(err) {
			return err
		}
		if err == nil {
			if str, ok := scalarString(v); ok && e.spend(v) {
				b.WriteString(str)
				changed = true
				continue
			}
		}
		folded := e.fold(part.Sub)
		if folded.String() != part.Sub.String() {
			changed = true
		}
		b.WriteString("${" + folded.String() + "}")
	}
	if changed {
		setScalar(s.node, b.String())
	}
	return nil
}

// failed reports an evaluation failure (not "known only at deploy time").
func failed(err error) bool { return err != nil && !errors.Is(err, notKnown) }

// inline replaces a site holding one substitution by its known value v, as
// its place allows: value and description fields take a scalar's text,
// condition and each a literal substitution, other places any value.
func (e *evaluator) inline(s *site, v any) bool {
	if _, isFn := v.(fnVal); isFn {
		return false
	}
	switch s.field {
	case "value", "description":
		if str, ok := scalarString(v); ok && e.spend(v) {
			setScalar(s.node, str)
			return true
		}
	case "condition", "each":
		if lit := literalOf(v); lit != nil && e.spend(v) {
			setScalar(s.node, "${"+lit.String()+"}")
			return true
		}
	default:
		if e.spend(v) {
			if n := toNode(v); n != nil {
				*s.node = *n
				return true
			}
		}
	}
	return false
}

// spend takes v's size from the inlining budget, reporting whether it fit.
func (e *evaluator) spend(v any) bool {
	room := MaxInlineSize - e.inlined
	if room <= 0 {
		return false
	}
	n := sizeOf(v, room)
	if n > room {
		return false
	}
	e.inlined += n
	return true
}

// fold replaces known scalar subexpressions by literals.
func (e *evaluator) fold(n subst.Node) subst.Node {
	if _, isLit := n.(*subst.Literal); isLit {
		return n
	}
	if v, err := e.eval(n); err == nil {
		if lit := literalOf(v); lit != nil && e.spend(v) {
			return lit
		}
	}
	if call, ok := n.(*subst.Call); ok {
		out := *call
		out.Args = make([]subst.Arg, len(call.Args))
		for i, a := range call.Args {
			out.Args[i] = subst.Arg{Name: a.Name, Value: e.fold(a.Value)}
		}
		return &out
	}
	return n
}

// literalOf writes a scalar as a substitution literal (nil if it can not be
// written as one).
func literalOf(v any) *subst.Literal {
	switch v := v.(type) {
	case string:
		// A string literal can not end in a backslash, nor hold one before
		// a quote, and survive the grammar's escaping.
		if strings.HasSuffix(v, `\`) || strings.Contains(v, `\"`) {
			return nil
		}
		return &subst.Literal{Kind: subst.StringLit, Str: v}
	case int64:
		return &subst.Literal{Kind: subst.IntLit, Int: v, Raw: strconv.FormatInt(v, 10)}
	case float64:
		raw := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(raw, ".") {
			raw += ".0"
		}
		if strings.ContainsAny(raw, "eE") {
			return nil
		}
		return &subst.Literal{Kind: subst.FloatLit, Float: v, Raw: raw}
	case bool:
		return &subst.Literal{Kind: subst.BoolLit, Bool: v}
	}
	return nil
}

func setScalar(n *yaml.Node, s string) {
	style := yaml.Style(0)
	if n.Style == yaml.DoubleQuotedStyle || n.Style == yaml.SingleQuotedStyle {
		style = n.Style
	}
	*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: style, Line: n.Line, Column: n.Column, HeadComment: n.HeadComment, LineComment: n.LineComment, FootComment: n.FootComment}
}

// toNode converts an evaluated value to a YAML node (nil for functions).
func toNode(v any) *yaml.Node {
	switch v := v.(type) {
	case string:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
	case int64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(v, 10)}
	case int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(v)}
	case float64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(v, 'g', -1, 64)}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v)}
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, x := range v {
			c := toNode(x)
			if c == nil {
				return nil
			}
			n.Content = append(n.Content, c)
		}
		return n
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			c := toNode(v[k])
			if c == nil {
				return nil
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, c)
		}
		return n
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	}
	return nil
}

// encode writes a document as YAML, or as JSON keeping key order.
func encode(root *yaml.Node, asJSON bool) ([]byte, error) {
	var buf bytes.Buffer
	if !asJSON {
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(root); err != nil {
			return nil, err
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}
	if err := writeJSON(&buf, root, ""); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, n *yaml.Node, indent string) error {
	in := indent + "  "
	switch n.Kind {
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			buf.WriteString("{}")
			return nil
		}
		buf.WriteString("{\n")
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, _ := json.Marshal(n.Content[i].Value)
			buf.WriteString(in)
			buf.Write(k)
			buf.WriteString(": ")
			if err := writeJSON(buf, n.Content[i+1], in); err != nil {
				return err
			}
			if i+2 < len(n.Content) {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString(indent + "}")
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			buf.WriteString("[]")
			return nil
		}
		buf.WriteString("[\n")
		for i, c := range n.Content {
			buf.WriteString(in)
			if err := writeJSON(buf, c, in); err != nil {
				return err
			}
			if i+1 < len(n.Content) {
				buf.WriteByte(',')
			}
			buf.WriteByte('\n')
		}
		buf.WriteString(indent + "]")
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!int", "!!float", "!!bool", "!!null":
			var v any
			if err := n.Decode(&v); err != nil {
				return err
			}
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			buf.Write(b)
		default:
			b, _ := json.Marshal(n.Value)
			buf.Write(b)
		}
	default:
		return fmt.Errorf("unsupported YAML node kind %d", n.Kind)
	}
	return nil
}
