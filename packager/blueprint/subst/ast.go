// Package subst parses and prints the ${..} substitution language of the
// Blueprint Specification v2023-04-20.
//
// The parser follows the specification's EBNF grammar: function calls with
// positional and named arguments (and accessors on their results), references
// to variables, values, data sources, child blueprints, resources (prefixed
// with "resources" or by bare name), the current element (elem) and its index
// (i), and bool, int, float and string literals. Whitespace, including line
// breaks, may separate tokens.
//
// Where the grammar writes a prefix with its dot ("values.", "resources.",
// "children.") followed by a name accessor, the parser reads it as the keyword
// followed by one name accessor, so values.x and values["x"] are both accepted,
// as the specification's examples use them.
//
// Node.String prints a node in canonical form; parsing the printed form yields
// an equal tree.
package subst

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cloud-assembly/assemble/errcode"
)

// ErrSyntax is the class of every parse error.
var ErrSyntax = errcode.New("substitution_syntax", "syntax error",
	"fix the ${...} substitution at the place shown (write $${ for a literal ${)")

// SyntaxError reports where in the source text a substitution failed to parse.
type SyntaxError struct {
	// Offset is the byte offset into the parsed text (0-based).
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg) }

// Unwrap returns ErrSyntax.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Accessor is one step in a path: .name, ["quoted.name"], [n] or [].
type Accessor struct {
	Name    string // for name accessors
	Quoted  bool   // name written as ["..."]
	IsIndex bool   // index accessor
	Index   int    // index value when IsIndex and !First
	First   bool   // the [] shorthand (first item)
}

func (a Accessor) String() string {
	switch {
	case a.IsIndex && a.First:
		return "[]"
	case a.IsIndex:
		return "[" + strconv.Itoa(a.Index) + "]"
	case a.Quoted:
		return `["` + a.Name + `"]`
	default:
		return "." + a.Name
	}
}

func pathString(p []Accessor) string {
	var b strings.Builder
	for _, a := range p {
		b.WriteString(a.String())
	}
	return b.String()
}

// Node is one parsed substitution expression.
type Node interface {
	String() string
	// Pos is the byte offset of the node's first character in the parsed text.
	Pos() int
}

type pos int

func (p pos) Pos() int { return int(p) }

// Variable is variables.<Name>.
type Variable struct {
	pos
	Name string
}

func (n *Variable) String() string { return "variables" + nameAcc(n.Name) }

// Value is values.<Name> followed by a path.
type Value struct {
	pos
	Name string
	Path []Accessor
}

func (n *Value) String() string { return "values" + nameAcc(n.Name) + pathString(n.Path) }

// Resource is resources.<Name> or a bare <Name>, followed by a path.
type Resource struct {
	pos
	Name string
	Bare bool // written without the resources prefix
	Path []Accessor
}

func (n *Resource) String() string {
	if n.Bare {
		return n.Name + pathString(n.Path)
	}
	return "resources" + nameAcc(n.Name) + pathString(n.Path)
}

// DataSource is datasources.<Name>.<Field> with an optional index.
type DataSource struct {
	pos
	Name  string
	Field string
	Index *Accessor
}

func (n *DataSource) String() string {
	s := "datasources" + nameAcc(n.Name) + nameAcc(n.Field)
	if n.Index != nil {
		s += n.Index.String()
	}
	return s
}

// Child is children.<Name> followed by at least one accessor.
type Child struct {
	pos
	Name string
	Path []Accessor
}

func (n *Child) String() string { return "children" + nameAcc(n.Name) + pathString(n.Path) }

// Elem is elem followed by a path: the current item of an each resource.
type Elem struct {
	pos
	Path []Accessor
}

func (n *Elem) String() string { return "elem" + pathString(n.Path) }

// ElemIndex is i: the index of the current item of an each resource.
type ElemIndex struct{ pos }

func (n *ElemIndex) String() string { return "i" }

// LiteralKind says which kind of literal a Literal holds.
type LiteralKind int

const (
	StringLit LiteralKind = iota
	IntLit
	FloatLit
	BoolLit
)

// Literal is a string, int, float or bool literal.
type Literal struct {
	pos
	Kind  LiteralKind
	Str   string // StringLit: the unescaped text
	Int   int64
	Float float64
	Raw   string // IntLit/FloatLit: the text as written
	Bool  bool
}

func (n *Literal) String() string {
	switch n.Kind {
	case StringLit:
		return `"` + strings.ReplaceAll(n.Str, `"`, `\"`) + `"`
	case IntLit, FloatLit:
		return n.Raw
	default:
		return strconv.FormatBool(n.Bool)
	}
}

// Arg is one function argument; Name is set for a named argument.
type Arg struct {
	Name  string
	Value Node
}

// Call is a function call, with accessors on its result.
type Call struct {
	pos
	Name string
	Args []Arg
	Path []Accessor
}

func (n *Call) String() string {
	var b strings.Builder
	b.WriteString(n.Name)
	b.WriteByte('(')
	for i, a := range n.Args {
		if i > 0 {
			b.WriteString(", ")
		}
		if a.Name != "" {
			b.WriteString(a.Name + " = ")
		}
		b.WriteString(a.Value.String())
	}
	b.WriteByte(')')
	b.WriteString(pathString(n.Path))
	return b.String()
}

func nameAcc(name string) string {
	if isName(name) {
		return "." + name
	}
	return `["` + name + `"]`
}

// isName reports whether s matches the grammar's name rule.
func isName(s string) bool {
	if s == "" || !(isLetter(s[0]) || s[0] == '_') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameChar(s[i]) {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isNameChar(c byte) bool { return isLetter(c) || isDigit(c) || c == '_' || c == '-' }
func isQuotedNameChar(c byte) bool {
	return isNameChar(c) || c == '.'
}

// Part is one piece of a string that may hold substitutions: either literal
// text or one ${..} substitution.
type Part struct {
	Text string
	Sub  Node
	// Offset is the byte offset of the part in the source string (for a
	// substitution, the offset of "${").
	Offset int
}

// Interpolated is a string split into literal text and substitutions.
type Interpolated struct {
	Parts []Part
}

// HasSubs reports whether the string holds any substitution.
func (s *Interpolated) HasSubs() bool {
	for _, p := range s.Parts {
		if p.Sub != nil {
			return true
		}
	}
	return false
}

// Single returns the substitution when the string is exactly one ${..},
// give or take surrounding whitespace (a YAML block scalar such as
// "value: |" ends in a line break).
func (s *Interpolated) Single() Node {
	var sub Node
	for _, p := range s.Parts {
		switch {
		case p.Sub != nil && sub == nil:
			sub = p.Sub
		case p.Sub != nil:
			return nil
		case strings.TrimSpace(p.Text) != "":
			return nil
		}
	}
	return sub
}

// String prints the string back with canonical substitutions.
func (s *Interpolated) String() string {
	var b strings.Builder
	for _, p := range s.Parts {
		if p.Sub != nil {
			b.WriteString("${" + p.Sub.String() + "}")
		} else {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Walk calls fn for n and every node below it, depth first.
func Walk(n Node, fn func(Node)) {
	if n == nil {
		return
	}
	fn(n)
	if c, ok := n.(*Call); ok {
		for _, a := range c.Args {
			Walk(a.Value, fn)
		}
	}
}
