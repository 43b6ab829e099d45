package limitio

import "io"

// A Reader counts the bytes read through it: N is the total so far and
// Add, when set, is told each Read's count as it happens (a progress bar,
// an atomic counter shared with other readers).
type Reader struct {
	R   io.Reader
	N   int64
	Add func(n int64)
}

func (c *Reader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	if n > 0 && c.Add != nil {
		c.Add(int64(n))
	}
	return n, err
}

// A Writer counts the bytes written through it: N is the total so far.
type Writer struct {
	W io.Writer
	N int64
}

func (c *Writer) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}
