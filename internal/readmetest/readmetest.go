// Package readmetest checks the generated sections of a Markdown file (the
// README's tables made from code), for tests.
package readmetest

import (
	"os"
	"strings"
	"testing"
)

// Section checks that the text between the marker lines begin and end of
// the file at path is want. With update, it rewrites the section instead;
// fix names the command that does so, for the failure message.
func Section(t testing.TB, path, begin, end, want string, update bool, fix string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", path, strings.TrimSpace(begin), end)
	}
	if got := s[i+len(begin) : j]; got == want {
		return
	}
	if update {
		if err := os.WriteFile(path, []byte(s[:i+len(begin)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's section %q differs from the code (run %s); want:\n%s", path, strings.TrimSpace(begin), fix, want)
}
