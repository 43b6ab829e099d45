package cdk

import (
	"strings"
	"testing"
	"testing/quick"

	"github.com/cloud-assembly/assemble/assembly"
)

// TestSanitizeID: whatever the name, the ID is a valid logical ID, and a
// valid ID of at most 256 bytes is kept as it is.
func TestSanitizeID(t *testing.T) {
	valid := func(s string) bool {
		id := sanitizeID(s)
		if !assembly.ValidLogicalID(id) {
			t.Logf("%q -> %q", s, id)
			return false
		}
		return !assembly.ValidLogicalID(s) || id == s
	}
	if err := quick.Check(valid, &quick.Config{MaxCount: 5000}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"", ".", "a.b", "Stage/Stack", strings.Repeat("x", 300), strings.Repeat("é", 200), "${AWS::AccountId}"} {
		if !valid(s) {
			t.Errorf("%q", s)
		}
	}
	// Two long names that share their first 247 bytes stay apart.
	a, b := strings.Repeat("x", 300)+"a", strings.Repeat("x", 300)+"b"
	if sanitizeID(a) == sanitizeID(b) {
		t.Errorf("%q and %q share an ID", a, b)
	}
}

// TestIDSetUnique: an idSet never hands out an ID twice, however many
// names clean up to the same one, and every ID is valid.
func TestIDSetUnique(t *testing.T) {
	unique := func(names []string) bool {
		s := newIDSet()
		seen := map[string]bool{}
		for _, n := range names {
			id := s.add(n)
			if seen[id] || !assembly.ValidLogicalID(id) {
				t.Logf("%q -> %q (seen %v)", n, id, seen[id])
				return false
			}
			seen[id] = true
		}
		return true
	}
	if err := quick.Check(unique, &quick.Config{MaxCount: 500}); err != nil {
		t.Fatal(err)
	}
	same := []string{"a.b", "a:b", "a b", "a-b", "a/b", "a-b-2", strings.Repeat("y", 256), strings.Repeat("y", 256) + "!"}
	for i := 0; i < 3; i++ {
		same = append(same, same...)
	}
	if !unique(same) {
		t.Error("colliding names")
	}
}
