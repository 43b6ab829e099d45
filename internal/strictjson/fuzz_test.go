package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

const fuzzDepth = 16

// FuzzDecode: whatever Decode accepts, encoding/json accepts too and decodes
// to the same value; what encoding/json accepts and Decode refuses is valid
// UTF-8 refused only for a duplicate key or depth; every error is a
// *SyntaxError at a place inside the input; and an accepted object with one
// of its keys repeated in front is always refused as a duplicate.
func FuzzDecode(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("..", "..", "assembly", "testdata", "*.json"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seed files in assembly/testdata (%v)", err)
	}
	for _, name := range seeds {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{`{"a":1,"a":2}`, `[[[[]]]]`, `{} {}`, "{\"s\":\"\xff\"}", `{"k":1,"\u006b":2}`, `1e400`, `"\ud800"`, `{"a":{"b":[1,{"c":null}]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Decode(b, fuzzDepth)
		var want any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		stdErr := dec.Decode(&want)
		if stdErr == nil {
			if _, e := dec.Token(); e == nil || !json.Valid(b) {
				stdErr = errors.New("trailing data")
			}
		}
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error is not a *SyntaxError: %v", err)
			}
			lines := bytes.Count(b, []byte("\n")) + 1
			if se.Line < 1 || se.Line > lines || se.Column < 1 || se.Column > len(b)+1 {
				t.Fatalf("error place %d:%d outside the input (%d lines, %d bytes)", se.Line, se.Column, lines, len(b))
			}
			if stdErr == nil && utf8.Valid(b) && !strings.HasPrefix(se.Msg, "duplicate key ") && !strings.HasPrefix(se.Msg, "nested deeper than ") {
				t.Fatalf("encoding/json accepts %q, Decode refuses it: %v", b, err)
			}
			return
		}
		if stdErr != nil {
			t.Fatalf("Decode accepts %q, encoding/json refuses it: %v", b, stdErr)
		}
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("Decode gives %#v, encoding/json %#v", v, want)
		}
		obj, ok := v.(map[string]any)
		if !ok || len(obj) == 0 {
			return
		}
		keys := slices.Sorted(maps.Keys(obj))
		kj, _ := json.Marshal(keys[0])
		trimmed := bytes.TrimLeft(b, " \t\r\n")
		dup := append(append(append([]byte("{"), kj...), ":0,"...), trimmed[1:]...)
		_, err = Decode(dup, fuzzDepth)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Msg != "duplicate key "+string(kj) {
			t.Fatalf("Decode(%q) = %v, want duplicate key %s", dup, err, kj)
		}
	})
}
