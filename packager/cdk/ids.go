package cdk

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// maxIDLength is the longest logical ID the spec allows.
const maxIDLength = 256

// sanitizeID makes a valid logical ID (^[A-Za-z0-9+/_-]{1,256}$) of s:
// every other character becomes "-", and a name too long is cut and
// suffixed with a digest of the whole, so two long names stay apart.
func sanitizeID(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && idChar(byte(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	id := b.String()
	if id == "" {
		id = "cdk"
	}
	if len(id) > maxIDLength {
		sum := sha256.Sum256([]byte(s))
		id = id[:maxIDLength-9] + "-" + hex.EncodeToString(sum[:4])
	}
	return id
}

func idChar(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-'
}

// An idSet hands out unique logical IDs.
type idSet struct {
	used map[string]bool
	next map[string]int // by cleaned name: the first suffix not yet tried
}

func newIDSet() *idSet { return &idSet{used: map[string]bool{}, next: map[string]int{}} }

// add returns sanitizeID(want), or, when another droplet has it already,
// the same with the first free "-2", "-3", ... suffix. The suffixes tried
// for a name are not tried again, so n names that clean up to one ID take
// time in proportion to n, not its square.
func (s *idSet) add(want string) string {
	base := sanitizeID(want)
	id := base
	n := max(s.next[base], 2)
	for ; s.used[id]; n++ {
		suffix := "-" + strconv.Itoa(n)
		b := base
		if len(b)+len(suffix) > maxIDLength {
			b = b[:maxIDLength-len(suffix)]
		}
		id = b + suffix
	}
	s.next[base] = n
	s.used[id] = true
	return id
}
