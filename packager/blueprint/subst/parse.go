package subst

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MaxDepth bounds the nesting of function calls in one substitution.
const MaxDepth = 64

type tokKind int

const (
	tEOF tokKind = iota
	tName
	tString
	tNumber
	tLParen
	tRParen
	tComma
	tEquals
	tDot
	tLBracket
	tRBracket
	tRBrace
	tBad
)

type token struct {
	kind  tokKind
	text  string // name, number text, or unescaped string
	off   int
	space bool // whitespace came before the token
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tName:
		return fmt.Sprintf("name %q", t.text)
	case tString:
		return "string literal"
	case tNumber:
		return fmt.Sprintf("number %s", t.text)
	case tBad:
		return fmt.Sprintf("character %q", t.text)
	default:
		return fmt.Sprintf("%q", t.text)
	}
}

// punct maps one-character tokens to their kinds.
var punct = map[byte]tokKind{'(': tLParen, ')': tRParen, ',': tComma, '=': tEquals, '.': tDot, '[': tLBracket, ']': tRBracket, '}': tRBrace}

type parser struct {
	src   string
	off   int
	tok   token
	depth int
}

func (p *parser) errf(off int, format string, args ...any) error {
	return &SyntaxError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// next reads the following token into p.tok.
func (p *parser) next() error {
	ws := p.off
	for p.off < len(p.src) && isSpace(p.src[p.off]) {
		p.off++
	}
	err := p.lex()
	p.tok.space = p.off > ws && p.tok.off > ws
	return err
}

// lex reads one token starting at p.off (no whitespace there).
func (p *parser) lex() error {
	start := p.off
	if p.off >= len(p.src) {
		p.tok = token{kind: tEOF, off: start}
		return nil
	}
	c := p.src[p.off]
	if k, ok := punct[c]; ok {
		p.off++
		p.tok = token{kind: k, text: string(c), off: start}
		return nil
	}
	switch {
	case isLetter(c) || c == '_':
		p.off++
		for p.off < len(p.src) && isNameChar(p.src[p.off]) {
			p.off++
		}
		p.tok = token{kind: tName, text: p.src[start:p.off], off: start}
		return nil
	case c == '"':
		p.off++
		var b strings.Builder
		for {
			if p.off >= len(p.src) {
				return p.errf(start, "unterminated string literal")
			}
			ch := p.src[p.off]
			if ch == '\\' && p.off+1 < len(p.src) && p.src[p.off+1] == '"' {
				b.WriteByte('"')
				p.off += 2
				continue
			}
			if ch == '"' {
				p.off++
				break
			}
			b.WriteByte(ch)
			p.off++
		}
		p.tok = token{kind: tString, text: b.String(), off: start}
		return nil
	case isDigit(c) || c == '-':
		p.off++
		if c == '-' && (p.off >= len(p.src) || !isDigit(p.src[p.off])) {
			return p.errf(start, "expected digits after \"-\"")
		}
		for p.off < len(p.src) && isDigit(p.src[p.off]) {
			p.off++
		}
		if p.off < len(p.src) && p.src[p.off] == '.' {
			p.off++
			if p.off >= len(p.src) || !isDigit(p.src[p.off]) {
				return p.errf(start, "expected digits after the decimal point")
			}
			for p.off < len(p.src) && isDigit(p.src[p.off]) {
				p.off++
			}
		}
		if p.off < len(p.src) && (isNameChar(p.src[p.off]) || p.src[p.off] == '.') {
			return p.errf(start, "malformed number %q", p.src[start:p.off+1])
		}
		p.tok = token{kind: tNumber, text: p.src[start:p.off], off: start}
		return nil
	}
	// Report one whole UTF-8 character.
	end := p.off + 1
	for end < len(p.src) && p.src[end]&0xC0 == 0x80 {
		end++
	}
	p.tok = token{kind: tBad, text: p.src[p.off:end], off: start}
	p.off = end
	return nil
}

func (p *parser) expect(k tokKind, what string) error {
	if p.tok.kind != k {
		return p.errf(p.tok.off, "expected %s, found %s", what, p.tok.describe())
	}
	return p.next()
}

// Parse parses the text inside one ${..} (without the delimiters).
func Parse(expr string) (Node, error) {
	p := &parser{src: expr}
	if err := p.next(); err != nil {
		return nil, err
	}
	n, err := p.parseSub()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.errf(p.tok.off, "unexpected %s after the substitution", p.tok.describe())
	}
	return n, nil
}

