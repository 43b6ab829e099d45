package yamlpos

import (
	"bytes"
	"fmt"
	"unicode/utf16"
)

// MaxNodes is how many YAML nodes one file may hold: go.yaml.in/yaml/v3
// builds a yaml.Node for every scalar, collection and alias before any
// other limit can look at them. A template of a flow list of 131,072 items
// (the densest file at the limit) costs 91 MiB to package and 190 MiB to
// build with --schemas (the catalog alone takes 88 MiB); at 262,144 nodes
// the latter was 270 MiB. The peer corpora's largest file holds 18,164
// nodes, bench/modules.sh's template of 4,000 instances 58,738; real
// templates take 13 bytes or more a node, so a CloudFormation template (at
// most 1 MB) holds under 80,000.
// It is also the limit of a blueprint and its includes
// (blueprint.MaxNodes).
const MaxNodes = 1 << 17

// A NodeLimitError says that a document may hold more nodes than the limit
// allows, and where the count passes it. Each reader reports it with its
// file name and its own sentinel error.
type NodeLimitError struct {
	Pos   Pos // where the count passes the limit
	Limit int
}

func (e *NodeLimitError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Pos.Line, e.Pos.Column, e.Reason())
}

// Reason is the message without the position, for errors that place it.
func (e *NodeLimitError) Reason() string {
	return fmt.Sprintf("more than %d YAML nodes (keys, values, list items, lists and mappings) by here; split the file or shorten its lists", e.Limit)
}

// CheckNodes refuses a YAML or JSON document that may hold more than
// MaxNodes nodes once go.yaml.in/yaml/v3 has decoded it into a yaml.Node
// (every document of the stream counted): it returns nil or the limit
// error, which the caller reports with its file name and sentinel. It
// reads the bytes once and allocates nothing in proportion to them (but a
// UTF-16 document, which it converts to UTF-8 first), so every reader of
// untrusted YAML calls it before decoding.
func CheckNodes(data []byte) *NodeLimitError { return checkNodes(data, MaxNodes) }

func checkNodes(data []byte, limit int) *NodeLimitError {
	n, pos := countNodes(data, limit)
	if n > limit {
		return &NodeLimitError{Pos: pos, Limit: limit}
	}
	return nil
}

// nodeBound returns an upper bound of the nodes go.yaml.in/yaml/v3 builds
// when it decodes every document of data into yaml.Node (aliases not
// expanded, as yaml.Node keeps them).
func nodeBound(data []byte) int {
	n, _ := countNodes(data, int(^uint(0)>>1))
	return n
}

