package jsontext

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/quick"
)

func TestMarshalKeepsHTMLCharacters(t *testing.T) {
	v := map[string]string{"UserID": "Release <release@example.com>", "URL": "https://x/?a=1&b=2"}
	b, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"URL":"https://x/?a=1&b=2","UserID":"Release <release@example.com>"}`; string(b) != want {
		t.Fatalf("Marshal = %s, want %s", b, want)
	}
	ind, err := MarshalIndent(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"URL\": \"https://x/?a=1&b=2\",\n  \"UserID\": \"Release <release@example.com>\"\n}\n"; string(ind) != want {
		t.Fatalf("MarshalIndent = %q, want %q", ind, want)
	}
	if _, err := Marshal(func() {}); err == nil {
		t.Fatal("Marshal of a func: no error")
	}
}

// Property: the output decodes to what encoding/json's own output decodes
// to, and differs from it only where encoding/json escapes for HTML.
func TestMarshalSameValueAsEncodingJSON(t *testing.T) {
	f := func(m map[string]string) bool {
		ours, err := Marshal(m)
		if err != nil {
			return false
		}
		theirs, err := json.Marshal(m)
		if err != nil {
			return false
		}
		var a, b map[string]string
		if json.Unmarshal(ours, &a) != nil || json.Unmarshal(theirs, &b) != nil || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			if b[k] != v {
				return false
			}
		}
		esc := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")
		return esc.Replace(string(theirs)) == string(ours)
	}
	if err := quick.Check(f, nil); err != nil {
		t.Fatal(err)
	}
}
