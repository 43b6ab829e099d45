package remote

import (
	"errors"
	"fmt"
	"io"

	"github.com/cloud-assembly/assemble/digest"
)

// A checked reader is the only body an upload of this package takes: a
// digest.Reader (the last bytes withheld unless the whole has the
// verified SHA-256, so the server commits nothing else) whose failure
// (digest.ErrMismatch) names the upload.
type checked struct {
	*digest.Reader
	what     string
	progress func(int64) // the bytes handed out, when set
}

func newChecked(r io.ReaderAt, off, n int64, want digest.Digest, what string) *checked {
	return &checked{Reader: digest.NewReader(r, off, n, want), what: what}
}

func (c *checked) Read(p []byte) (int, error) {
	m, err := c.Reader.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		return m, fmt.Errorf("%s: %w", c.what, err)
	}
	if c.progress != nil && m > 0 {
		c.progress(int64(m))
	}
	return m, err
}
