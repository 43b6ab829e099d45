// Package plural writes counted nouns for messages: "1 file", "2 files".
package plural

import "strconv"

// Count is n and noun, with an "s" unless n is 1: Count(1, "file") is
// "1 file", Count(0, "item") "0 items". noun is a regular English noun.
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