// countNodes scans data as go.yaml.in/yaml/v3's scanner does (the same
// token boundaries, simple keys, indentation and block scalar extents) and
// adds, for every token, the most nodes the parser can build from it:
// one per scalar, alias and flow collection, one per block collection the
// indentation opens, and one per empty scalar the parser may insert (a
// missing key or value, a missing sequence entry, properties without
// content). It stops once the count passes limit and returns where.
func countNodes(data []byte, limit int) (int, Pos) {
	if len(data) >= 2 && (data[0] == 0xFE && data[1] == 0xFF || data[0] == 0xFF && data[1] == 0xFE) {
		data = fromUTF16(data)
	}
	if bytes.Contains(bytes.TrimPrefix(data, bom), bom) {
		return byChars(data, limit)
	}
	b := &bounder{s: data, limit: limit, keys: []simpleKey{{}}}
	b.run()
	return b.n, b.at
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// byChars is the bound of a document with a byte-order mark after its
// start: yaml.v3 skips the first character of a line, whatever it is,
// while its buffer happens to start with such a mark, so its tokens cannot
// be predicted. Every token yields at most three nodes (':' in a flow
// sequence: a mapping, an empty key, an empty value) from at least one
// character, and the stream's first document one more.
func byChars(data []byte, limit int) (int, Pos) {
	n, line, col := 2, 1, 1
	for _, r := range string(data) {
		n += 3
		if n > limit {
			return n, Pos{line, col}
		}
		col++
		if r == '\n' {
			line, col = line+1, 1
		}
	}
	return n, Pos{}
}

// fromUTF16 converts a UTF-16 document with a byte-order mark to UTF-8, as
// yaml.v3's reader does (an unpaired surrogate becomes U+FFFD, where the
// reader stops).
func fromUTF16(data []byte) []byte {
	be := data[0] == 0xFE
	u := make([]uint16, 0, len(data)/2)
	for i := 2; i+1 < len(data); i += 2 {
		if be {
			u = append(u, uint16(data[i])<<8|uint16(data[i+1]))
		} else {
			u = append(u, uint16(data[i+1])<<8|uint16(data[i]))
		}
	}
	return []byte(string(utf16.Decode(u)))
}

// maxDepth is yaml.v3's limit on nested flow collections and on block
// indentation levels: past it the parser stops with an error.
const maxDepth = 10000

type simpleKey struct {
	possible       bool
	line, col, idx int
}

type flowLevel struct {
	mapping        bool // '{' rather than '['
	content, colon bool // the current entry has content, a ':'
}

type indentLevel struct {
	col        int
	mapping    bool
	indentless bool // an indentless sequence is open at this mapping's column
}

// token kinds, for what a pending empty node needs to know of the next token
const (
	tkContent = iota // scalar, alias, flow collection start
	tkProp           // anchor or tag
	tkEntry          // '-'
	tkKey            // '?'
	tkValue          // ':'
	tkOther
)

type bounder struct {
	s     []byte
	i     int // byte offset
	line  int // 0-based, as yaml.v3's marks
	col   int // characters since the line start
	idx   int // characters since the start
	n     int
	limit int
	at    Pos

	flow    []flowLevel
	keys    []simpleKey // one per flow level, and one for the block context
	levels  []indentLevel
	allowed bool // a simple key may start here
	stop    bool // the count passed the limit
	done    bool // yaml.v3 stops here (too deep)

	pendProps  bool // properties wait for their content
	propLine   int  // line of the last property
	pendValue  bool // a block ':' waits for its value
	pendEntry  bool // a block '-' waits for its entry
	pendFlow   bool // a flow ':' waits for its value
	pendDoc    bool // a "---" waits for its content
	first      bool // no document has started
	pendLine   int  // line of the ':' or '-'
	pendIndent int  // the mapping's indentation, the '-' column
}

func (b *bounder) add(k int) {
	b.n += k
	if b.n > b.limit && !b.stop {
		b.stop = true
		b.at = Pos{b.line + 1, b.col + 1}
	}
}

func (b *bounder) indent() int {
	if len(b.levels) == 0 {
		return -1
	}
	return b.levels[len(b.levels)-1].col
}

// width is the length of the UTF-8 sequence at i (1 for a stray byte).
func (b *bounder) width(i int) int {
	switch c := b.s[i]; {
	case c < 0xC0:
		return 1
	case c < 0xE0:
		return 2
	case c < 0xF0:
		return 3
	default:
		return 4
	}
}

// brk returns the length of the line break at i, 0 if there is none: LF,
// CR, CRLF, NEL, LS and PS, as yaml.v3 reads them.
func (b *bounder) brk(i int) int {
	if i >= len(b.s) {
		return 0
	}
	switch b.s[i] {
	case '\n':
		return 1
	case '\r':
		if i+1 < len(b.s) && b.s[i+1] == '\n' {
			return 2
		}
		return 1
	case 0xC2:
		if i+1 < len(b.s) && b.s[i+1] == 0x85 {
			return 2
		}
	case 0xE2:
		if i+2 < len(b.s) && b.s[i+1] == 0x80 && (b.s[i+2] == 0xA8 || b.s[i+2] == 0xA9) {
			return 3
		}
	}
	return 0
}

func (b *bounder) is(i int, c byte) bool { return i < len(b.s) && b.s[i] == c }
func (b *bounder) blank(i int) bool      { return b.is(i, ' ') || b.is(i, '\t') }
func (b *bounder) blankz(i int) bool     { return i >= len(b.s) || b.blank(i) || b.brk(i) > 0 }
func (b *bounder) breakz(i int) bool     { return i >= len(b.s) || b.brk(i) > 0 }
func (b *bounder) alpha(i int) bool {
	if i >= len(b.s) {
		return false
	}
	c := b.s[i]
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c == '-'
}

// adv moves past one character (not a line break).
func (b *bounder) adv() {
	if b.i < len(b.s) {
		b.i += b.width(b.i)
		b.col++
		b.idx++
	}
}

// advLine moves past the line break at i.
func (b *bounder) advLine() {
	w := b.brk(b.i)
	b.i += w
	b.idx += w
	b.line++
	b.col = 0
}

// docIndicator reports whether a "---" or "..." starts the line here.
func (b *bounder) docIndicator() bool {
	if b.col != 0 || b.i+3 > len(b.s) {
		return false
	}
	c := b.s[b.i]
	return (c == '-' || c == '.') && b.s[b.i+1] == c && b.s[b.i+2] == c && b.blankz(b.i+3)
}

func (b *bounder) run() {
	if len(b.s) >= 3 && b.s[0] == 0xEF && b.s[1] == 0xBB && b.s[2] == 0xBF {
		b.i = 3 // the reader drops the byte-order mark
	}
	b.first = true
	b.allowed = true // at the stream start
	for !b.stop && !b.done {
		b.skipToToken()
		if len(b.flow) == 0 {
			b.unroll(b.col)
		}
		if b.i >= len(b.s) {
			b.resolve(tkOther)
			return
		}
		c := b.s[b.i]
		flow := len(b.flow) > 0
		if b.first && !(b.col == 0 && c == '%') && !b.docIndicator() {
			b.add(1) // the implicit first document
		}
		if b.first && !(b.docIndicator() && c == '.') {
			b.first = false
		}
		switch {
		case b.col == 0 && c == '%':
			b.resolve(tkOther)
			b.unroll(-1)
			b.removeKey()
			b.allowed = false
			for !b.breakz(b.i) {
				b.adv()
			}
		case b.docIndicator():
			b.resolve(tkOther)
			b.unroll(-1)
			b.removeKey()
			b.allowed = false
			b.adv()
			b.adv()
			b.adv()
			if c == '-' {
				b.add(1) // the document
				b.pendDoc = true
			}
		case c == '[' || c == '{':
			b.resolve(tkContent)
			b.add(1)
			b.saveKey()
			b.markEntry()
			b.flow = append(b.flow, flowLevel{mapping: c == '{'})
			b.keys = append(b.keys, simpleKey{})
			if len(b.flow) > maxDepth {
				return // yaml.v3: "exceeded max depth"
			}
			b.allowed = true
			b.adv()
		case c == ']' || c == '}':
			b.resolve(tkOther)
			b.removeKey()
			if flow {
				b.closeEntry()
				b.flow = b.flow[:len(b.flow)-1]
				b.keys = b.keys[:len(b.keys)-1]
			}
			b.allowed = false
			b.adv()
		case c == ',':
			b.resolve(tkOther)
			b.removeKey()
			b.allowed = true
			if flow {
				b.closeEntry()
			}
			b.adv()
		case c == '-' && b.blankz(b.i+1):
			b.resolve(tkEntry)
			if flow {
				b.add(2)
			} else {
				b.roll(b.col, false)
				b.pendEntry, b.pendLine, b.pendIndent = true, b.line, b.col
			}
			b.removeKey()
			b.allowed = true
			b.adv()
		case c == '?' && (flow || b.blankz(b.i+1)):
			b.resolve(tkKey)
			b.add(3) // a mapping, an empty key, an empty value
			b.roll(b.col, true)
			b.removeKey()
			b.allowed = !flow
			b.markEntry()
			b.adv()
		case c == ':' && (flow || b.blankz(b.i+1)):
			b.value()
		case c == '*':
			b.resolve(tkContent)
			b.add(1)
			b.saveKey()
			b.allowed = false
			b.markEntry()
			b.adv()
			for b.alpha(b.i) {
				b.adv()
			}
		case c == '&' || c == '!':
			b.resolve(tkProp)
			b.saveKey()
			b.allowed = false
			b.markEntry()
			b.pendProps, b.propLine = true, b.line
			b.adv()
			if c == '&' {
				for b.alpha(b.i) {
					b.adv()
				}
			} else {
				for !b.blankz(b.i) {
					b.adv()
				}
			}
		case (c == '|' || c == '>') && !flow:
			b.resolve(tkContent)
			b.add(1)
			b.removeKey()
			b.allowed = true
			b.blockScalar()
		case c == '\'' || c == '"':
			b.resolve(tkContent)
			b.add(1)
			b.saveKey()
			b.allowed = false
			b.markEntry()
			b.quoted(c == '\'')
		case b.plainStart(c, flow):
			b.resolve(tkContent)
			b.add(1)
			b.saveKey()
			b.allowed = false
			b.markEntry()
			b.plain()
		default:
			// yaml.v3 stops here ("found character that cannot start
			// any token"); going on can only count more.
			b.adv()
		}
	}
}

// plainStart reports whether c starts a plain scalar.
func (b *bounder) plainStart(c byte, flow bool) bool {
	switch c {
	case '-': // "- " was a block entry
		return true
	case '?', ':':
		return !flow && !b.blankz(b.i+1)
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return !b.blankz(b.i)
}

// skipToToken skips blanks, comments and line breaks, as
// yaml_parser_scan_to_next_token does.
func (b *bounder) skipToToken() {
	for b.i < len(b.s) {
		for b.is(b.i, ' ') || (len(b.flow) > 0 || !b.allowed) && b.is(b.i, '\t') {
			b.adv()
		}
		if b.is(b.i, '#') {
			for !b.breakz(b.i) {
				b.adv()
			}
		}
		if b.brk(b.i) == 0 {
			return
		}
		b.advLine()
		if len(b.flow) == 0 {
			b.allowed = true
		}
	}
}

func (b *bounder) unroll(col int) {
	for len(b.levels) > 0 && b.indent() > col {
		b.levels = b.levels[:len(b.levels)-1]
	}
}

// roll opens a block collection at col if it is deeper than the current
// indentation (yaml_parser_roll_indent). A '-' at the column of a mapping
// opens an indentless sequence, which the mapping's next key closes.
func (b *bounder) roll(col int, mapping bool) {
	if len(b.flow) > 0 {
		return
	}
	if b.indent() < col {
		b.levels = append(b.levels, indentLevel{col: col, mapping: mapping})
		if len(b.levels) > maxDepth {
			b.done = true // yaml.v3: "exceeded max depth"
		}
		b.add(1)
		return
	}
	if len(b.levels) == 0 {
		return
	}
	top := &b.levels[len(b.levels)-1]
	if top.col != col || !top.mapping {
		return
	}
	if mapping {
		top.indentless = false
	} else if !top.indentless {
		top.indentless = true
		b.add(1)
	}
}

func (b *bounder) saveKey() {
	if b.allowed {
		b.keys[len(b.keys)-1] = simpleKey{possible: true, line: b.line, col: b.col, idx: b.idx}
	}
}

func (b *bounder) removeKey() { b.keys[len(b.keys)-1].possible = false }

func (b *bounder) markEntry() {
	if len(b.flow) > 0 {
		b.flow[len(b.flow)-1].content = true
	}
}

// closeEntry ends an entry of a flow collection: in a flow mapping, an
// entry without ':' gets an empty value.
func (b *bounder) closeEntry() {
	f := &b.flow[len(b.flow)-1]
	if f.mapping && f.content && !f.colon {
		b.add(1)
	}
	f.content, f.colon = false, false
}

// value handles ':' (yaml_parser_fetch_value).
func (b *bounder) value() {
	key := &b.keys[len(b.keys)-1]
	valid := key.possible && key.line == b.line && key.idx+1024 >= b.idx
	b.resolve(tkValue)
	if len(b.flow) == 0 {
		if valid {
			b.roll(key.col, true)
			key.possible = false
			b.allowed = false
		} else {
			b.add(1) // an empty key
			b.roll(b.col, true)
			b.allowed = true
		}
		b.pendValue, b.pendLine, b.pendIndent = true, b.line, b.indent()
	} else {
		f := &b.flow[len(b.flow)-1]
		if !f.mapping {
			b.add(1) // a single-pair mapping in a flow sequence
		}
		if !valid {
			b.add(1)
		}
		key.possible = false
		f.colon = true
		b.allowed = false
		b.pendFlow = true
	}
	b.adv()
}

// resolve settles the empty nodes the previous tokens may need, knowing
// the next token is of kind k and starts here.
func (b *bounder) resolve(k int) {
	if b.pendProps {
		// Content on a later line may be a key the scanner puts a KEY
		// token before, or follow a BLOCK-END: the properties then tag
		// an empty scalar.
		switch {
		case k == tkProp && b.line == b.propLine:
			return
		case k == tkContent && b.line == b.propLine:
		default:
			b.add(1)
		}
		b.pendProps = false
	}
	filled := false
	switch {
	case b.pendDoc:
		filled = k == tkContent || k == tkProp || k == tkEntry || k == tkKey || k == tkValue
	case b.pendValue:
		filled = (k == tkContent || k == tkProp) && (b.line == b.pendLine || b.col > b.pendIndent) ||
			k == tkEntry && b.line > b.pendLine && b.col >= b.pendIndent
	case b.pendEntry:
		filled = (k == tkContent || k == tkProp || k == tkEntry || k == tkKey) && (b.line == b.pendLine || b.col > b.pendIndent)
	case b.pendFlow:
		filled = k == tkContent || k == tkProp
	default:
		return
	}
	if !filled {
		b.add(1)
	}
	b.pendValue, b.pendEntry, b.pendFlow, b.pendDoc = false, false, false, false
}

// quoted skips a single- or double-quoted scalar.
func (b *bounder) quoted(single bool) {
	b.adv()
	for b.i < len(b.s) {
		if b.docIndicator() {
			return // yaml.v3 stops: "found unexpected document indicator"
		}
		c := b.s[b.i]
		switch {
		case single && c == '\'':
			b.adv()
			if !b.is(b.i, '\'') {
				return
			}
			b.adv()
		case !single && c == '"':
			b.adv()
			return
		case !single && c == '\\':
			b.adv()
			if b.brk(b.i) > 0 {
				b.advLine()
			} else {
				b.adv()
			}
		case b.brk(b.i) > 0:
			b.advLine()
		default:
			b.adv()
		}
	}
}

// plain skips a plain scalar (yaml_parser_scan_plain_scalar), with its
// continuation lines.
func (b *bounder) plain() {
	flow := len(b.flow) > 0
	indent := b.indent() + 1
	leading := false
	for {
		if b.docIndicator() || b.is(b.i, '#') {
			break
		}
		for !b.blankz(b.i) {
			c := b.s[b.i]
			if c == ':' && b.blankz(b.i+1) || flow && (c == ',' || c == '?' || c == '[' || c == ']' || c == '{' || c == '}') {
				break
			}
			b.adv()
		}
		if !b.blank(b.i) && b.brk(b.i) == 0 {
			break
		}
		for b.blank(b.i) || b.brk(b.i) > 0 {
			if b.blank(b.i) {
				if leading && b.col < indent && b.s[b.i] == '\t' {
					return // yaml.v3 stops: "found a tab character that violates indentation"
				}
				b.adv()
			} else {
				b.advLine()
				leading = true
			}
		}
		if !flow && b.col < indent {
			break
		}
	}
	if leading {
		b.allowed = true
	}
}

// blockScalar skips a literal or folded scalar
// (yaml_parser_scan_block_scalar).
func (b *bounder) blockScalar() {
	b.adv()
	increment := 0
	digit := func() bool { return b.i < len(b.s) && b.s[b.i] >= '0' && b.s[b.i] <= '9' }
	if b.is(b.i, '+') || b.is(b.i, '-') {
		b.adv()
		if digit() {
			if b.s[b.i] == '0' {
				return // yaml.v3 stops: an indentation indicator of 0
			}
			increment = int(b.s[b.i] - '0')
			b.adv()
		}
	} else if digit() {
		if b.s[b.i] == '0' {
			return // yaml.v3 stops: an indentation indicator of 0
		}
		increment = int(b.s[b.i] - '0')
		b.adv()
		if b.is(b.i, '+') || b.is(b.i, '-') {
			b.adv()
		}
	}
	for b.blank(b.i) {
		b.adv()
	}
	if b.is(b.i, '#') {
		for !b.breakz(b.i) {
			b.adv()
		}
	}
	if !b.breakz(b.i) {
		return // yaml.v3 stops: "did not find expected comment or line break"
	}
	if b.brk(b.i) > 0 {
		b.advLine()
	}
	indent := 0
	if increment > 0 {
		if cur := b.indent(); cur >= 0 {
			indent = cur + increment
		} else {
			indent = increment
		}
	}
	if !b.blockBreaks(&indent) {
		return
	}
	for b.col == indent && b.i < len(b.s) {
		for !b.breakz(b.i) {
			b.adv()
		}
		if b.brk(b.i) > 0 {
			b.advLine()
		}
		if !b.blockBreaks(&indent) {
			return
		}
	}
}

// blockBreaks skips the indentation and empty lines of a block scalar and
// settles its indentation (yaml_parser_scan_block_scalar_breaks).
func (b *bounder) blockBreaks(indent *int) bool {
	maxIndent := 0
	for {
		for (*indent == 0 || b.col < *indent) && b.is(b.i, ' ') {
			b.adv()
		}
		maxIndent = max(maxIndent, b.col)
		if (*indent == 0 || b.col < *indent) && b.is(b.i, '\t') {
			return false // yaml.v3 stops: "found a tab character where an indentation space is expected"
		}
		if b.brk(b.i) == 0 {
			break
		}
		b.advLine()
	}
	if *indent == 0 {
		*indent = max(maxIndent, b.indent()+1, 1)
	}
	return true
}
