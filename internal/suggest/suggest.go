// Package suggest finds the closest of a few names to a misspelt one, for
// "did you mean" hints.
package suggest

import (
	"fmt"
	"strings"
)

// maxDistance is the largest edit distance (case-insensitive) at which a
// name still counts as a near miss.
const maxDistance = 2

// Closest returns the candidate nearest to name (case-insensitive edit
// distance of at most 2; ties go to the earliest candidate), or "" when none
// is that close. A candidate equal to name is not a suggestion.
func Closest(name string, candidates []string) string {
	best, bestD := "", maxDistance+1
	lower := strings.ToLower(name)
	for _, c := range candidates {
		if c == name {
			continue
		}
		if d := distance(lower, strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Nearest returns the candidate nearest to name at any distance
// (case-insensitive; ties go to the earliest candidate), or "" when there
// is none but name itself: for "the nearest name is X" where even a far
// name helps.
func Nearest(name string, candidates []string) string {
	best, bestD := "", -1
	lower := strings.ToLower(name)
	for _, c := range candidates {
		if c == name {
			continue
		}
		if d := distance(lower, strings.ToLower(c)); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Hint returns ` (did you mean "X"?)` for the closest candidate, or "".
func Hint(name string, candidates []string) string {
	if best := Closest(name, candidates); best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return ""
}

// distance is the Levenshtein distance between a and b, in bytes; names
// longer than 64 bytes are never near.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return maxDistance + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
