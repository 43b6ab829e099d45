package assembly

import (
	"bytes"
	"errors"
	"testing"
	"testing/fstest"

	"github.com/klauspost/compress/zip"
)

func zipOf(t testing.TB, names ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("content of " + n))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReaderFS(t *testing.T) {
	b := zipOf(t, "manifest.json", "stacks/a.yaml", "stacks/b/c.json")
	r, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(r, "manifest.json", "stacks/a.yaml", "stacks/b/c.json"); err != nil {
		t.Fatal(err)
	}
}

func TestReaderRejects(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  error
	}{
		{"dotdot", []string{"../evil"}, ErrInsecurePath},
		{"absolute", []string{"/etc/passwd"}, ErrInsecurePath},
		{"backslash", []string{`a\b`}, ErrInsecurePath},
		{"drive", []string{"C:/x"}, ErrInsecurePath},
		{"dot segment", []string{"a/./b"}, ErrInsecurePath},
		{"empty segment", []string{"a//b"}, ErrInsecurePath},
		{"control", []string{"a\x01b"}, ErrInsecurePath},
		{"duplicate", []string{"a", "a"}, ErrDuplicate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := zipOf(t, tt.names...)
			_, err := NewReader(bytes.NewReader(b), int64(len(b)))
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}
