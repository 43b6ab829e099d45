// Package digest is the one type for an assembly's name: the SHA-256 of
// its .cloud file's bytes, printed and parsed as "sha256:" and 64
// lowercase hex digits (the OCI descriptor form).
//
// The digest is computed by the code that writes or reads the bytes
// anyway (NewHasher beside the writer or reader), never by reading a
// finished file back.
package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"

	"github.com/cloud-assembly/assemble/errcode"
)

// ErrMalformed: a string that is not "sha256:" and 64 lowercase hex digits.
var ErrMalformed = errcode.New("bad_digest", "malformed digest",
	"a digest is sha256: followed by 64 lowercase hex digits, as build, sign and verify print it")

// Prefix is the algorithm prefix of every Digest's string form.
const Prefix = "sha256:"

// A Digest is a SHA-256. The zero Digest means "none" (IsZero).
type Digest struct {
	sum [sha256.Size]byte
	set bool
}

// Parse reads "sha256:HEX" (64 lowercase hex digits).
func Parse(s string) (Digest, error) {
	hx, ok := strings.CutPrefix(s, Prefix)
	if !ok || len(hx) != 2*sha256.Size || strings.ToLower(hx) != hx {
		return Digest{}, fmt.Errorf("%w %q: want sha256: and 64 lowercase hex digits", ErrMalformed, s)
	}
	return FromHex(hx)
}

// FromHex reads 64 lowercase hex digits without the prefix.
func FromHex(hx string) (Digest, error) {
	var d Digest
	if len(hx) != 2*sha256.Size || strings.ToLower(hx) != hx {
		return Digest{}, fmt.Errorf("%w %q: want 64 lowercase hex digits", ErrMalformed, hx)
	}
	if _, err := hex.Decode(d.sum[:], []byte(hx)); err != nil {
		return Digest{}, fmt.Errorf("%w %q: want 64 lowercase hex digits", ErrMalformed, hx)
	}
	d.set = true
	return d, nil
}

// FromSum takes a finished SHA-256 sum (32 bytes).
func FromSum(sum []byte) (Digest, error) {
	var d Digest
	if len(sum) != sha256.Size {
		return Digest{}, fmt.Errorf("%w: %d bytes, want %d", ErrMalformed, len(sum), sha256.Size)
	}
	copy(d.sum[:], sum)
	d.set = true
	return d, nil
}

// Of returns the digest of b.
func Of(b []byte) Digest { return Digest{sum: sha256.Sum256(b), set: true} }

// String is "sha256:HEX", or "" for the zero Digest.
func (d Digest) String() string {
	if !d.set {
		return ""
	}
	return Prefix + hex.EncodeToString(d.sum[:])
}

// Hex is the 64 hex digits without the prefix, or "".
func (d Digest) Hex() string {
	if !d.set {
		return ""
	}
	return hex.EncodeToString(d.sum[:])
}

// Sum returns the 32 bytes.
func (d Digest) Sum() [sha256.Size]byte { return d.sum }

// IsZero reports whether d is the zero Digest.
func (d Digest) IsZero() bool { return !d.set }

// MarshalText writes "sha256:HEX" (the zero Digest as "").
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads "sha256:HEX"; "" gives the zero Digest.
func (d *Digest) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*d = Digest{}
		return nil
	}
	p, err := Parse(string(b))
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// A Hasher is an io.Writer that hashes what is written to it.
type Hasher struct {
	h hash.Hash
	n int64
}

// NewHasher returns an empty Hasher.
func NewHasher() *Hasher { return &Hasher{h: sha256.New()} }

// Write hashes p; it never fails.
func (h *Hasher) Write(p []byte) (int, error) {
	h.n += int64(len(p))
	return h.h.Write(p)
}

// Size is how many bytes were written.
func (h *Hasher) Size() int64 { return h.n }

// Digest is the digest of everything written so far.
func (h *Hasher) Digest() Digest {
	var d Digest
	h.h.Sum(d.sum[:0])
	d.set = true
	return d
}
