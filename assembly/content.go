package assembly

import (
	"bufio"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/flate"

	"github.com/cloud-assembly/assemble/internal/limitio"
)

// Open returns the entry's uncompressed content, checked as it streams, so
// that every byte of the entry is accounted for and `unzip -t` never
// disagrees with us: the read that would end the content fails with an
// error wrapping ErrCorrupt instead of returning io.EOF when the content is
// longer or shorter than the headers say, when its CRC-32 differs from the
// headers' (which agree, see NewReader), or when the deflate stream ends
// before the declared compressed size (bytes hidden after it). A corrupt
// deflate stream fails with ErrCorrupt too.
func (f *File) Open() (io.ReadCloser, error) {
	raw, err := f.zf.OpenRaw()
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrFormat, f.Name(), err)
	}
	c := &contentReader{name: f.Name(), size: f.Size(), csize: f.CompressedSize(), crc: f.zf.CRC32}
	switch f.zf.Method {
	case methodStore:
		c.r = raw
	case methodDeflate:
		// flate reads exactly the bytes of the stream from an
		// io.ByteReader (gzip relies on it to find its trailer): what
		// the bufio.Reader holds unread was not part of the stream.
		c.raw = &limitio.Reader{R: raw}
		c.buf = bufio.NewReader(c.raw)
		c.inflate = flate.NewReader(c.buf)
		c.r = c.inflate
	default:
		return nil, fmt.Errorf("%w: %q uses compression method %d", ErrFormat, f.Name(), f.zf.Method)
	}
	return c, nil
}

// checkEmpty reads a directory entry's data, which must be nothing.
func (f *File) checkEmpty() error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	n, err := io.Copy(io.Discard, io.LimitReader(rc, 1))
	if err == nil && n != 0 {
		err = fmt.Errorf("%w: directory entry %q holds data", ErrFormat, f.Name())
	}
	return err
}

type contentReader struct {
	name    string
	size    int64  // uncompressed, as the headers say
	csize   int64  // compressed, as the headers say
	crc     uint32 // as the headers say
	r       io.Reader
	raw     *limitio.Reader
	buf     *bufio.Reader
	inflate io.ReadCloser

	n   int64
	sum uint32
	err error
}

func (c *contentReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	if c.n+int64(n) > c.size {
		n = int(c.size - c.n)
		c.err = c.corrupt("content is longer than the %d bytes its headers state", c.size)
		err = c.err
	}
	c.sum = crc32.Update(c.sum, crc32.IEEETable, p[:n])
	c.n += int64(n)
	switch {
	case err == io.EOF:
		c.err = c.finish()
		return n, c.err
	case err != nil && c.err == nil:
		// The reader's own failure (a remote read that changed, timed
		// out) stays in the chain beside ErrCorrupt.
		c.err = fmt.Errorf("%w: %q: %w", ErrCorrupt, c.name, err)
		return n, c.err
	}
	return n, err
}

// finish checks the entry once its content has ended.
func (c *contentReader) finish() error {
	if c.n != c.size {
		return c.corrupt("content is %d bytes, its headers state %d", c.n, c.size)
	}
	if c.sum != c.crc {
		return c.corrupt("CRC-32 of the content is %08x, its headers state %08x", c.sum, c.crc)
	}
	if c.raw != nil {
		if used := c.raw.N - int64(c.buf.Buffered()); used != c.csize {
			return c.corrupt("the deflate stream ends after %d of the %d compressed bytes its headers state (bytes hidden after it)", used, c.csize)
		}
	}
	return io.EOF
}

func (c *contentReader) corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %q: %s", ErrCorrupt, c.name, fmt.Sprintf(format, args...))
}

func (c *contentReader) Close() error {
	if c.inflate != nil {
		return c.inflate.Close()
	}
	return nil
}