// ParseString splits s into literal text and ${..} substitutions and parses
// each substitution. Offsets in errors and parts are byte offsets into s.
func ParseString(s string) (*Interpolated, error) {
	out := &Interpolated{}
	i := 0
	for i < len(s) {
		j := strings.Index(s[i:], "${")
		if j < 0 {
			out.Parts = append(out.Parts, Part{Text: s[i:], Offset: i})
			break
		}
		if j > 0 {
			out.Parts = append(out.Parts, Part{Text: s[i : i+j], Offset: i})
		}
		start := i + j
		p := &parser{src: s, off: start + 2}
		if err := p.next(); err != nil {
			return nil, err
		}
		if p.tok.kind == tRBrace {
			return nil, p.errf(start, "empty substitution ${}")
		}
		n, err := p.parseSub()
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tRBrace {
			if p.tok.kind == tEOF {
				return nil, p.errf(start, "unterminated substitution: missing \"}\"")
			}
			return nil, p.errf(p.tok.off, "expected \"}\" to close the substitution, found %s", p.tok.describe())
		}
		out.Parts = append(out.Parts, Part{Sub: n, Offset: start})
		i = p.off
	}
	return out, nil
}

// parseSub parses one substitution (the grammar's start symbol).
func (p *parser) parseSub() (Node, error) {
	t := p.tok
	switch t.kind {
	case tString:
		if err := p.next(); err != nil {
			return nil, err
		}
		return &Literal{pos: pos(t.off), Kind: StringLit, Str: t.text}, nil
	case tNumber:
		if err := p.next(); err != nil {
			return nil, err
		}
		if strings.Contains(t.text, ".") {
			f, err := strconv.ParseFloat(t.text, 64)
			if err != nil || math.IsInf(f, 0) {
				return nil, p.errf(t.off, "float literal %s out of range", t.text)
			}
			return &Literal{pos: pos(t.off), Kind: FloatLit, Float: f, Raw: t.text}, nil
		}
		v, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, p.errf(t.off, "int literal %s out of range", t.text)
		}
		return &Literal{pos: pos(t.off), Kind: IntLit, Int: v, Raw: t.text}, nil
	case tName:
		// handled below
	default:
		return nil, p.errf(t.off, "expected a reference, function call or literal, found %s", t.describe())
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind == tLParen {
		if p.tok.space {
			return nil, p.errf(p.tok.off, "no whitespace is allowed between the function name %s and \"(\"", t.text)
		}
		return p.parseCall(t)
	}
	if (p.tok.kind == tDot || p.tok.kind == tLBracket) && p.tok.space {
		return nil, p.errf(p.tok.off, "no whitespace is allowed inside a reference")
	}
	switch t.text {
	case "true", "false":
		return &Literal{pos: pos(t.off), Kind: BoolLit, Bool: t.text == "true"}, nil
	case "i":
		return &ElemIndex{pos: pos(t.off)}, nil
	case "elem":
		path, err := p.parsePath()
		if err != nil {
			return nil, err
		}
		return &Elem{pos: pos(t.off), Path: path}, nil
	case "variables":
		name, err := p.parseNameAccessor("variables")
		if err != nil {
			return nil, err
		}
		if p.tok.kind == tDot || p.tok.kind == tLBracket {
			return nil, p.errf(p.tok.off, "variables.%s can not have nested fields or indexes: variables are scalars", name)
		}
		return &Variable{pos: pos(t.off), Name: name}, nil
	case "values":
		name, err := p.parseNameAccessor("values")
		if err != nil {
			return nil, err
		}
		path, err := p.parsePath()
		if err != nil {
			return nil, err
		}
		return &Value{pos: pos(t.off), Name: name, Path: path}, nil
	case "resources":
		name, err := p.parseNameAccessor("resources")
		if err != nil {
			return nil, err
		}
		path, err := p.parsePath()
		if err != nil {
			return nil, err
		}
		return &Resource{pos: pos(t.off), Name: name, Path: path}, nil
	case "datasources":
		name, err := p.parseNameAccessor("datasources")
		if err != nil {
			return nil, err
		}
		field, err := p.parseNameAccessor("datasources." + name)
		if err != nil {
			return nil, err
		}
		n := &DataSource{pos: pos(t.off), Name: name, Field: field}
		if p.tok.kind == tLBracket {
			a, err := p.parseBracket()
			if err != nil {
				return nil, err
			}
			if !a.IsIndex {
				return nil, p.errf(p.tok.off, "a data source field takes only an index accessor")
			}
			n.Index = &a
		}
		if p.tok.kind == tDot || p.tok.kind == tLBracket {
			return nil, p.errf(p.tok.off, "data source fields take at most one index accessor: datasources.{name}.{field}[n]")
		}
		return n, nil
	case "children":
		name, err := p.parseNameAccessor("children")
		if err != nil {
			return nil, err
		}
		path, err := p.parsePath()
		if err != nil {
			return nil, err
		}
		if len(path) == 0 {
			return nil, p.errf(p.tok.off, "children.%s needs a field: children.{name}.{field}", name)
		}
		return &Child{pos: pos(t.off), Name: name, Path: path}, nil
	}
	path, err := p.parsePath()
	if err != nil {
		return nil, err
	}
	return &Resource{pos: pos(t.off), Name: t.text, Bare: true, Path: path}, nil
}

