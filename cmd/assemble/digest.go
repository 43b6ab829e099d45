package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"os"
	"sync"
)

// The .cloud file's SHA-256 that build, sign and verify report is taken
// from the bytes they write or read anyway, never by reading a finished
// file back; the hashing runs in a goroutine of its own, so that it
// overlaps the writing (or verify's reading) on another core.

// A digestWriter passes writes on to w and hashes them on the way.
// ReadFrom of a range of a file (sign copies most of an assembly as it
// is) lets w copy it in the kernel (copy_file_range) while the hashing
// goroutine reads the same range. Call Sum once everything is written, or
// close when giving up.
type digestWriter struct {
	w     io.Writer
	jobs  chan digestJob
	done  chan struct{}
	once  sync.Once
	h     hash.Hash
	n     int64 // bytes written
	err   error // the hashing goroutine's, read after done
	short bool  // a copied range was shorter than hashed
	pool  sync.Pool
}

// A digestJob is bytes written, or a range of a file copied by the kernel
// (reported on hashed when it has been read).
type digestJob struct {
	buf       *[]byte
	f         io.ReaderAt
	off, size int64
	hashed    chan struct{}
}

func newDigestWriter(w io.Writer) *digestWriter {
	d := &digestWriter{w: w, jobs: make(chan digestJob, 8), done: make(chan struct{}), h: sha256.New()}
	go d.hash()
	return d
}

func (d *digestWriter) hash() {
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

func (d *digestWriter) Write(p []byte) (int, error) {
	n, err := d.w.Write(p)
	if n > 0 {
		buf, _ := d.pool.Get().(*[]byte)
		if buf == nil || cap(*buf) < n {
			b := make([]byte, n)
			buf = &b
		}
		*buf = append((*buf)[:0], p[:n]...)
		d.jobs <- digestJob{buf: buf}
		d.n += int64(n)
	}
	return n, err
}

// ReadFrom copies r to w. A range of a file (an io.LimitedReader over an
// *os.File, as io.Copy passes it on) is copied by w's own ReadFrom while
// it is hashed from the file: it returns when both are done, so the
// caller may close the file.
func (d *digestWriter) ReadFrom(r io.Reader) (int64, error) {
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
	d.jobs <- digestJob{f: f, off: off, size: size, hashed: hashed}
	n, err := rf.ReadFrom(lr)
	<-hashed
	d.n += n
	if n != size {
		d.short = true
	}
	return n, err
}

// Sum waits for the hashing and returns the SHA-256 of what was written,
// in lowercase hex.
func (d *digestWriter) Sum() (string, error) {
	d.close()
	switch {
	case d.err != nil:
		return "", d.err
	case d.short:
		return "", errors.New("a file copied into the output was shorter than it was when hashed")
	}
	return hex.EncodeToString(d.h.Sum(nil)), nil
}

// close stops the hashing goroutine (more than once is fine).
func (d *digestWriter) close() {
	d.once.Do(func() { close(d.jobs) })
	<-d.done
}
