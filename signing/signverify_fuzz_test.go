package signing

import (
	"bytes"
	"context"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zip"

	"github.com/cloud-assembly/assemble/assembly"
)

// FuzzSignVerify: whatever archive the reader and the check accept, Sign
// signs into one that Verify accepts, holding the same files and folders.
// The archive is made from the fuzzed text, one entry per line: a name
// ending in "/" is a directory entry, "!" before a name stores a stale
// signature.asc at that place (so Sign rewrites instead of appending).
// It found a signature.asc/ folder that Sign turned into an archive every
// reader refused.
func FuzzSignVerify(f *testing.F) {
	for _, s := range []string{
		"stacks/a.yml\nassets/b.bin",
		"stacks/\nstacks/a.yml\nempty/",
		"signature.asc/",
		"Signature.asc",
		"!\nstacks/a.yml",
		"a/b/c\na/b/\nA/B/d",
		"caf\u00e9/x\nCAF\u00c9/y",
	} {
		f.Add(s)
	}
	e := signer(f, "ed25519.sec.asc")
	trusted := readKeys(f, "trusted.asc")
	now := time.Now().UTC().Truncate(time.Second)
	f.Fuzz(func(t *testing.T, spec string) {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		add := func(name string, body []byte) bool {
			h := &zip.FileHeader{Name: name, Method: zip.Deflate}
			if strings.HasSuffix(name, "/") {
				h.Method = zip.Store
				h.SetMode(fs.ModeDir | 0o755)
				body = nil
			}
			w, err := zw.CreateHeader(h)
			if err != nil {
				return false
			}
			w.Write(body)
			return true
		}
		if !add(assembly.ManifestName, []byte(`{"schema":"cloud-assembly/1.0","droplets":{}}`)) {
			t.Fatal("manifest.json")
		}
		lines := strings.Split(spec, "\n")
		if len(lines) > 64 {
			return
		}
		for _, name := range lines {
			if name == "!" {
				name = assembly.SignatureName
			}
			if name == "" || !add(name, []byte("content of "+name)) {
				return
			}
		}
		if err := zw.Close(); err != nil {
			return
		}
		in := buf.Bytes()
		r, err := assembly.NewReader(bytes.NewReader(in), int64(len(in)))
		if err != nil {
			return
		}
		if _, err := r.Check(assembly.CheckOptions{}); err != nil {
			return
		}
		var out bytes.Buffer
		if _, err := Seal(context.Background(), &out, r, []Signer{Keys(e)}, &SignOptions{Now: func() time.Time { return now }}); err != nil {
			t.Fatalf("Sign refused what the reader and the check accept: %v", err)
		}
		signed := out.Bytes()
		sr, err := assembly.NewReader(bytes.NewReader(signed), int64(len(signed)))
		if err != nil {
			t.Fatalf("the reader refuses what Sign wrote: %v", err)
		}
		v, err := Verify(context.Background(), sr, trusted, &VerifyOptions{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatalf("Verify refuses what Sign wrote: %v", err)
		}
		want := map[string]bool{}
		for _, f := range r.Files() {
			if f.Name() != assembly.SignatureName {
				want[f.Name()] = true
			}
		}
		got := v.Files()
		if len(got) != len(want) {
			t.Fatalf("signed %d files, the input has %d", len(got), len(want))
		}
		for _, name := range got {
			if !want[name] {
				t.Fatalf("signed %q, which the input does not hold", name)
			}
		}
		if len(sr.Dirs()) != len(r.Dirs()) {
			t.Fatalf("%d directory entries signed, %d in the input", len(sr.Dirs()), len(r.Dirs()))
		}
	})
}