func (p *parser) parseCall(name token) (Node, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > MaxDepth {
		return nil, p.errf(name.off, "function calls nested deeper than %d", MaxDepth)
	}
	if err := p.next(); err != nil { // consume "("
		return nil, err
	}
	c := &Call{pos: pos(name.off), Name: name.text}
	if p.tok.kind != tRParen {
		for {
			var a Arg
			if p.tok.kind == tName {
				// Look ahead for a named argument: name "=".
				save, saveTok := p.off, p.tok
				if err := p.next(); err != nil {
					return nil, err
				}
				if p.tok.kind == tEquals {
					a.Name = saveTok.text
					if err := p.next(); err != nil {
						return nil, err
					}
				} else {
					p.off, p.tok = save, saveTok
				}
			}
			v, err := p.parseSub()
			if err != nil {
				return nil, err
			}
			a.Value = v
			c.Args = append(c.Args, a)
			if p.tok.kind == tComma {
				if err := p.next(); err != nil {
					return nil, err
				}
				continue
			}
			break
		}
	}
	if p.tok.kind != tRParen {
		return nil, p.errf(p.tok.off, "expected \",\" or \")\" in the arguments of %s(), found %s", c.Name, p.tok.describe())
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	path, err := p.parsePath()
	if err != nil {
		return nil, err
	}
	c.Path = path
	return c, nil
}

// parseNameAccessor reads "." name or ["quoted name"].
func (p *parser) parseNameAccessor(after string) (string, error) {
	if (p.tok.kind == tDot || p.tok.kind == tLBracket) && p.tok.space {
		return "", p.errf(p.tok.off, "no whitespace is allowed inside a reference")
	}
	switch p.tok.kind {
	case tDot:
		if err := p.next(); err != nil {
			return "", err
		}
		if err := p.noSpace(); err != nil {
			return "", err
		}
		if p.tok.kind != tName {
			return "", p.errf(p.tok.off, "expected a name after \"%s.\", found %s", after, p.tok.describe())
		}
		name := p.tok.text
		return name, p.next()
	case tLBracket:
		off := p.tok.off
		a, err := p.parseBracket()
		if err != nil {
			return "", err
		}
		if a.IsIndex {
			return "", p.errf(off, "expected a name accessor after %s, found an index", after)
		}
		return a.Name, nil
	}
	return "", p.errf(p.tok.off, "expected \".name\" or [\"name\"] after %s, found %s", after, p.tok.describe())
}

// noSpace rejects whitespace before the current token, inside a reference.
func (p *parser) noSpace() error {
	if p.tok.space {
		return p.errf(p.tok.off, "no whitespace is allowed inside a reference")
	}
	return nil
}

// parseBracket reads [n], [] or ["name"]; p.tok is "[".
func (p *parser) parseBracket() (Accessor, error) {
	open := p.tok.off
	if err := p.next(); err != nil {
		return Accessor{}, err
	}
	if err := p.noSpace(); err != nil {
		return Accessor{}, err
	}
	var a Accessor
	switch p.tok.kind {
	case tRBracket:
		a = Accessor{IsIndex: true, First: true}
	case tNumber:
		n, err := strconv.Atoi(p.tok.text)
		if err != nil || n < 0 || n > math.MaxInt32 || strings.ContainsAny(p.tok.text, "-.") {
			return a, p.errf(p.tok.off, "index %s is not a natural number", p.tok.text)
		}
		a = Accessor{IsIndex: true, Index: n}
		if err := p.next(); err != nil {
			return a, err
		}
	case tString:
		s := p.tok.text
		if s == "" {
			return a, p.errf(p.tok.off, "empty name in quotes")
		}
		for i := 0; i < len(s); i++ {
			if !isQuotedNameChar(s[i]) {
				return a, p.errf(p.tok.off, "name in quotes %q may hold only letters, digits, \"_\", \"-\" and \".\"", s)
			}
		}
		a = Accessor{Name: s, Quoted: true}
		if err := p.next(); err != nil {
			return a, err
		}
	default:
		return a, p.errf(p.tok.off, "expected an index, [] or a quoted name after \"[\", found %s", p.tok.describe())
	}
	if p.tok.kind != tRBracket {
		return a, p.errf(open, "expected \"]\" to close \"[\", found %s", p.tok.describe())
	}
	if err := p.noSpace(); err != nil {
		return a, err
	}
	return a, p.next()
}

// parsePath reads any number of name and index accessors.
func (p *parser) parsePath() ([]Accessor, error) {
	var path []Accessor
	for {
		if (p.tok.kind == tDot || p.tok.kind == tLBracket) && p.tok.space {
			return nil, p.errf(p.tok.off, "no whitespace is allowed inside a reference")
		}
		switch p.tok.kind {
		case tDot:
			if err := p.next(); err != nil {
				return nil, err
			}
			if err := p.noSpace(); err != nil {
				return nil, err
			}
			if p.tok.kind != tName {
				return nil, p.errf(p.tok.off, "expected a name after \".\", found %s", p.tok.describe())
			}
			path = append(path, Accessor{Name: p.tok.text})
			if err := p.next(); err != nil {
				return nil, err
			}
		case tLBracket:
			a, err := p.parseBracket()
			if err != nil {
				return nil, err
			}
			path = append(path, a)
		default:
			return path, nil
		}
	}
}
