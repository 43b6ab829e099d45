package main

import (
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
		codes = append(codes, c.code)
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
