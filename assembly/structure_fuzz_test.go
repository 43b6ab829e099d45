package assembly

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/zip"
)

// FuzzNewReader: any input either fails with one of the package's sentinels,
// or gives a reader whose entries are safe, unique after folding, readable
// raw at their stated sizes, and that survives a raw copy unchanged.
func FuzzNewReader(f *testing.F) {
	f.Add(rawZip(f, "manifest.json", "a/b.txt"))
	f.Add(zipOf(f, "manifest.json", "stacks/a.yaml", "stacks/b/c.json"))
	f.Add(zipOf(f))
	f.Add(rawZip(f, "caf\u00e9", "x/y/z"))
	f.Add(rawZipEntries(f, "a/", "a/b", "c/"))
	f.Add(rawZip(f, "a", "a/b"))
	f.Add(rawZip(f, "CON.txt", "x\u202e"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrInsecurePath) && !errors.Is(err, ErrDuplicate) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error of no class: %v", err)
			}
			return
		}
		var out bytes.Buffer
		zw := zip.NewWriter(&out)
		seen := map[string]bool{}
		// Files and folders form a tree (no name both a file and a folder).
		tree := newNameSet(0)
		for _, d := range r.Dirs() {
			if err := tree.addFolder(strings.TrimSuffix(d.Name(), "/")); err != nil {
				t.Fatalf("accepted folder %q: %v", d.Name(), err)
			}
		}
		for _, f := range r.Files() {
			if err := CheckName(f.Name()); err != nil {
				t.Fatalf("accepted unsafe name %q: %v", f.Name(), err)
			}
			if err := tree.addFile(f.Name()); err != nil {
				t.Fatalf("accepted %q: %v", f.Name(), err)
			}
			key := foldName(f.Name())
			if seen[key] {
				t.Fatalf("accepted colliding name %q", f.Name())
			}
			seen[key] = true
			// Reading the content gives what the headers state, or fails
			// with ErrCorrupt (issue #11 defect 3).
			if rc, err := f.Open(); err != nil {
				t.Fatalf("%q: Open: %v", f.Name(), err)
			} else {
				h := crc32.NewIEEE()
				n, err := io.Copy(h, rc)
				rc.Close()
				if err != nil && !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%q: read error of no class: %v", f.Name(), err)
				}
				if err == nil && (n != f.Size() || h.Sum32() != f.zf.CRC32) {
					t.Fatalf("%q: read %d bytes with CRC %08x, headers state %d and %08x", f.Name(), n, h.Sum32(), f.Size(), f.zf.CRC32)
				}
			}
			raw, err := f.zf.OpenRaw()
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(raw)
			if err != nil || int64(len(data)) != f.CompressedSize() {
				t.Fatalf("%q: raw read %d bytes (%v), header says %d", f.Name(), len(data), err, f.CompressedSize())
			}
			h := f.zf.FileHeader
			w, err := zw.CreateRaw(&h)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(data)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		r2, err := NewReader(bytes.NewReader(out.Bytes()), int64(out.Len()))
		if err != nil {
			t.Fatalf("raw copy of an accepted archive is rejected: %v", err)
		}
		if len(r2.Files()) != len(r.Files()) {
			t.Fatalf("raw copy has %d entries, want %d", len(r2.Files()), len(r.Files()))
		}
		for i, f := range r.Files() {
			g := r2.Files()[i]
			if g.Name() != f.Name() || g.Size() != f.Size() || g.zf.CRC32 != f.zf.CRC32 {
				t.Fatalf("raw copy changed entry %d: %q -> %q", i, f.Name(), g.Name())
			}
		}
	})
}
