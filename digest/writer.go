package digest

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"
)

// A Writer passes writes on to an io.Writer and takes the SHA-256 of
// what it passed, in a goroutine of its own, so that the hashing overlaps
// the writing on another core: the code that writes an assembly (a build,
// a seal) returns its digest without reading the finished file back.
//
// ReadFrom of a range of a file (io.Copy of an io.LimitedReader over an
// *os.File, as a seal copies the kept prefix of an assembly) lets the
// destination copy it in the kernel (copy_file_range) while the hashing
// goroutine reads the same range from the file.
//
// Call Digest once everything is written, or Close when giving up; a
// Writer is not safe for concurrent writes.
type Writer struct {
	w     io.Writer
	jobs  chan writeJob
	done  chan struct{}
	once  sync.Once
	h     hash.Hash
	n     int64 // bytes written
	err   error // the hashing goroutine's, read after done
	short bool  // a copied range was shorter than hashed
	pool  sync.Pool
}

// A writeJob is bytes written, or a range of a file copied by the kernel
// (reported on hashed when it has been read).
type writeJob struct {
	buf       *[]byte
	f         io.ReaderAt
	off, size int64
	hashed    chan struct{}
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer {
	d := &Writer{w: w, jobs: make(chan writeJob, 8), done: make(chan struct{}), h: sha256.New()}
	go d.hash()
	return d
}

func (d *Writer) hash() {
	defer close(d.done)
	for j := range d.jobs {
		if j.buf != nil {
			d.h.Write(*j.buf)
			d.pool.Put(j.buf)
			continue
		}
		if d.err == nil {
			n, err := io.CopyBuffer(d.h, io.NewSectionReader(j.f, j.off, j.size), make([]byte, 1<<20))
			if err == nil && n != j.size {
				err = io.ErrUnexpectedEOF
			}
			d.err = err
		}
		close(j.hashed)
	}
}

// Write writes p to the destination and hashes what it took.
func (d *Writer) Write(p []byte) (int, error) {
	n, err := d.w.Write(p)
	if n > 0 {
		buf, _ := d.pool.Get().(*[]byte)
		if buf == nil || cap(*buf) < n {
			b := make([]byte, n)
			buf = &b
		}
		*buf = append((*buf)[:0], p[:n]...)
		d.jobs <- writeJob{buf: buf}
		d.n += int64(n)
	}
	return n, err
}

// ReadFrom copies r to the destination. A range of a file (an
// io.LimitedReader over an *os.File, as io.Copy passes it on) is copied by
// the destination's own ReadFrom while it is hashed from the file: it
// returns when both are done, so the caller may close the file.
func (d *Writer) ReadFrom(r io.Reader) (int64, error) {
	lr, ok := r.(*io.LimitedReader)
	var f *os.File
	if ok {
		f, _ = lr.R.(*os.File)
	}
	rf, ok := d.w.(io.ReaderFrom)
	if f == nil || !ok {
		return io.CopyBuffer(struct{ io.Writer }{d}, r, make([]byte, 1<<20))
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return io.CopyBuffer(struct{ io.Writer }{d}, r, make([]byte, 1<<20))
	}
	size := lr.N
	hashed := make(chan struct{})
	d.jobs <- writeJob{f: f, off: off, size: size, hashed: hashed}
	n, err := rf.ReadFrom(lr)
	<-hashed
	d.n += n
	if n != size {
		d.short = true
	}
	return n, err
}

// Size is how many bytes were written.
func (d *Writer) Size() int64 { return d.n }

// Digest waits for the hashing and returns the digest of what was
// written. It fails when a file range could not be read for hashing, or
// was copied shorter than it was hashed (the file shrank meanwhile).
// Nothing may be written after it.
func (d *Writer) Digest() (Digest, error) {
	d.Close()
	switch {
	case d.err != nil:
		return Digest{}, fmt.Errorf("hashing a range copied to the output: %w", d.err)
	case d.short:
		return Digest{}, fmt.Errorf("a file range copied to the output was shorter than it was when hashed: %w", io.ErrUnexpectedEOF)
	}
	var s Digest
	d.h.Sum(s.sum[:0])
	s.set = true
	return s, nil
}

// Close stops the hashing goroutine; more than once is fine. It does not
// close the destination.
func (d *Writer) Close() error {
	d.once.Do(func() { close(d.jobs) })
	<-d.done
	return nil
}
