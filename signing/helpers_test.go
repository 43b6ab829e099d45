package signing

import (
	"bytes"
	"context"
	"crypto"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/cloud-assembly/assemble/assembly"
	"github.com/klauspost/compress/zip"
)

// keysDir holds the test-only keys made by fixtures/keys/gen.sh.
var keysDir = filepath.Join("..", "fixtures", "keys")

const testPassphrase = "correct horse battery staple"

// created is when gen.sh made the keys (--faked-system-time); the "expired"
// key expired a year later.
var created = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func readKeys(t testing.TB, name string) openpgp.EntityList {
	t.Helper()
	f, err := os.Open(filepath.Join(keysDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	el, err := ReadKeys(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return el
}

// signer loads and decrypts a secret key from fixtures/keys.
func signer(t testing.TB, name string) *openpgp.Entity {
	t.Helper()
	e, err := selectSigner(readKeys(t, name), []byte(testPassphrase), time.Now())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return e
}

// testFiles are the files of the small test assembly, in archive order.
var testFiles = []struct {
	name, body string
	method     uint16
}{
	{"manifest.json", `{"schema":"cloud-assembly/1.0","droplets":{}}`, zip.Deflate},
	{"stacks/app.yaml", "Resources:\n  Bucket:\n    Type: AWS::S3::Bucket\n", zip.Deflate},
	{"assets/blob.bin", string(bytes.Repeat([]byte{0, 1, 2, 3, 250}, 3000)), zip.Store},
	{"assets/empty.txt", "", zip.Deflate},
}

// buildZip writes an unsigned test assembly.
func buildZip(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range testFiles {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.name, Method: f.method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f.body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func reader(t testing.TB, b []byte) *assembly.Reader {
	t.Helper()
	r, err := assembly.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	return r
}

// signZip signs b with the entity at the given time, deterministically.
func signZip(t testing.TB, b []byte, e *openpgp.Entity, now time.Time, alg crypto.Hash) []byte {
	t.Helper()
	var out bytes.Buffer
	opts := &SignOptions{Algorithm: alg, Now: func() time.Time { return now }, Rand: rand.New(rand.NewSource(now.Unix())), Replace: true}
	if _, err := Seal(context.Background(), &out, reader(t, b), []Signer{Keys(e)}, opts); err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return out.Bytes()
}

// signatureOf returns the signature.asc content of a signed assembly.
func signatureOf(t testing.TB, b []byte) []byte {
	t.Helper()
	r := reader(t, b)
	f := r.File(assembly.SignatureName)
	if f == nil {
		t.Fatal("no signature.asc")
	}
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var buf bytes.Buffer
	buf.ReadFrom(rc)
	return buf.Bytes()
}

// replaceSignature rewrites b with signature.asc set to sig (raw copies of
// the other entries).
func replaceSignature(t testing.TB, b, sig []byte) []byte {
	t.Helper()
	r, copyRaw := reader(t, b), rawCopier(t, b)
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range contentFiles(r) {
		if err := copyRaw(zw, f.Name()); err != nil {
			t.Fatal(err)
		}
	}
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: assembly.SignatureName, Method: zip.Deflate})
	w.Write(sig)
	zw.Close()
	return out.Bytes()
}

// selectSigner picks and decrypts the one usable signing key of keys, as
// LoadSigners does without LocalUsers.
func selectSigner(keys openpgp.EntityList, passphrase []byte, now time.Time) (*openpgp.Entity, error) {
	es, err := selectSigners(keys, nil, passphrase, now)
	if err != nil {
		return nil, err
	}
	return es[0], nil
}

// clearSign signs the attestation with signer (already decrypted) as the
// cleartext message Seal writes.
func clearSign(a *Attestation, signer *openpgp.Entity, opts *SignOptions) ([]byte, error) {
	body, err := a.Marshal()
	if err != nil {
		return nil, err
	}
	msg, _, err := Keys(signer).ClearSign(context.Background(), bytes.TrimSuffix(body, []byte("\n")), opts.with(a.Algorithm))
	if err != nil {
		return nil, err
	}
	m, err := parseMessage(msg)
	if err != nil {
		return nil, err
	}
	return writeMessage(m.plaintext, m.hashList(), m.raw)
}

// rawEntry is the entry name of the archive b as the zip library reads
// it: its stored bytes and header, which package assembly keeps to itself.
func rawEntry(t testing.TB, b []byte, name string) *zip.File {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no entry %q", name)
	return nil
}

// rawBytes are the stored (maybe compressed) bytes of b's entry name.
func rawBytes(t testing.TB, b []byte, name string) []byte {
	t.Helper()
	r, err := rawEntry(t, b, name).OpenRaw()
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// rawCopier copies entries of the archive b to a zip writer raw: the same
// stored bytes and header fields.
func rawCopier(t testing.TB, b []byte) func(zw *zip.Writer, name string) error {
	return func(zw *zip.Writer, name string) error { return zw.Copy(rawEntry(t, b, name)) }
}
