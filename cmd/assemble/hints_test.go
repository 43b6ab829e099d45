package main

import (
	"github.com/cloud-assembly/assemble/errcode"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/assembly"

	"errors"

	"regexp"
)

// Issue 23, item 4: the README promises a hint line with every error.
// Every code an error can take (the sentinels', the assembly check's
// rules, the command's own) has one, except "interrupted" (the user
// stopped it) and "failure" (an I/O error no class names). Issue 29: one
// hint per code, in one table, and no hint text said for two codes; the
// hint counted is the one the command prints (a flagHints entry in place
// of a library's that cannot name the flag).
func TestEveryCodeHasAHint(t *testing.T) {
	hints := map[string]map[string]bool{} // code -> its hints
	add := func(code, hint string) {
		if hints[code] == nil {
			hints[code] = map[string]bool{}
		}
		hints[code][hint] = true
	}
	for _, e := range errcode.All() {
		add(e.Code(), codeHint(e.Code()))
	}
	for code, h := range ownHints {
		add(code, h)
	}
	for _, r := range assembly.Rules() {
		if r.Reading == assembly.Error || r.Writing == assembly.Error {
			add(ruleCode(r.Code), codeHint(ruleCode(r.Code)))
		}
	}
	if len(hints) < 150 {
		t.Fatalf("only %d codes", len(hints))
	}
	byText := map[string]string{}
	for code, hs := range hints {
		if len(hs) != 1 {
			t.Errorf("code %s has %d hints: %v", code, len(hs), hs)
		}
		for h := range hs {
			switch {
			case code == codeInterrupted:
				if h != "" {
					t.Errorf("code %s has a hint: %q", code, h)
				}
				continue
			case strings.TrimSpace(h) == "":
				t.Errorf("code %s has no hint", code)
				continue
			case strings.HasSuffix(h, "."):
				t.Errorf("code %s: its hint ends with a period (STYLE: no final period)", code)
			}
			if prev, dup := byText[h]; dup {
				t.Errorf("codes %s and %s have one hint: %q", prev, code, h)
			}
			byText[h] = code
		}
	}
}

// Issue 23, item 12: the README's first screen expands the bundled
// example with --root, as readme_first_screen.txtar runs it, and says
// what .ci/run installs and where the skips are listed.
func TestReadmeShowsPackageRoot(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\ngo run ./cmd/assemble package --root fixtures/examples/webapp fixtures/examples/webapp/stacks/network.yaml\n",
		"[`.ci/run`](.ci/run)",
		"assemble completion powershell",
		"go install github.com/cloud-assembly/assemble/cmd/assemble@vX.Y.Z",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("README.md does not show %q", want)
		}
	}
}

// flagHints replaces the hint of a sentinel (a coded library error) with
// one that names a flag: it says something the library's does not, and
// names a flag (else the library's would do).
func TestFlagHints(t *testing.T) {
	flag := regexp.MustCompile(`(^|[^-\w])--[a-z]`)
	for e, h := range flagHints {
		var ce *errcode.Error
		if !errors.As(e, &ce) || ce.Code() == "" {
			t.Errorf("%v: not a coded sentinel", e)
			continue
		}
		if h == ce.Hint() {
			t.Errorf("%s: flagHints repeats the library's hint", ce.Code())
		}
		if !flag.MatchString(h) {
			t.Errorf("%s: flagHints' hint names no flag: %q", ce.Code(), h)
		}
	}
}
