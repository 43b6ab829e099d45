package deploy

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/cloud-assembly/assemble/internal/limitio"
)

// A spool holds content deploy makes from verified bytes (a directory's
// zip, a saved image read through the verification, docker's output) in
// an unnamed temporary file: memory stays bounded whatever the size, and
// once the name is removed (at once, where the system allows it) no other
// process can open the file to change it.
type spool struct {
	f    *os.File
	path string // set when the name could not be removed at once
	size int64
	sum  []byte // SHA-256 of the content
	// parts are the SHA-256s of its multipart upload's parts
	parts [][]byte
}

// newSpool writes the content with write, counting and hashing it.
func newSpool(write func(w io.Writer) error) (*spool, error) {
	f, err := os.CreateTemp("", "assemble-spool-")
	if err != nil {
		return nil, fmt.Errorf("a temporary file: %w", err)
	}
	s := &spool{f: f}
	if os.Remove(f.Name()) != nil {
		s.path = f.Name()
	}
	h := newPartHasher()
	bw := bufio.NewWriterSize(io.MultiWriter(f, h), 256<<10)
	cw := &limitio.Writer{W: bw}
	err = write(cw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	s.size = cw.N
	s.sum, s.parts = h.sums()
	return s, nil
}

// reader reads the content from the start; readers are independent.
func (s *spool) reader() *io.SectionReader { return io.NewSectionReader(s.f, 0, s.size) }

func (s *spool) Close() error {
	err := s.f.Close()
	if s.path != "" {
		os.Remove(s.path)
	}
	return err
}
