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
type idSet map[string]bool

// add returns sanitizeID(want), or, when another droplet has it already,
// the same with the first free "-2", "-3", ... suffix.
func (s idSet) add(want string) string {
	id := sanitizeID(want)
	for n := 2; s[id]; n++ {
		suffix := "-" + strconv.Itoa(n)
		base := sanitizeID(want)
		if len(base)+len(suffix) > maxIDLength {
			base = base[:maxIDLength-len(suffix)]
		}
		id = base + suffix
	}
	s[id] = true
	return id
}
