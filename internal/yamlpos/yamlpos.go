// Package yamlpos says where a YAML document's syntax error is.
//
// go.yaml.in/yaml/v3, which the project parses YAML with, reports a syntax
// error as "yaml: line N: message", where N is the line on which the
// enclosing block, flow collection or quoted scalar starts (the parser's
// context mark), not the line where it failed, and gives no column at all.
// Locate parses the document again with go.yaml.in/yaml/v4, whose errors
// carry the mark where the parser stopped, and uses that position when
// both parsers fail for the same reason.
//
// CheckNodes bounds, before yaml.v3 runs, the nodes it would build from a
// document: every reader of untrusted YAML calls it first.
package yamlpos

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	y4 "go.yaml.in/yaml/v4"
)

// A Pos is a place in a document: 1-based line and column (in runes), 0
// when unknown.
type Pos struct {
	Line, Column int
}

// v3Line matches go-yaml's "yaml: line N: message".
var v3Line = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// Locate returns the position of err, a syntax error go.yaml.in/yaml/v3
// returned for data, and its message without the "yaml: line N:" prefix.
// A document holding binary data (control characters, invalid UTF-8) is
// reported at the first such byte, as "binary data".
func Locate(data []byte, err error) (Pos, string) {
	raw := strings.TrimPrefix(err.Error(), "yaml: ")
	msg, pos := raw, Pos{}
	if m := v3Line.FindStringSubmatch(err.Error()); m != nil {
		pos.Line, _ = strconv.Atoi(m[1])
		pos.Column = 1
		msg = m[2]
	}
	if p, what, ok := Binary(data); ok {
		return p, what
	}
	if le := parse4(data); le != nil && sameProblem(msg, le.Message) {
		if c := le.ContextMark; le.ContextMsg != "" && c.Line > 0 && c != le.Mark {
			// Where the unclosed construct starts says what to fix.
			msg += fmt.Sprintf(" (%s started at line %d, column %d)", le.ContextMsg, c.Line, max(c.Column, 1))
		}
		return Pos{le.Mark.Line, max(le.Mark.Column, 1)}, msg
	}
	return pos, msg
}

// parse4 parses every document of data with yaml v4 and returns its first
// error, if it has a position.
func parse4(data []byte) *y4.LoadError {
	dec := y4.NewDecoder(bytes.NewReader(data))
	for i := 0; i < 1000; i++ {
		var n y4.Node
		err := dec.Decode(&n)
		if err == nil {
			continue
		}
		var le *y4.LoadError
		if errors.Is(err, io.EOF) || !errors.As(err, &le) || le.Mark.Line <= 0 {
			return nil
		}
		return le
	}
	return nil
}

// sameProblem reports whether v4's message says what v3's does (v4 may
// append details in parentheses).
func sameProblem(v3, v4 string) bool {
	return v3 == v4 || strings.HasPrefix(v4, v3+" (")
}

// Binary reports whether data holds what no YAML or JSON text holds: a C0
// control character other than tab, line feed and carriage return, or
// bytes that are not UTF-8 (UTF-16 and UTF-32 with a byte-order mark, which
// YAML allows, are not binary). It returns the position of the first such
// byte and a message naming it.
func Binary(data []byte) (Pos, string, bool) {
	if bytes.HasPrefix(data, []byte{0xFE, 0xFF}) || bytes.HasPrefix(data, []byte{0xFF, 0xFE}) ||
		bytes.HasPrefix(data, []byte{0, 0, 0xFE, 0xFF}) {
		return Pos{}, "", false
	}
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return Pos{line, col}, fmt.Sprintf("binary data (byte 0x%02X is not UTF-8 text)", data[i]), true
		case r < 0x20 && r != '\t' && r != '\n' && r != '\r':
			return Pos{line, col}, fmt.Sprintf("binary data (control character 0x%02X)", r), true
		case r == '\n', r == '\r' && (i+1 == len(data) || data[i+1] != '\n'):
			// YAML breaks lines at LF, CRLF and a lone CR.
			line, col = line+1, 0
		}
		col++
		i += size
	}
	return Pos{}, "", false
}
