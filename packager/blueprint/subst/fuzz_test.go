package subst

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// FuzzParseString checks that parsing never panics, that every failure is a
// SyntaxError, and that parse -> print -> parse is stable.
func FuzzParseString(f *testing.F) {
	seeds := 0
	for _, dir := range []string{"testdata", filepath.Join("..", "..", "..", "fixtures", "blueprints")} {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				continue
			}
			for _, m := range regexp.MustCompile(`\$\{[^\n]*`).FindAll(b, -1) {
				f.Add(string(m))
				seeds++
			}
		}
	}
	if seeds == 0 {
		f.Fatal("no seeds found in testdata")
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		in, err := ParseString(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v is not a SyntaxError", err)
			}
			if se.Offset < 0 || se.Offset > len(s) {
				t.Fatalf("offset %d outside input of %d bytes", se.Offset, len(s))
			}
			return
		}
		printed := in.String()
		again, err := ParseString(printed)
		if err != nil {
			t.Fatalf("printed form %q of %q does not parse: %v", printed, s, err)
		}
		if again.String() != printed {
			t.Fatalf("unstable: %q -> %q -> %q", s, printed, again.String())
		}
	})
}
