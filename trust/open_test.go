package trust

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zip"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/remote"
	"github.com/cloud-assembly/assemble/signing"
)

// writeFile writes b to a new file and returns its path.
func writeFile(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "app.cloud")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Issue 29: Open takes a file or a location, verifies, and hands the
// files' bytes only through the Assembly it returns, checked; its
// digest is the file's SHA-256; WriteTo writes the verified file.
func TestOpenSigned(t *testing.T) {
	b := signedAssembly(t)
	tr := load(t, Options{Keyrings: []string{filepath.Join(keysDir, "ed25519.pub.asc")}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "app.cloud", time.Time{}, bytes.NewReader(b))
	}))
	defer srv.Close()
	for _, name := range []string{writeFile(t, b), srv.URL + "/app.cloud"} {
		t.Run(strings.SplitN(name, ":", 2)[0], func(t *testing.T) {
			a, err := Open(context.Background(), name, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if a.Digest() != digest.Of(b) || !a.Authenticated() || a.Trust() != tr || a.Name() != name {
				t.Fatalf("digest %s authenticated %v", a.Digest(), a.Authenticated())
			}
			if got := a.Files(); len(got) != 2 || got[0] != "manifest.json" || got[1] != "site/index.html" {
				t.Fatalf("files %v", got)
			}
			if n, ok := a.Size("site/index.html"); !ok || n != 15 {
				t.Fatalf("size %d %v", n, ok)
			}
			if got, err := a.ReadFile("site/index.html"); err != nil || string(got) != "<h1>hello</h1>\n" {
				t.Fatalf("ReadFile: %q, %v", got, err)
			}
			if _, err := a.Open("signature.asc"); err == nil {
				t.Fatal("signature.asc is handed out")
			}
			var out bytes.Buffer
			if n, err := a.WriteTo(&out); err != nil || n != int64(len(b)) || !bytes.Equal(out.Bytes(), b) {
				t.Fatalf("WriteTo: %d, %v", n, err)
			}
		})
	}
}

