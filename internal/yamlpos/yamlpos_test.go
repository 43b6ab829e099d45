package yamlpos

import (
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

func locate(t *testing.T, doc string) (Pos, string) {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(doc))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err == io.EOF {
			t.Fatalf("%q parsed", doc)
		}
		if err != nil {
			return Locate([]byte(doc), err)
		}
	}
}

func TestLocate(t *testing.T) {
	tests := []struct {
		doc  string
		pos  Pos
		want string
	}{
		// v3 says line 4, where the properties block starts.
		{"Resources:\n  A:\n    Type: x\n    Properties:\n      a: [1, 2\n      c: d\n", Pos{6, 8}, "did not find expected ',' or ']'"},
		// v3 says line 1.
		{"a:\n  - b\n  c: d\n", Pos{3, 3}, "did not find expected '-' indicator"},
		// v3 gives no line at all.
		{"a: @x\n", Pos{1, 4}, "found character that cannot start any token"},
		{"Resources:\n  A:\n    Type: x\n    Properties:\n      a: b\n      c: d: e\n", Pos{6, 11}, "mapping values are not allowed in this context"},
		{"a: b\n\tc: d\n", Pos{2, 1}, "found a tab character that violates indentation"},
		{"a: {b: c\n", Pos{2, 1}, "did not find expected ',' or '}' (while parsing a flow mapping started at line 1, column 4)"},
		{"Resources: {}\n---\nb: [\n", Pos{4, 1}, "did not find expected node content"},
	}
	for _, tt := range tests {
		pos, msg := locate(t, tt.doc)
		if pos != tt.pos || !strings.HasPrefix(msg, tt.want) {
			t.Errorf("%q: got %v %q, want %v %q", tt.doc, pos, msg, tt.pos, tt.want)
		}
	}
}

func TestBinary(t *testing.T) {
	for _, tt := range []struct {
		doc string
		pos Pos
	}{
		{"a: \x01\n", Pos{1, 4}},
		{"a: b\nc: d\x00e\n", Pos{2, 5}},
		{"\x89PNG\r\n\x1a\n", Pos{1, 1}},
		{"a: é\nb: \xff\n", Pos{2, 4}},
		{"a: b\rc: \x02\r\n", Pos{2, 4}},
	} {
		pos, msg := locate(t, tt.doc)
		if pos != tt.pos || !strings.HasPrefix(msg, "binary data") {
			t.Errorf("%q: got %v %q, want %v binary data", tt.doc, pos, msg, tt.pos)
		}
	}
	for _, ok := range []string{"a: b\r\n\tc: 'é'\n", "\xff\xfea\x00:\x00", "{\"a\": \"\u2028\"}"} {
		if _, _, bin := Binary([]byte(ok)); bin {
			t.Errorf("%q taken for binary", ok)
		}
	}
}

// The rule, on generated documents: a bad character at any depth and
// place is reported at its own line and column, and a stray mapping key in
// a block sequence at the key, whatever line the enclosing block starts on.
func TestLocateProperty(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 300; i++ {
		var b strings.Builder
		line := 1
		depth := 1 + rng.Intn(5)
		for d := 0; d < depth; d++ {
			for k := rng.Intn(3); k > 0; k-- {
				fmt.Fprintf(&b, "%sk%d_%d: v\n", strings.Repeat("  ", d), d, k)
				line++
			}
			fmt.Fprintf(&b, "%sn%d:\n", strings.Repeat("  ", d), d)
			line++
		}
		indent := strings.Repeat("  ", depth)
		var want Pos
		if i%2 == 0 {
			for k := rng.Intn(4); k > 0; k-- {
				fmt.Fprintf(&b, "%sk%d: v\n", indent, k)
				line++
			}
			prefix := fmt.Sprintf("%sbad: ", indent)
			want = Pos{line, len(prefix) + 1}
			b.WriteString(prefix + "@oops\n")
		} else {
			for k := 1 + rng.Intn(4); k > 0; k-- {
				fmt.Fprintf(&b, "%s- item%d\n", indent, k)
				line++
			}
			want = Pos{line, len(indent) + 1}
			fmt.Fprintf(&b, "%sstray: key\n", indent)
		}
		for k := rng.Intn(3); k > 0; k-- {
			b.WriteString("tail: x\n")
		}
		pos, msg := locate(t, b.String())
		if pos != want {
			t.Fatalf("case %d: got %v (%s), want %v in\n%s", i, pos, msg, want, b.String())
		}
	}
}
