package assembly

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"strings"
	"testing"

	"github.com/klauspost/compress/zip"
)

// rawZip writes entries stored, without data descriptors, so that local
// headers carry the sizes and byte offsets are easy to find.
func rawZip(t testing.TB, names ...string) []byte {
	t.Helper()
	return rawZipOf(t, false, names...)
}

// rawZipOf is rawZip; with emptyDirs, names ending in "/" are written as
// empty directory entries (mode 040755) instead of files with content.
func rawZipOf(t testing.TB, emptyDirs bool, names ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		body := []byte("content of " + n)
		h := &zip.FileHeader{Name: n, Method: zip.Store}
		if !isASCII(n) {
			h.Flags |= flagUTF8 // as CreateHeader sets it; CreateRaw does not
		}
		if emptyDirs && strings.HasSuffix(n, "/") {
			body = nil
			h.SetMode(fs.ModeDir | 0o755)
		}
		h.CRC32, h.CompressedSize64, h.UncompressedSize64 = crc32.ChecksumIEEE(body), uint64(len(body)), uint64(len(body))
		w, err := zw.CreateRaw(h)
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

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// centralAt returns the offset of the i-th central directory header.
func centralAt(t *testing.T, b []byte, i int) int {
	t.Helper()
	p := int(binary.LittleEndian.Uint32(b[len(b)-6:]))
	for ; i > 0; i-- {
		p += 46 + int(binary.LittleEndian.Uint16(b[p+28:])) + int(binary.LittleEndian.Uint16(b[p+30:])) + int(binary.LittleEndian.Uint16(b[p+32:]))
	}
	if binary.LittleEndian.Uint32(b[p:]) != sigCentral {
		t.Fatalf("no central header at %d", p)
	}
	return p
}

func localAt(t *testing.T, b []byte, i int) int {
	return int(binary.LittleEndian.Uint32(b[centralAt(t, b, i)+42:]))
}

func TestStructureRejects(t *testing.T) {
	put16 := binary.LittleEndian.PutUint16
	put32 := binary.LittleEndian.PutUint32
	tests := []struct {
		name   string
		names  []string
		mutate func(t *testing.T, b []byte) []byte
		want   error
	}{
		{"valid", []string{"manifest.json", "a/b.txt"}, func(t *testing.T, b []byte) []byte { return b }, nil},
		{"prepended bytes", []string{"manifest.json"}, func(t *testing.T, b []byte) []byte {
			// A self-consistent shift: offsets still point at the old places.
			return append([]byte("MZ junk"), b...)
		}, ErrFormat},
		{"appended bytes", []string{"manifest.json"}, func(t *testing.T, b []byte) []byte { return append(b, "trailer"...) }, ErrFormat},
		{"second end record", []string{"manifest.json"}, func(t *testing.T, b []byte) []byte {
			return append(b, b[len(b)-22:]...)
		}, ErrFormat},
		{"archive comment", []string{"manifest.json"}, func(t *testing.T, b []byte) []byte {
			put16(b[len(b)-2:], 3)
			return append(b, "abc"...)
		}, ErrFormat},
		{"local central method mismatch", []string{"manifest.json"}, func(t *testing.T, b []byte) []byte {
			put16(b[localAt(t, b, 0)+8:], 8)
			return b
		}, ErrFormat},
		{"local central crc mismatch", []string{"manifest.json"}, func(t *testing.T, b []byte) []byte {
			b[localAt(t, b, 0)+14] ^= 1
			return b
		}, ErrFormat},
		{"local name differs", []string{"manifest.json"}, func(t *testing.T, b []byte) []byte {
			b[localAt(t, b, 0)+30] = 'M'
			return b
		}, ErrFormat},
		{"understated size", []string{"manifest.json"}, func(t *testing.T, b []byte) []byte {
			c := centralAt(t, b, 0)
			put32(b[c+24:], 1)
			return b
		}, ErrFormat},
		{"overlapping entries", []string{"manifest.json", "x"}, func(t *testing.T, b []byte) []byte {
			put32(b[centralAt(t, b, 1)+42:], 0)
			return b
		}, ErrFormat},
		{"encryption flag", []string{"manifest.json"}, func(t *testing.T, b []byte) []byte {
			b[localAt(t, b, 0)+6] |= 1
			b[centralAt(t, b, 0)+8] |= 1
			return b
		}, ErrFormat},
		{"unsupported method", []string{"manifest.json"}, func(t *testing.T, b []byte) []byte {
			put16(b[localAt(t, b, 0)+8:], 12)
			put16(b[centralAt(t, b, 0)+10:], 12)
			return b
		}, ErrFormat},
		{"symlink", []string{"manifest.json", "link"}, func(t *testing.T, b []byte) []byte {
			c := centralAt(t, b, 1)
			put16(b[c+4:], 3<<8|20)
			put32(b[c+38:], 0o120777<<16)
			return b
		}, ErrFormat},
		{"entry count mismatch", []string{"manifest.json", "x"}, func(t *testing.T, b []byte) []byte {
			put16(b[len(b)-12:], 1)
			put16(b[len(b)-14:], 1)
			return b
		}, ErrFormat},
		{"duplicate after", []string{"manifest.json", "a", "a"}, nil, ErrDuplicate},
		{"duplicate before", []string{"a", "a", "manifest.json"}, nil, ErrDuplicate},
		{"case collision", []string{"Stack.yaml", "stack.YAML"}, nil, ErrDuplicate},
		{"nfc collision", []string{"caf\u00e9", "cafe\u0301"}, nil, ErrDuplicate},
		{"dotdot", []string{"a/../../evil"}, nil, ErrInsecurePath},
		{"absolute", []string{"/etc/passwd"}, nil, ErrInsecurePath},
		{"drive letter", []string{"C:/x"}, nil, ErrInsecurePath},
		{"backslash", []string{`..\x`}, nil, ErrInsecurePath},
		{"control character", []string{"a\nb"}, nil, ErrInsecurePath},
		{"invalid utf8", []string{"a\xffb"}, nil, ErrInsecurePath},
		{"directory entry with data", []string{"dir/"}, nil, ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := rawZip(t, tt.names...)
			if tt.mutate != nil {
				b = tt.mutate(t, b)
			}
			_, err := NewReader(bytes.NewReader(b), int64(len(b)))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// A gap between entries (bytes that no header accounts for) is rejected.
func TestStructureGap(t *testing.T) {
	b := rawZip(t, "a", "b")
	// Move entry b's local header and everything after it by 4 bytes.
	l := localAt(t, b, 1)
	out := append(append(append([]byte{}, b[:l]...), 0, 0, 0, 0), b[l:]...)
	c := centralAt(t, b, 0) + 4
	// Fix the central directory offset so only the gap is wrong.
	binary.LittleEndian.PutUint32(out[len(out)-6:], uint32(c))
	_, err := NewReader(bytes.NewReader(out), int64(len(out)))
	if !errors.Is(err, ErrFormat) {
		t.Fatalf("got %v, want ErrFormat", err)
	}
}

// Archives from the ordinary writer (data descriptors, deflate) pass.
func TestStructureDataDescriptors(t *testing.T) {
	b := zipOf(t, "manifest.json", "a/b.yaml", "c")
	if _, err := NewReader(bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatal(err)
	}
	// A wrong CRC in the data descriptor is caught.
	l := bytes.LastIndex(b, []byte{0x50, 0x4b, 0x07, 0x08})
	b[l+4] ^= 0xff
	if _, err := NewReader(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrFormat) {
		t.Fatalf("got %v, want ErrFormat", err)
	}
}

// Issue 23, item 7: a file cut short anywhere is ErrTruncated (and
// ErrFormat); bytes after the end record, or a file that is no zip, are
// not.
func TestTruncated(t *testing.T) {
	w := NewWriter(WriterOptions{})
	w.AddBytes("manifest.json", []byte(`{"schema":"cloud-assembly/1.0","droplets":{}}`))
	w.AddBytes("a.txt", bytes.Repeat([]byte("hello "), 1000))
	var buf bytes.Buffer
	if _, err := w.WriteTo(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	for _, n := range []int{4, 10, 21, 30, 100, len(b) / 2, len(b) - 22, len(b) - 1} {
		_, err := NewReader(bytes.NewReader(b[:n]), int64(n))
		if !errors.Is(err, ErrTruncated) || !errors.Is(err, ErrFormat) {
			t.Errorf("cut to %d of %d bytes: %v, want ErrTruncated", n, len(b), err)
		}
	}
	for name, data := range map[string][]byte{
		"trailing bytes": append(append([]byte(nil), b...), "junk"...),
		"not a zip":      bytes.Repeat([]byte("not a zip "), 10),
	} {
		_, err := NewReader(bytes.NewReader(data), int64(len(data)))
		if !errors.Is(err, ErrFormat) || errors.Is(err, ErrTruncated) {
			t.Errorf("%s: %v, want ErrFormat and not ErrTruncated", name, err)
		}
	}
}
