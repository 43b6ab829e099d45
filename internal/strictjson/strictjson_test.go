package strictjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	v, err := Decode([]byte(" {\"a\": [1, 2.50, true, null, \"x\"], \"b\": {\"c\": {}}, \"é\": []}\n"), 8)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"a": []any{json.Number("1"), json.Number("2.50"), true, nil, "x"},
		"b": map[string]any{"c": map[string]any{}},
		"é": []any{},
	}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got %#v\nwant %#v", v, want)
	}
	for _, in := range []string{`"s"`, `0`, `null`, `[]`, `{}`} {
		if _, err := Decode([]byte(in), 0); err != nil {
			t.Errorf("Decode(%s): %v", in, err)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	tests := []struct {
		name, in  string
		depth     int
		line, col int
		msg       string
	}{
		{"not json", `{"schema": }`, 8, 1, 12, "invalid character '}' looking for beginning of value"},
		{"bad literal", "{\n  \"schema\": tru}", 8, 2, 16, "invalid character '}' in literal true (expecting 'e')"},
		{"duplicate top", `{"schema":"x","droplets":{},"schema":"y"}`, 8, 1, 29, `duplicate key "schema"`},
		{"duplicate nested", "{\"a\":{\"b\":[],\n  \"c\":{\"k\":1,\"k\":2}}}", 8, 2, 14, `duplicate key "k"`},
		{"duplicate in array", `[{"k":1},{"k":1,"k":1}]`, 8, 1, 17, `duplicate key "k"`},
		{"duplicate after blanks", "{\"a\":1 ,\n \"a\":2}", 8, 2, 2, `duplicate key "a"`},
		{"duplicate escaped", `{"k":1,"\u006b":2}`, 8, 1, 8, `duplicate key "k"`},
		{"trailing", `{} {}`, 8, 1, 4, "data after the top-level value"},
		{"trailing garbage", `1 x`, 8, 1, 3, "data after the top-level value"},
		{"bad utf8", "{\"s\":\"\xff\"}", 8, 1, 7, "not valid UTF-8"},
		{"bad utf8 line 2", "{\n\"s\":\"a\xc3\"}", 8, 2, 7, "not valid UTF-8"},
		{"deep", strings.Repeat("[", 10) + strings.Repeat("]", 10), 8, 1, 10, "nested deeper than 8 levels"},
		{"depth zero", `[1]`, 0, 1, 2, "nested deeper than 0 levels"},
		{"truncated", `{"a":{`, 8, 1, 7, "unexpected end of JSON"},
		{"empty", ``, 8, 1, 1, "unexpected end of JSON"},
		{"close without open", `]`, 8, 1, 1, "invalid character ']' looking for beginning of value"},
		{"missing colon", `{"a" 1}`, 8, 1, 6, "invalid character '1' after object key"},
		{"number key", `{1:2}`, 8, 1, 2, "invalid character '1' looking for beginning of object key string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.in), tt.depth)
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("got %v, want a *SyntaxError", err)
			}
			if se.Line != tt.line || se.Column != tt.col || se.Msg != tt.msg {
				t.Errorf("got %d:%d: %s\nwant %d:%d: %s", se.Line, se.Column, se.Msg, tt.line, tt.col, tt.msg)
			}
		})
	}
}

func TestSyntaxErrorString(t *testing.T) {
	err := &SyntaxError{Line: 3, Column: 7, Msg: `duplicate key "k"`}
	if got, want := err.Error(), `3:7: duplicate key "k"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
