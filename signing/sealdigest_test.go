package signing

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	filedigest "github.com/cloud-assembly/assemble/digest"
)

// Whichever way a seal writes (to a buffer, to a file through the kernel
// copy of the kept prefix, in place, co-signing), Sealed.Digest and Size
// are those of the bytes written.
func TestSealedDigestIsTheWrittenFile(t *testing.T) {
	base := buildZip(t)
	ed, rsa := signer(t, "ed25519.sec.asc"), signer(t, "rsa3072.sec.asc")
	check := func(what string, s *Sealed, b []byte) {
		t.Helper()
		if s.Digest != filedigest.Of(b) || s.Size != int64(len(b)) {
			t.Errorf("%s: Sealed says %s, %d bytes; written %s, %d bytes", what, s.Digest, s.Size, filedigest.Of(b), len(b))
		}
	}
	var buf bytes.Buffer
	s, err := Seal(t.Context(), &buf, reader(t, base), []Signer{Keys(ed)}, &SignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("Seal", s, buf.Bytes())
	signed := append([]byte(nil), buf.Bytes()...)

	buf.Reset()
	if s, err = Seal(t.Context(), &buf, reader(t, signed), []Signer{Keys(rsa)}, &SignOptions{Add: true}); err != nil {
		t.Fatal(err)
	}
	check("Seal, co-signing", s, buf.Bytes())

	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.cloud"), filepath.Join(dir, "out.cloud")
	if err := os.WriteFile(in, base, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	s, err = SealFileTo(t.Context(), in, f, []Signer{Keys(ed)}, &SignOptions{})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	check("SealFileTo a file", s, b)

	if s, err = SealFile(t.Context(), in, in, []Signer{Keys(rsa)}, &SignOptions{}); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(in)
	check("SealFile in place", s, b)
}
