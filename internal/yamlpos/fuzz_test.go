package yamlpos

import (
	"bytes"
	"io"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// FuzzLocate: for any document yaml v3 refuses, Locate names a place inside
// the document (line at most one past the last, column at least 1 when the
// line is known) and a non-empty message, and never panics.
func FuzzLocate(f *testing.F) {
	for _, s := range []string{
		"a: [1, 2\n  c: d\n", "a:\n  - b\n  c: d\n", "a: @x\n", "a: b: c\n", "a: 'x\n", "a: {b\n", "a: \x01\n", "\xff\xfe", "---\na: b\n---\n[\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		var err error
		for i := 0; i < 100 && err == nil; i++ {
			var n yaml.Node
			err = dec.Decode(&n)
		}
		if err == nil || err == io.EOF {
			return
		}
		pos, msg := Locate(data, err)
		if msg == "" {
			t.Errorf("empty message for %v", err)
		}
		// YAML breaks lines at LF, CRLF and a lone CR.
		lines := bytes.Count(data, []byte("\n")) + bytes.Count(data, []byte("\r")) - bytes.Count(data, []byte("\r\n")) + 1
		if pos.Line < 0 || pos.Line > lines+1 || (pos.Line > 0 && pos.Column < 1) {
			t.Errorf("position %v outside a %d-line document (%v)", pos, lines, err)
		}
	})
}
