package digest

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// Whatever mix of writes and file ranges reaches a Writer (a build writes
// chunks, a seal copies a file's prefix then writes its tail), Digest is
// the SHA-256 of exactly what reached the output, and the output is the
// bytes in order.
func TestWriterProperty(t *testing.T) {
	dir := t.TempDir()
	src := make([]byte, 3<<20)
	for i := range src {
		src[i] = byte(i*7 + i>>9)
	}
	srcPath := filepath.Join(dir, "src")
	if err := os.WriteFile(srcPath, src, 0o644); err != nil {
		t.Fatal(err)
	}
	for seed := uint64(0); seed < 40; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		f, err := os.Open(srcPath)
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.Create(filepath.Join(dir, "out"))
		if err != nil {
			t.Fatal(err)
		}
		dw := NewWriter(out)
		var want bytes.Buffer
		for range 1 + r.IntN(12) {
			if r.IntN(2) == 0 {
				p := make([]byte, r.IntN(1<<18))
				for i := range p {
					p[i] = byte(r.Uint32())
				}
				if _, err := dw.Write(p); err != nil {
					t.Fatal(err)
				}
				want.Write(p)
				continue
			}
			// A range of the file, as sign copies its prefix: through
			// io.Copy, which hands the LimitedReader to ReadFrom.
			off, n := r.Int64N(int64(len(src))), r.Int64N(1<<20)
			if off+n > int64(len(src)) {
				n = int64(len(src)) - off
			}
			if _, err := f.Seek(off, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(dw, io.LimitReader(f, n)); err != nil {
				t.Fatal(err)
			}
			want.Write(src[off : off+n])
		}
		sum, err := dw.Digest()
		f.Close()
		out.Close()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "out"))
		if !bytes.Equal(got, want.Bytes()) || sum != Of(want.Bytes()) || dw.Size() != int64(want.Len()) {
			t.Fatalf("seed %d: output %d bytes (want %d), sum %s, want %s", seed, len(got), want.Len(), sum, Of(want.Bytes()))
		}
	}
}

// A range that ends early (the file shrank) gives no digest.
func TestWriterShortRange(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "src")
	os.WriteFile(p, []byte("0123456789"), 0o644)
	f, _ := os.Open(p)
	defer f.Close()
	out, _ := os.Create(filepath.Join(dir, "out"))
	defer out.Close()
	dw := NewWriter(out)
	if n, err := io.Copy(dw, io.LimitReader(f, 20)); err != nil || n != 10 {
		t.Fatalf("copied %d, %v", n, err)
	}
	if sum, err := dw.Digest(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("sum %s of a range longer than the file", sum)
	}
}
