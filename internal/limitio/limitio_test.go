package limitio

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadAll(t *testing.T) {
	tests := []struct {
		in    string
		limit int64
		ok    bool
	}{
		{"", 0, true},
		{"abc", 3, true},
		{"abcd", 3, false},
		{strings.Repeat("x", 1<<20), 1 << 20, true},
		{strings.Repeat("x", 1<<20+1), 1 << 20, false},
	}
	for _, tt := range tests {
		b, err := ReadAll(strings.NewReader(tt.in), tt.limit)
		var tl *TooLargeError
		switch {
		case tt.ok && (err != nil || string(b) != tt.in):
			t.Errorf("%d bytes, limit %d: got %d bytes, %v", len(tt.in), tt.limit, len(b), err)
		case !tt.ok && (!errors.As(err, &tl) || tl.Limit != tt.limit || b != nil):
			t.Errorf("%d bytes, limit %d: got %v, want a TooLargeError", len(tt.in), tt.limit, err)
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	if err := os.WriteFile(name, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(name, 5); err != nil || string(b) != "12345" {
		t.Fatalf("got %q, %v", b, err)
	}
	var tl *TooLargeError
	if _, err := ReadFile(name, 4); !errors.As(err, &tl) {
		t.Fatalf("got %v, want a TooLargeError", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 4); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v, want fs.ErrNotExist", err)
	}
}

// TestCount: the counters count every byte that passes, whatever the
// sizes of the reads and writes, and Add is told each read's count.
func TestCount(t *testing.T) {
	for _, size := range []int{0, 1, 4095, 4096, 1<<20 + 7} {
		in := strings.Repeat("y", size)
		var added int64
		r := &Reader{R: iotest.OneByteReader(strings.NewReader(in[:size/2])), Add: func(n int64) { added += n }}
		r2 := io.MultiReader(r, strings.NewReader(in[size/2:]))
		var sb strings.Builder
		w := &Writer{W: &sb}
		if _, err := io.Copy(w, r2); err != nil {
			t.Fatal(err)
		}
		if r.N != int64(size/2) || added != r.N || w.N != int64(size) || sb.String() != in {
			t.Errorf("%d bytes: read %d (added %d), wrote %d", size, r.N, added, w.N)
		}
	}
}
