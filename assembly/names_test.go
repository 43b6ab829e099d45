package assembly

import (
	"bytes"
	"errors"
	"strings"
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

// The root names the spec reserves, manifest.json and signature.asc, are
// files spelled exactly so. A folder of either name, or a file whose name
// is one of them in other letter cases, is refused by the reader and the
// writer alike: sign would add signature.asc beside it and write an
// archive that no reader accepts, and on macOS or Windows "SIGNATURE.ASC"
// is signature.asc.
func TestReservedRootNames(t *testing.T) {
	for _, reserved := range []string{ManifestName, SignatureName} {
		variants := caseVariants(reserved)
		if len(variants) < 1<<10 {
			t.Fatalf("%d case variants of %s", len(variants), reserved)
		}
		for _, v := range variants {
			s := newNameSet(1)
			err := s.addFile(v)
			if v == reserved {
				if err != nil {
					t.Fatalf("%q: %v", v, err)
				}
			} else if !errors.Is(err, ErrInsecurePath) || !strings.Contains(err.Error(), "(rule "+RuleReserved+")") {
				t.Fatalf("file %q: got %v, want ErrInsecurePath (rule %s)", v, err, RuleReserved)
			}
			for _, folder := range []func(*nameSet) error{
				func(s *nameSet) error { return s.addFile(v + "/x") },
				func(s *nameSet) error { return s.addFolder(v) },
				func(s *nameSet) error { return s.addFolder(v + "/sub") },
			} {
				if err := folder(newNameSet(1)); !errors.Is(err, ErrInsecurePath) || !strings.Contains(err.Error(), "(rule "+RuleReserved+")") {
					t.Fatalf("folder %q: got %v, want ErrInsecurePath (rule %s)", v, err, RuleReserved)
				}
			}
		}
		// Below the root the names are free.
		if err := newNameSet(1).addFile("docs/" + strings.ToUpper(reserved)); err != nil {
			t.Fatal(err)
		}
		if err := newNameSet(1).addFile("docs/" + reserved + "/x"); err != nil {
			t.Fatal(err)
		}
	}
	// The reader and the writer share the rule: a zip -r of a project
	// holding an empty folder signature.asc/, or a file Signature.asc.
	for _, names := range [][]string{{"manifest.json", "signature.asc/"}, {"manifest.json", "Signature.asc"}} {
		b := rawZipEntries(t, names...)
		if _, err := NewReader(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrInsecurePath) {
			t.Errorf("NewReader of %q: got %v, want ErrInsecurePath", names, err)
		}
	}
	if err := NewWriter(WriterOptions{}).AddBytes("SIGNATURE.ASC/index.html", nil); !errors.Is(err, ErrInsecurePath) {
		t.Errorf("Writer: got %v, want ErrInsecurePath", err)
	}
}

// caseVariants lists every spelling of an ASCII name in upper and lower case.
func caseVariants(name string) []string {
	out := []string{""}
	for _, c := range name {
		var next []string
		for _, prefix := range out {
			next = append(next, prefix+string(unicode.ToLower(c)))
			if u := unicode.ToUpper(c); u != unicode.ToLower(c) {
				next = append(next, prefix+string(u))
			}
		}
		out = next
	}
	return out
}

// Two names that differ only in Unicode normalization print alike: the
// message shows them escaped, so the difference can be seen.
func TestDuplicateNormalizationShown(t *testing.T) {
	s := newNameSet(2)
	if err := s.addFile("site/caf\u00e9"); err != nil {
		t.Fatal(err)
	}
	err := s.addFile("site/cafe\u0301")
	if !errors.Is(err, ErrDuplicate) || !strings.Contains(err.Error(), `"site/caf\u00e9"`) || !strings.Contains(err.Error(), `"site/cafe\u0301"`) {
		t.Fatalf("got %v, want ErrDuplicate showing both names escaped", err)
	}
}
