package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/assembly"
)

// Issue 23, item 4: the README promises a hint line with every error.
// Every code an error can take (the sentinel table, the assembly check's
// rules, the command's own) has one, except "interrupted" (the user
// stopped it) and "failure" (an I/O error no class names).
func TestEveryCodeHasAHint(t *testing.T) {
	codes := []string{codeUsage, codeNotFound, codePermission}
	for _, c := range errorCodes {
		if c.code != codeInterrupted {
			codes = append(codes, c.code)
		}
	}
	for _, r := range assembly.Rules() {
		if r.Reading == assembly.Error || r.Writing == assembly.Error {
			codes = append(codes, ruleCode(r.Code))
		}
	}
	for _, code := range codes {
		if strings.TrimSpace(codeHints[code]) == "" {
			t.Errorf("code %s has no hint in codeHints", code)
		}
	}
	for code := range codeHints {
		if codeHints[code] != "" && strings.ContainsAny(codeHints[code][len(codeHints[code])-1:], ".") {
			t.Errorf("code %s: its hint ends with a period (STYLE: no final period)", code)
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
