// Package nearest finds, among known names, the one closest to a name that
// matched none of them, for "did you mean" hints.
package nearest

import "strings"

// maxLen bounds the names compared: longer names are never "near".
const maxLen = 256

// Distance is the edit distance (insertions, deletions, substitutions)
// between a and b, ignoring case; names longer than 256 bytes are at
// distance len(a)+len(b).
func Distance(a, b string) int {
	if len(a) > maxLen || len(b) > maxLen {
		return len(a) + len(b)
	}
	a, b = strings.ToLower(a), strings.ToLower(b)
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

// Name returns the candidate closest to name and its distance; the first
// of equally close candidates wins. It returns "", -1 when there is none.
func Name(name string, candidates []string) (string, int) {
	best, bestD := "", -1
	for _, c := range candidates {
		if c == name {
			continue
		}
		if d := Distance(name, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best, bestD
}

// Close returns the candidate closest to name when it is close enough to be
// a likely misspelling (at most 2 edits, or a third of name's length), or "".
func Close(name string, candidates []string) string {
	best, d := Name(name, candidates)
	if d < 0 || d > max(2, len(name)/3) {
		return ""
	}
	return best
}
