package trust

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/cloud-assembly/assemble/digest"
)

// startDigest is the file's SHA-256; a cancelled context stops it.
func TestStartDigest(t *testing.T) {
	b := bytes.Repeat([]byte("assemble"), 1<<17)
	want := digest.Of(b)
	sum, err := startDigest(context.Background(), bytes.NewReader(b), int64(len(b)))()
	if err != nil || sum != want {
		t.Fatalf("%s, %v; want %s", sum, err, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := startDigest(ctx, bytes.NewReader(b), int64(len(b)))(); err == nil {
		t.Fatal("a cancelled digest succeeded")
	}
}

// A digesterReader counts what is read through it and hashes it, as
// remote.Object does; err, when set, is its SHA256's failure.
type digesterReader struct {
	*bytes.Reader
	calls int
	err   error
}

func (d *digesterReader) SHA256(ctx context.Context) (digest.Digest, error) {
	d.calls++
	if d.err != nil {
		return digest.Digest{}, d.err
	}
	b := make([]byte, d.Size())
	d.ReadAt(b, 0)
	return digest.Of(b), nil
}

// Verify asks a Digester for the whole file's SHA-256, once, after the
// verification, and fails with its error (a remote blob whose digest is
// not the one asked for).
func TestVerifyDigester(t *testing.T) {
	b := signedAssembly(t)
	tr := load(t, Options{Keyrings: []string{filepath.Join(keysDir, "ed25519.pub.asc")}})
	d := &digesterReader{Reader: bytes.NewReader(b)}
	res, err := Verify(context.Background(), "x.cloud", d, int64(len(b)), tr, VerifyOptions{})
	want := digest.Of(b)
	if err != nil || res.SHA256 != want || d.calls != 1 {
		t.Fatalf("Verify: %v, sha256 %s (want %s), %d calls", err, res.SHA256, want, d.calls)
	}
	errBlob := errors.New("blob digest mismatch")
	d = &digesterReader{Reader: bytes.NewReader(b), err: errBlob}
	if _, err := Verify(context.Background(), "x.cloud", d, int64(len(b)), tr, VerifyOptions{}); !errors.Is(err, errBlob) {
		t.Fatalf("Verify with a failing digest: %v, want %v", err, errBlob)
	}
	d = &digesterReader{Reader: bytes.NewReader(b), err: errBlob}
	if res, err := Verify(context.Background(), "x.cloud", d, int64(len(b)), tr, VerifyOptions{SkipDigest: true}); err != nil || d.calls != 0 || !res.SHA256.IsZero() {
		t.Fatalf("Verify with SkipDigest: %v, %d calls", err, d.calls)
	}
}
