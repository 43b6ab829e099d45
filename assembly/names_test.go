package assembly

import (
	"bytes"
	"errors"
	"testing"
	"unicode"
)

// Two names that a case-insensitive file system takes for one must be
// refused as duplicates, whichever letters they use. The rule is checked
// against the unicode package's own tables, not against the folding the
// name set uses: every pair of runes in one case orbit (unicode.SimpleFold:
// the equivalence macOS and Windows apply) and every rune beside its simple
// upper case (what NTFS's upcase table compares), as a file and as a
// folder holding a file. Among them: Cherokee, which golang.org/x/text
// folds to lower case one way and to upper case the other, and the dotless
// ı, which NTFS upper-cases to I.
func TestCaseVariantsAreDuplicates(t *testing.T) {
	checked := 0
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		if 0xd800 <= r && r < 0xe000 {
			continue
		}
		var partners []rune
		for p := unicode.SimpleFold(r); p != r; p = unicode.SimpleFold(p) {
			partners = append(partners, p)
		}
		if u := unicode.ToUpper(r); u != r {
			partners = append(partners, u)
		}
		for _, p := range partners {
			a, b := "x"+string(r), "x"+string(p)
			if CheckName(a) != nil || CheckName(b) != nil {
				continue
			}
			checked++
			s := newNameSet(2)
			if err := s.addFile(a); err != nil {
				t.Fatalf("%q: %v", a, err)
			}
			if err := s.addFile(b); !errors.Is(err, ErrDuplicate) {
				t.Errorf("files %q (%U) and %q (%U): got %v, want ErrDuplicate", a, r, b, p, err)
			}
			s = newNameSet(2)
			if err := s.addFile(a); err != nil {
				t.Fatal(err)
			}
			if err := s.addFile(b + "/f"); !errors.Is(err, ErrDuplicate) {
				t.Errorf("file %q and folder %q: got %v, want ErrDuplicate", a, b+"/", err)
			}
		}
	}
	if checked < 2000 {
		t.Fatalf("only %d case pairs checked", checked)
	}
	// The reader and the writer share the rule.
	for _, pair := range [][2]string{{"stacks/\u13cd.yml", "stacks/\uab9d.yml"}, {"\u0131ndex.html", "Index.html"}} {
		b := rawZip(t, pair[0], pair[1])
		if _, err := NewReader(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrDuplicate) {
			t.Errorf("NewReader of %q and %q: got %v, want ErrDuplicate", pair[0], pair[1], err)
		}
		w := NewWriter(WriterOptions{})
		if err := w.AddBytes(pair[0], nil); err != nil {
			t.Fatal(err)
		}
		if err := w.AddBytes(pair[1], nil); !errors.Is(err, ErrDuplicate) {
			t.Errorf("Writer.AddBytes of %q after %q: got %v, want ErrDuplicate", pair[1], pair[0], err)
		}
	}
}
