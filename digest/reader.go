package digest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/cloud-assembly/assemble/errcode"
)

// ErrMismatch: bytes read to be written or sent do not have the digest
// they were verified with (something changed them since).
var ErrMismatch = errcode.New("changed_after_verification", "the bytes do not have the verified digest",
	"something changed the bytes after they were verified: verify them again, from a copy nobody writes to")

// A Reader is the one way verified bytes are read to be written or sent
// somewhere: it reads n bytes of r from off, hashes them as they pass,
// and hands out the last of them only when the whole has the digest
// want. Otherwise the read that would have returned them fails with
// ErrMismatch instead, so a writer that commits only on a clean end (a
// file renamed into place, an upload with a length) never commits other
// bytes than the verified ones.
//
// Seek to the start rewinds it (a retry, an SDK that hashes a body
// first) and the hash starts again; Seek to the end says its length.
type Reader struct {
	r      io.ReaderAt
	off, n int64
	want   Digest
	pos    int64
	h      hash.Hash
}

// NewReader reads [off, off+n) of r, checked against want.
func NewReader(r io.ReaderAt, off, n int64, want Digest) *Reader {
	return &Reader{r: r, off: off, n: n, want: want, h: sha256.New()}
}

func (c *Reader) Read(p []byte) (int, error) {
	if c.pos >= c.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), c.n-c.pos)]
	m, err := c.r.ReadAt(p, c.off+c.pos)
	if m < len(p) {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return 0, fmt.Errorf("%w: reading bytes %d-%d: %w", ErrMismatch, c.off+c.pos, c.off+c.pos+int64(len(p))-1, err)
	}
	c.h.Write(p)
	c.pos += int64(m)
	if c.pos == c.n {
		var d Digest
		c.h.Sum(d.sum[:0])
		d.set = true
		if d != c.want {
			return 0, fmt.Errorf("%w: bytes %d-%d have %s, not the verified %s", ErrMismatch, c.off, c.off+c.n-1, d, c.want)
		}
	}
	return m, nil
}

// Seek moves to the start (rewinding, the hash started again) or the end
// (nothing more is read, so nothing unchecked is handed out); any other
// position is refused.
func (c *Reader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = c.pos + offset
	case io.SeekEnd:
		abs = c.n + offset
	}
	switch abs {
	case c.pos:
	case 0:
		c.pos = 0
		c.h.Reset()
	case c.n:
		c.pos = c.n
	default:
		return c.pos, errors.New("digest.Reader: seek only to the start or the end")
	}
	return c.pos, nil
}
