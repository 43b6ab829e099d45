package assembly

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzManifest: a manifest that parses prints to bytes that parse again and
// print the same (parse -> print -> parse is stable); failures are always
// ErrManifest or ErrTooLarge.
func FuzzManifest(f *testing.F) {
	f.Add(readSeed(f))
	f.Add([]byte(manifestWith(stack("A", `,"parameters":{"P":"${B.output.X} \\${x}"}`) + "," + stack("B", ""))))
	f.Add([]byte(`{"schema":"cloud-assembly/1.0","droplets":{},"missing":{"k":{"provider":"p","props":{"a":[1.50,true,null]}}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseManifest(b)
		if err != nil {
			if !errors.Is(err, ErrManifest) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("error of no class: %v", err)
			}
			return
		}
		out, err := m.Marshal()
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		m2, err := ParseManifest(out)
		if err != nil {
			t.Fatalf("printed manifest does not parse: %v\n%s", err, out)
		}
		out2, err := m2.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("print is not stable:\n%s\n---\n%s", out, out2)
		}
		// Validation gives the same verdict on the reprinted manifest.
		_, e1 := m.Validate(CheckOptions{})
		_, e2 := m2.Validate(CheckOptions{})
		if (e1 == nil) != (e2 == nil) {
			t.Fatalf("validate differs: %v vs %v", e1, e2)
		}
		if e1 != nil && !errors.Is(e1, ErrManifest) {
			t.Fatalf("validation error of no class: %v", e1)
		}
	})
}

// FuzzReferences: a string that parses prints back to itself, and printed
// parts parse back to the same parts; failures are ErrReference.
func FuzzReferences(f *testing.F) {
	for _, s := range []string{"", "plain", "${A.b}", `\${A.b}`, `a\\b`, `x${A.output.N}y\\`, `a\b`, "${A", "$${A.b}", `\\\${`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parts, err := ParseString(s)
		if err != nil {
			if !errors.Is(err, ErrReference) {
				t.Fatalf("error of no class: %v", err)
			}
			return
		}
		out := FormatString(parts)
		if out != s {
			t.Fatalf("FormatString(ParseString(%q)) = %q", s, out)
		}
		// Literal-only parts built by hand also survive a round trip.
		lit := FormatString([]Part{{Literal: s}})
		back, err := ParseString(lit)
		if err != nil {
			t.Fatalf("escaped literal %q does not parse: %v", lit, err)
		}
		if len(s) > 0 && (len(back) != 1 || back[0].Literal != s) {
			t.Fatalf("literal %q came back as %+v", s, back)
		}
	})
}
