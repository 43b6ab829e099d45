// Package strictjson decodes one JSON value strictly, for the files whose
// bytes are signed or trusted (manifest.json, the attestation): duplicate
// keys at any depth, nesting beyond a bound, data after the value and
// invalid UTF-8 are errors with a line and column, where encoding/json would
// keep the last duplicate, recurse as deep as the input goes, and replace
// bad UTF-8 with U+FFFD.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// A SyntaxError is a JSON error at a 1-based line and column (in bytes).
type SyntaxError struct {
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Msg) }

// Decode decodes the single JSON value in b. Objects become map[string]any,
// arrays []any, numbers json.Number, and strings, booleans and null as
// encoding/json decodes them into an any. Values nested more than maxDepth
// levels below the top one are refused. Every error is a *SyntaxError.
func Decode(b []byte, maxDepth int) (any, error) {
	if !utf8.Valid(b) {
		return nil, syntaxErr(b, int64(firstInvalidUTF8(b)), "not valid UTF-8")
	}
	d := decoder{dec: json.NewDecoder(bytes.NewReader(b)), b: b, maxDepth: maxDepth}
	d.dec.UseNumber()
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	end := d.dec.InputOffset()
	if _, err := d.dec.Token(); err != io.EOF {
		return nil, syntaxErr(b, skipBlanks(b, end), "data after the top-level value")
	}
	return v, nil
}

type decoder struct {
	dec      *json.Decoder
	b        []byte
	maxDepth int
}

func (d *decoder) value(depth int) (any, error) {
	dec, b := d.dec, d.b
	if depth > d.maxDepth {
		return nil, syntaxErr(b, dec.InputOffset(), fmt.Sprintf("nested deeper than %d levels", d.maxDepth))
	}
	off := dec.InputOffset()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonErr(b, off, err)
	}
	switch tok := tok.(type) {
	case json.Delim:
		switch tok {
		case '{':
			obj := map[string]any{}
			for dec.More() {
				koff := dec.InputOffset()
				kt, err := dec.Token()
				if err != nil {
					return nil, jsonErr(b, koff, err)
				}
				key, _ := kt.(string)
				if _, dup := obj[key]; dup {
					return nil, syntaxErr(b, keyStart(b, koff), fmt.Sprintf("duplicate key %q", key))
				}
				val, err := d.value(depth + 1)
				if err != nil {
					return nil, err
				}
				obj[key] = val
			}
			if _, err := dec.Token(); err != nil {
				return nil, jsonErr(b, dec.InputOffset(), err)
			}
			return obj, nil
		case '[':
			arr := []any{}
			for dec.More() {
				val, err := d.value(depth + 1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, val)
			}
			if _, err := dec.Token(); err != nil {
				return nil, jsonErr(b, dec.InputOffset(), err)
			}
			return arr, nil
		}
		return nil, syntaxErr(b, off, fmt.Sprintf("unexpected %q", tok))
	default:
		return tok, nil
	}
}

// keyStart skips the separator and blanks before a key at off.
func keyStart(b []byte, off int64) int64 {
	off = skipBlanks(b, off)
	if off < int64(len(b)) && b[off] == ',' {
		off++
	}
	return skipBlanks(b, off)
}

// skipBlanks skips JSON whitespace at off.
func skipBlanks(b []byte, off int64) int64 {
	for off < int64(len(b)) && (b[off] == ' ' || b[off] == '\t' || b[off] == '\n' || b[off] == '\r') {
		off++
	}
	return off
}

func jsonErr(b []byte, off int64, err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return syntaxErr(b, int64(len(b)), "unexpected end of JSON")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// The token reader's offsets are approximate; the full scanner's
		// is exact: it points just past the offending byte.
		var raw json.RawMessage
		if err := json.Unmarshal(b, &raw); errors.As(err, &se) && se.Offset > 0 {
			return syntaxErr(b, se.Offset-1, se.Error())
		}
		off = se.Offset
	}
	return syntaxErr(b, off, err.Error())
}

func syntaxErr(b []byte, off int64, msg string) error {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	line, col := 1, 1
	for _, c := range b[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &SyntaxError{Line: line, Column: col, Msg: msg}
}

func firstInvalidUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// Kind names the JSON type of a value Decode returned, for messages:
// "an object", "an array", "a string", "a number", "a boolean" or "null".
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return "a number"
}