// Unsigned is refused unless the loud opt-out is given; then nothing is
// authenticated, and the files are still read checked.
func TestOpenUnsigned(t *testing.T) {
	p := writeFile(t, unsignedAssembly(t))
	tr := load(t, Options{Keyrings: []string{filepath.Join(keysDir, "ed25519.pub.asc")}})
	_, err := Open(context.Background(), p, tr, nil)
	var ve *VerifyError
	if !errors.Is(err, signing.ErrUnsigned) || !errors.As(err, &ve) || ve.Result == nil || ve.Result.Signed {
		t.Fatalf("unsigned: %v", err)
	}
	a, err := Open(context.Background(), p, nil, &OpenOptions{InsecureAllowUnsigned: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Authenticated() || a.Result().Signed {
		t.Fatal("an unsigned assembly is authenticated")
	}
	if got, err := a.ReadFile("site/index.html"); err != nil || string(got) != "<h1>hello</h1>\n" {
		t.Fatalf("ReadFile: %q, %v", got, err)
	}
}

// Each refusal is its cause's sentinel, with what was learnt.
func TestOpenRefuses(t *testing.T) {
	signed := signedAssembly(t)
	p := writeFile(t, signed)
	other := load(t, Options{Keyrings: []string{filepath.Join(keysDir, "rsa3072.pub.asc")}})
	tr := load(t, Options{Keyrings: []string{filepath.Join(keysDir, "ed25519.pub.asc")}})
	var ve *VerifyError

	_, err := Open(context.Background(), p, other, nil)
	if !errors.Is(err, signing.ErrUnknownSigner) || !errors.As(err, &ve) || ve.Result == nil || !ve.Result.Signed {
		t.Errorf("another key: %v", err)
	}
	_, err = Open(context.Background(), p, nil, nil)
	if !errors.Is(err, ErrNoKeyring) {
		t.Errorf("no trust: %v", err)
	}
	_, err = Open(context.Background(), p, tr, &OpenOptions{Digest: digest.Of([]byte("another"))})
	if !errors.Is(err, ErrWrongDigest) {
		t.Errorf("another digest: %v", err)
	}
	_, err = Open(context.Background(), filepath.Join(t.TempDir(), "nosuch.cloud"), tr, nil)
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &ve) || ve.Result != nil {
		t.Errorf("no file: %v", err)
	}
	notZip := writeFile(t, []byte("not a zip"))
	_, err = Open(context.Background(), notZip, tr, nil)
	if !errors.As(err, &ve) || ve.Result == nil || ve.Result.Reader != nil || ve.Name != notZip {
		t.Errorf("not an assembly: %v", err)
	}
}

// The bytes written are the bytes verified: a file changed after Open
// fails WriteTo with digest.ErrMismatch, and the droplet bytes read
// through the Assembly fail (signing's sentinel, or the archive's when the
// data no longer inflates).
func TestOpenChangedAfterVerification(t *testing.T) {
	b := signedAssembly(t)
	p := writeFile(t, b)
	tr := load(t, Options{Keyrings: []string{filepath.Join(keysDir, "ed25519.pub.asc")}})
	a, err := Open(context.Background(), p, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	// The first byte of site/index.html's data, after its local header
	// (30 bytes, the name, the extra field).
	start := dataOffset(t, b, "site/index.html")
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{b[start] ^ 0x55}, start)
	f.Close()
	if _, err := a.WriteTo(io.Discard); !errors.Is(err, digest.ErrMismatch) {
		t.Errorf("WriteTo after a change: %v", err)
	}
	if _, err := a.ReadFile("site/index.html"); !errors.Is(err, signing.ErrVerification) && !errors.Is(err, assembly.ErrCorrupt) {
		t.Errorf("ReadFile after a change: %v", err)
	}
}

// OpenUnverified reads the structure of a file or a location and checks
// nothing but the digest asked for; its refusals are Open's.
func TestOpenUnverified(t *testing.T) {
	b := signedAssembly(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "app.cloud", time.Time{}, bytes.NewReader(b))
	}))
	defer srv.Close()
	for _, name := range []string{writeFile(t, b), srv.URL + "/app.cloud"} {
		r, cl, err := OpenUnverified(context.Background(), name, &OpenOptions{Digest: digest.Of(b)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !r.Signed() || len(r.Files()) != 3 {
			t.Errorf("%s: signed %v, %d files", name, r.Signed(), len(r.Files()))
		}
		cl.Close()
		_, _, err = OpenUnverified(context.Background(), name, &OpenOptions{Digest: digest.Of([]byte("another"))})
		var ve *VerifyError
		// A location is asked for those bytes (remote.Options.Digest), and
		// says its own mismatch.
		if !(errors.Is(err, ErrWrongDigest) || errors.Is(err, remote.ErrDigestMismatch)) || !errors.As(err, &ve) || ve.Result == nil {
			t.Errorf("%s: another digest: %v", name, err)
		}
	}
	var ve *VerifyError
	_, _, err := OpenUnverified(context.Background(), filepath.Join(t.TempDir(), "nosuch.cloud"), nil)
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &ve) || ve.Result != nil {
		t.Errorf("no file: %v", err)
	}
	_, _, err = OpenUnverified(context.Background(), writeFile(t, []byte("not a zip")), nil)
	if !errors.Is(err, assembly.ErrFormat) || !errors.As(err, &ve) || ve.Result == nil || ve.Result.Reader != nil {
		t.Errorf("not an assembly: %v", err)
	}
}

// dataOffset is where the data of b's entry name starts, after its local
// header (30 bytes, the name, the extra field).
func dataOffset(t *testing.T, b []byte, name string) int64 {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			off, err := f.DataOffset()
			if err != nil {
				t.Fatal(err)
			}
			return off
		}
	}
	t.Fatalf("no entry %s", name)
	return 0
}
