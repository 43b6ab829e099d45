package digest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const emptyHex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func TestRoundTrip(t *testing.T) {
	d := Of(nil)
	if d.String() != "sha256:"+emptyHex || d.Hex() != emptyHex {
		t.Fatalf("Of(nil) = %s", d)
	}
	p, err := Parse(d.String())
	if err != nil || p != d {
		t.Fatalf("Parse(%s) = %v, %v", d, p, err)
	}
	h := NewHasher()
	h.Write([]byte("ab"))
	h.Write([]byte("c"))
	if h.Digest() != Of([]byte("abc")) || h.Size() != 3 {
		t.Fatal("Hasher disagrees with Of")
	}
	b, _ := json.Marshal(struct{ D Digest }{d})
	if string(b) != `{"D":"sha256:`+emptyHex+`"}` {
		t.Fatalf("JSON %s", b)
	}
	var back struct{ D Digest }
	if err := json.Unmarshal(b, &back); err != nil || back.D != d {
		t.Fatalf("JSON back %v %v", back.D, err)
	}
	var zero Digest
	if !zero.IsZero() || zero.String() != "" {
		t.Fatal("zero Digest")
	}
}

func TestParseRefuses(t *testing.T) {
	for _, s := range []string{
		"", emptyHex, "sha256:" + strings.ToUpper(emptyHex), "sha512:" + emptyHex,
		"sha256:" + emptyHex[:63], "sha256:" + emptyHex + "0", "sha256:" + emptyHex[:63] + "g",
	} {
		if _, err := Parse(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("Parse(%q) = %v, want ErrMalformed", s, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("sha256:" + emptyHex)
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err != nil {
			return
		}
		if d.String() != s {
			t.Fatalf("Parse(%q).String() = %q", s, d)
		}
	})
}
