package assembly

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"testing"
	"time"

	"github.com/klauspost/compress/zip"
)

// randomArchive writes an archive of n random entries (stored or
// deflated, each with a data descriptor), with signature.asc among them
// at position sigAt (-1: none).
func randomArchive(t *testing.T, r *rand.Rand, n, sigAt int) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("d%d/f%d.bin", r.Intn(3), i)
		if i == sigAt {
			name = SignatureName
		}
		body := make([]byte, r.Intn(5000))
		r.Read(body[:len(body)/2]) // half random, half zeros: deflate shrinks it
		method := zip.Store
		if r.Intn(2) == 0 {
			method = zip.Deflate
		}
		// CreateHeader writes a data descriptor after the data.
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method, Modified: time.Date(2024, 1, 2, 3, 4, 6, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rawOf maps each entry of b to its stored bytes and CRC-32.
func rawOf(t *testing.T, b []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, f := range zr.File {
		rr, err := f.OpenRaw()
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(rr)
		m[f.Name] = fmt.Sprintf("%08x %d %s", f.CRC32, f.Method, raw)
	}
	return m
}

// Property: whatever the archive (signature.asc absent, last, or before
// other entries), AppendSignature writes one the reader accepts, holding
// every other entry with its stored bytes, CRC and method unchanged, and
// signature.asc, holding exactly what sign gave, as its last entry; when
// signature.asc was absent or last, the bytes before it are the input's.
func TestAppendSignatureProperty(t *testing.T) {
	r := rand.New(rand.NewSource(29))
	for i := 0; i < 60; i++ {
		n := 1 + r.Intn(6)
		sigAt := r.Intn(n+2) - 1 // -1: none; n: none either
		in := randomArchive(t, r, n, sigAt)
		rd, err := NewReader(bytes.NewReader(in), int64(len(in)))
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		sig := make([]byte, 1+r.Intn(3000))
		r.Read(sig)
		mod := time.Date(2020+r.Intn(10), 3, 4, 5, 6, 8, 0, time.UTC)
		calls := 0
		var out bytes.Buffer
		err = AppendSignature(context.Background(), &out, rd, nil, func() ([]byte, time.Time, error) {
			calls++
			return sig, mod, nil
		})
		if err != nil || calls != 1 {
			t.Fatalf("case %d: %v (sign called %d times)", i, err, calls)
		}
		b := out.Bytes()
		or, err := NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("case %d: the reader refuses the result: %v", i, err)
		}
		files := or.Files()
		if files[len(files)-1].Name() != SignatureName {
			t.Errorf("case %d: signature.asc is not the last entry", i)
		}
		rc, _ := or.File(SignatureName).Open()
		got, err := io.ReadAll(rc)
		if err != nil || !bytes.Equal(got, sig) {
			t.Errorf("case %d: signature.asc holds %d other bytes (%v)", i, len(got), err)
		}
		before, after := rawOf(t, in), rawOf(t, b)
		delete(before, SignatureName)
		delete(after, SignatureName)
		if fmt.Sprint(before) != fmt.Sprint(after) {
			t.Errorf("case %d: the other entries changed", i)
		}
		if prefix, ok := rd.appendPrefix(); ok && !bytes.Equal(b[:prefix], in[:prefix]) {
			t.Errorf("case %d: the kept prefix (%d bytes) changed", i, prefix)
		}
	}
}

// sign's error, a copy's error and a done context each stop the append,
// and are what it returns.
func TestAppendSignatureErrors(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	in := randomArchive(t, r, 3, -1)
	rd, err := NewReader(bytes.NewReader(in), int64(len(in)))
	if err != nil {
		t.Fatal(err)
	}
	errSign, errCopy := errors.New("sign failed"), errors.New("copy failed")
	if err := AppendSignature(context.Background(), io.Discard, rd, nil, func() ([]byte, time.Time, error) {
		return nil, time.Time{}, errSign
	}); !errors.Is(err, errSign) {
		t.Errorf("sign failing: got %v", err)
	}
	if err := AppendSignature(context.Background(), io.Discard, rd, func(io.Writer, int64) error { return errCopy }, func() ([]byte, time.Time, error) {
		t.Error("sign called after the copy failed")
		return nil, time.Time{}, nil
	}); !errors.Is(err, errCopy) {
		t.Errorf("copy failing: got %v", err)
	}
	// signature.asc first: the rewrite, which stops when ctx is done.
	in = randomArchive(t, r, 3, 0)
	rd, err = NewReader(bytes.NewReader(in), int64(len(in)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errCopy)
	if err := AppendSignature(ctx, io.Discard, rd, nil, func() ([]byte, time.Time, error) {
		t.Error("sign called after ctx was done")
		return nil, time.Time{}, nil
	}); !errors.Is(err, errCopy) {
		t.Errorf("ctx done: got %v, want its cause", err)
	}
}
