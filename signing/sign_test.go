package signing

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/cloud-assembly/assemble/assembly"
	"github.com/klauspost/compress/zip"
)

func TestSignVerifyRoundTrip(t *testing.T) {
	trusted := readKeys(t, "trusted.asc")
	for _, key := range []string{"ed25519.sec.asc", "ed25519.sec.gpg", "rsa3072.sec.asc", "subkey.sec.asc", "passphrase.sec.asc"} {
		for _, alg := range []crypto.Hash{crypto.SHA256, crypto.SHA384, crypto.SHA512} {
			t.Run(key+"/"+AlgorithmName(alg), func(t *testing.T) {
				now := time.Now().UTC().Truncate(time.Second)
				signed := signZip(t, buildZip(t), signer(t, key), now, alg)
				v, err := Verify(context.Background(), reader(t, signed), trusted, nil)
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				if !v.Time().Equal(now) || v.Attestation().Algorithm != alg {
					t.Errorf("time %v alg %v, want %v %v", v.Time(), v.Attestation().Algorithm, now, alg)
				}
				if got := len(v.Files()); got != len(testFiles) {
					t.Errorf("%d files verified, want %d", got, len(testFiles))
				}
				for _, f := range testFiles {
					b, err := v.ReadFile(f.name)
					if err != nil || string(b) != f.body {
						t.Errorf("ReadFile(%q) = %d bytes, %v", f.name, len(b), err)
					}
				}
				if v.UserID() == "" || len(v.Fingerprint()) != 40 {
					t.Errorf("signer %q %q", v.UserID(), v.Fingerprint())
				}
			})
		}
	}
}

// Re-signing replaces signature.asc and keeps every other entry's bytes.
func TestResignKeepsEntries(t *testing.T) {
	b := buildZip(t)
	once := signZip(t, b, signer(t, "ed25519.sec.asc"), time.Now(), crypto.SHA256)
	twice := signZip(t, once, signer(t, "rsa3072.sec.asc"), time.Now(), crypto.SHA512)
	r0, r2 := reader(t, b), reader(t, twice)
	if len(r2.Files()) != len(r0.Files())+1 {
		t.Fatalf("%d entries, want %d", len(r2.Files()), len(r0.Files())+1)
	}
	for i, f := range r0.Files() {
		g := r2.Files()[i]
		h0, h2 := rawEntry(t, b, f.Name()).FileHeader, rawEntry(t, twice, g.Name()).FileHeader
		if f.Name() != g.Name() || !bytes.Equal(rawBytes(t, b, f.Name()), rawBytes(t, twice, g.Name())) || h0.CRC32 != h2.CRC32 || h0.Method != h2.Method {
			t.Errorf("entry %q changed", f.Name())
		}
	}
	v, err := Verify(context.Background(), r2, readKeys(t, "trusted.asc"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v.UserID(), "RSA") {
		t.Errorf("signer %q, want the RSA key", v.UserID())
	}
}

func TestAttestationFormat(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	signed := signZip(t, buildZip(t), signer(t, "ed25519.sec.asc"), now, crypto.SHA256)
	sig := string(signatureOf(t, signed))
	for _, want := range []string{
		"-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\n{\n  \"algorithm\": \"SHA256\",\n  \"items\": {\n    \"assets/blob.bin\": {\n      \"hash\": ",
		"\n  \"timestamp\": \"2026-03-04T05:06:07Z\"\n}\n-----BEGIN PGP SIGNATURE-----\n\n",
		"\n-----END PGP SIGNATURE-----\n",
	} {
		if !strings.Contains(sig, want) {
			t.Errorf("signature.asc lacks %q:\n%s", want, sig)
		}
	}
	// The armor ends with a CRC-24 line ("=" and 4 base64 characters).
	lines := strings.Split(strings.TrimSpace(sig), "\n")
	if crc := lines[len(lines)-2]; len(crc) != 5 || crc[0] != '=' {
		t.Errorf("no checksum line before END, got %q", crc)
	}
	a, err := ParseAttestation([]byte(sig[strings.Index(sig, "{"):strings.Index(sig, "-----BEGIN PGP SIGNATURE")]))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Nonce) != 32 || !a.Timestamp.Equal(now) || len(a.Items) != len(testFiles) {
		t.Errorf("attestation %+v", a)
	}
	if a.Items["assets/empty.txt"].Size != 0 || a.Items["assets/blob.bin"].Size != 15000 {
		t.Errorf("sizes %+v", a.Items)
	}
}

func TestNonceFresh(t *testing.T) {
	b := buildZip(t)
	e := signer(t, "ed25519.sec.asc")
	var nonces [][]byte
	for i := 0; i < 2; i++ {
		var out bytes.Buffer
		s, err := Seal(context.Background(), &out, reader(t, b), []Signer{Keys(e)}, &SignOptions{Algorithm: crypto.SHA512})
		if err != nil {
			t.Fatal(err)
		}
		a := s.Attestation
		if len(a.Nonce) != 64 {
			t.Errorf("SHA512 nonce of %d bytes, want 64", len(a.Nonce))
		}
		nonces = append(nonces, a.Nonce)
	}
	if bytes.Equal(nonces[0], nonces[1]) {
		t.Error("nonce reused")
	}
}

func TestSignRefuses(t *testing.T) {
	b := buildZip(t)
	tests := []struct {
		name string
		key  string
		pass string
		now  time.Time
		want error
	}{
		{"expired", "expired.sec.asc", "", time.Now(), ErrSignerExpired},
		{"revoked", "revoked.sec.asc", "", time.Now(), ErrSignerRevoked},
		{"public key only", "ed25519.pub.asc", "", time.Now(), ErrNoSigningKey},
		{"no passphrase", "passphrase.sec.asc", "", time.Now(), ErrPassphraseNeeded},
		{"wrong passphrase", "passphrase.sec.asc", "hunter2", time.Now(), ErrWrongPassphrase},
		{"before the key existed", "ed25519.sec.asc", "", created.Add(-time.Hour), ErrNoSigningKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := selectSigner(readKeys(t, tt.key), []byte(tt.pass), tt.now)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if tt.want == ErrWrongPassphrase && !strings.Contains(err.Error(), "wrong passphrase") {
				t.Errorf("message %q lacks 'wrong passphrase'", err)
			}
		})
	}
	// Sign itself checks the key too (clearsign.Encode would not).
	e := readKeys(t, "expired.sec.asc")[0]
	var out bytes.Buffer
	if _, err := Seal(context.Background(), &out, reader(t, b), []Signer{Keys(e)}, nil); !errors.Is(err, ErrSignerExpired) {
		t.Fatalf("Sign with expired key: %v", err)
	}
	if _, err := Seal(context.Background(), &out, reader(t, b), nil, nil); !errors.Is(err, ErrNoKey) {
		t.Fatalf("Sign with no key: %v", err)
	}
	if out.Len() != 0 {
		t.Error("refused Sign wrote output")
	}
}

// A key that is expired now signed while it was valid: the signature
// verifies. A signature made after expiry does not.
func TestExpiredKey(t *testing.T) {
	trusted := readKeys(t, "trusted.asc")
	before := created.Add(180 * 24 * time.Hour)
	e, err := selectSigner(readKeys(t, "expired.sec.asc"), nil, before)
	if err != nil {
		t.Fatal(err)
	}
	signed := signZip(t, buildZip(t), e, before, crypto.SHA256)
	if _, err := Verify(context.Background(), reader(t, signed), trusted, nil); err != nil {
		t.Fatalf("signature made before expiry: %v", err)
	}
	// After expiry: sign with go-crypto directly, as a hostile signer could.
	after := created.Add(540 * 24 * time.Hour)
	a, err := Attest(t.Context(), reader(t, buildZip(t)), &SignOptions{Now: func() time.Time { return after }})
	if err != nil {
		t.Fatal(err)
	}
	sig := rawClearSign(t, a, e.PrivateKey, after, crypto.SHA256)
	late := replaceSignature(t, buildZip(t), sig)
	if _, err := Verify(context.Background(), reader(t, late), trusted, nil); !errors.Is(err, ErrKeyExpired) {
		t.Fatalf("signature made after expiry: got %v, want ErrKeyExpired", err)
	}
}

func TestRevokedKey(t *testing.T) {
	// The revoked key's secret half still signs with go-crypto directly.
	e := readKeys(t, "revoked.sec.asc")[0]
	now := time.Now().UTC().Truncate(time.Second)
	a, err := Attest(t.Context(), reader(t, buildZip(t)), &SignOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	signed := replaceSignature(t, buildZip(t), rawClearSign(t, a, e.PrivateKey, now, crypto.SHA256))
	_, err = Verify(context.Background(), reader(t, signed), readKeys(t, "trusted.asc"), nil)
	if !errors.Is(err, ErrKeyRevoked) || !errors.Is(err, ErrVerification) {
		t.Fatalf("got %v, want ErrKeyRevoked", err)
	}
}

func TestUntrustedAndKeyrings(t *testing.T) {
	signed := signZip(t, buildZip(t), signer(t, "rsa3072.sec.asc"), time.Now(), crypto.SHA256)
	for _, ring := range []string{"trusted.asc", "trusted.gpg", "rsa3072.pub.asc"} {
		if _, err := Verify(context.Background(), reader(t, signed), readKeys(t, ring), nil); err != nil {
			t.Errorf("%s: %v", ring, err)
		}
	}
	if n := len(readKeys(t, "trusted.asc")); n != 6 {
		t.Errorf("trusted.asc holds %d keys, want 6", n)
	}
	untrusted := signZip(t, buildZip(t), signer(t, "untrusted.sec.asc"), time.Now(), crypto.SHA256)
	if _, err := Verify(context.Background(), reader(t, untrusted), readKeys(t, "trusted.asc"), nil); !errors.Is(err, ErrUnknownSigner) {
		t.Fatalf("untrusted signer: got %v, want ErrUnknownSigner", err)
	}
	if _, err := Verify(context.Background(), reader(t, untrusted), nil, nil); !errors.Is(err, ErrUnknownSigner) {
		t.Fatalf("no trusted keys: got %v, want ErrUnknownSigner", err)
	}
	if _, err := Verify(context.Background(), reader(t, buildZip(t)), readKeys(t, "trusted.asc"), nil); !errors.Is(err, ErrUnsigned) {
		t.Fatalf("unsigned: got %v, want ErrUnsigned", err)
	}
}

// rawClearSign signs a with go-crypto alone, bypassing Sign's key checks.
func rawClearSign(t testing.TB, a *Attestation, k *packet.PrivateKey, now time.Time, h crypto.Hash) []byte {
	t.Helper()
	body, err := a.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	cfg := &packet.Config{DefaultHash: h, Time: func() time.Time { return now }}
	w, err := clearsign.Encode(&buf, k, cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(body)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Step 5: a validly signed assembly that assembly.Check finds invalid
// fails after the signature checks, with the verdict and the text the
// check gives on the unsigned archive; Sign and SignFile refuse to sign it
// in the first place, leaving the file as it was.
func TestVerifyAndSignShareTheCheck(t *testing.T) {
	trusted := readKeys(t, "trusted.asc")
	e := signer(t, "ed25519.sec.asc")
	stack := `"type":"npm://@aws-cdk/aws-cloudformation.StackDroplet","environment":"aws://123456789012/eu-west-1"`
	for _, tt := range []struct {
		name  string
		files []string // name, content pairs
		want  error
	}{
		{"invalid manifest", []string{"manifest.json", `{"schema":"cloud-assembly/1.0","droplets":{"a.b":{}}}`}, assembly.ErrSchema},
		{"no manifest", []string{"other.json", `{}`}, assembly.ErrNoManifest},
		{"missing template", []string{"manifest.json", `{"schema":"cloud-assembly/1.0","droplets":{"A":{` + stack + `,"properties":{"stackName":"a","template":"nope.yml"}}}}`}, assembly.ErrMissingFile},
		{"outside", []string{"manifest.json", `{"schema":"cloud-assembly/1.0","droplets":{"A":{` + stack + `,"properties":{"stackName":"a","template":"../t.yml"}}}}`, "t.yml", "x"}, assembly.ErrInsecurePath},
		{"cycle", []string{"manifest.json", `{"schema":"cloud-assembly/1.0","droplets":{"A":{"type":"x://y","environment":"x://y","dependsOn":["A"]}}}`}, assembly.ErrCycle},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			for i := 0; i < len(tt.files); i += 2 {
				w, _ := zw.Create(tt.files[i])
				w.Write([]byte(tt.files[i+1]))
			}
			zw.Close()
			_, want := reader(t, buf.Bytes()).Check(assembly.CheckOptions{})
			if !errors.Is(want, tt.want) {
				t.Fatalf("Check: got %v, want %v", want, tt.want)
			}
			_, err := Seal(context.Background(), io.Discard, reader(t, buf.Bytes()), []Signer{Keys(e)}, nil)
			if !errors.Is(err, tt.want) || err.Error() != want.Error() {
				t.Errorf("Sign: got %v, want %v", err, want)
			}
			dir := t.TempDir()
			in := filepath.Join(dir, "app.cloud")
			os.WriteFile(in, buf.Bytes(), 0o644)
			if _, err := SealFile(context.Background(), in, in, []Signer{Keys(e)}, nil); !errors.Is(err, tt.want) || err.Error() != want.Error() {
				t.Errorf("SignFile: got %v, want %v", err, want)
			}
			if b, _ := os.ReadFile(in); !bytes.Equal(b, buf.Bytes()) {
				t.Error("SignFile changed the file it refused to sign")
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Errorf("SignFile left %d files behind", len(ents)-1)
			}
			// Attest, for signing elsewhere, refuses it the same way.
			if _, err := Attest(t.Context(), reader(t, buf.Bytes()), nil); !errors.Is(err, tt.want) || err.Error() != want.Error() {
				t.Errorf("Attest: got %v, want %v", err, want)
			}
			// Signed anyway (by a signer that skips the check), verify gives the
			// same verdict, word for word.
			a, err := attest(t.Context(), reader(t, buf.Bytes()), nil)
			if err != nil {
				t.Fatal(err)
			}
			sig, err := clearSign(a, e, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Verify(context.Background(), reader(t, replaceSignature(t, buf.Bytes(), sig)), trusted, nil)
			if !errors.Is(err, tt.want) || !errors.Is(err, assembly.ErrManifest) || err.Error() != want.Error() {
				t.Fatalf("Verify: got %v, want %v", err, want)
			}
		})
	}
	signed := signZip(t, buildZip(t), e, time.Now(), crypto.SHA256)
	v, err := Verify(context.Background(), reader(t, signed), trusted, nil)
	if err != nil || v.Manifest() == nil || v.Manifest().Schema != "cloud-assembly/1.0" {
		t.Fatalf("Manifest() after Verify: %v", err)
	}
}

// Warnings do not stop signing; they reach SignOptions.Warn, and Verify
// reports them too, unless VerifyOptions.Check.Strict makes them errors.
func TestSignWarnsVerifyStrict(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("manifest.json")
	w.Write([]byte(`{"schema":"cloud-assembly/1.0","x-vendor":1,"droplets":{}}`))
	zw.Close()
	var warned []string
	var out bytes.Buffer
	opts := &SignOptions{Warn: func(f assembly.Finding) { warned = append(warned, f.String()) }}
	if _, err := Seal(context.Background(), &out, reader(t, buf.Bytes()), []Signer{Keys(signer(t, "ed25519.sec.asc"))}, opts); err != nil {
		t.Fatal(err)
	}
	const want = "x-vendor: unknown key: the spec defines no such field [unknown-key]"
	if strings.Join(warned, "\n") != want {
		t.Errorf("warned %q", warned)
	}
	trusted := readKeys(t, "trusted.asc")
	v, err := Verify(context.Background(), reader(t, out.Bytes()), trusted, nil)
	if err != nil || len(v.Report().Warnings()) != 1 || v.Report().Warnings()[0].String() != want {
		t.Fatalf("Verify: %v", err)
	}
	_, err = Verify(context.Background(), reader(t, out.Bytes()), trusted, &VerifyOptions{Check: assembly.CheckOptions{Strict: true}})
	if !errors.Is(err, assembly.ErrUnknownKey) || err.Error() != want {
		t.Fatalf("Verify strict: %v", err)
	}
}

// When signature.asc is not the last entry, Sign rewrites the archive
// (raw copies) and still replaces the signature.
func TestSignRewritesWhenSignatureNotLast(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create(assembly.SignatureName)
	w.Write([]byte("old signature"))
	for _, f := range testFiles {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: f.name, Method: f.method})
		w.Write([]byte(f.body))
	}
	zw.Close()
	signed := signZip(t, buf.Bytes(), signer(t, "ed25519.sec.asc"), time.Now(), crypto.SHA256)
	r := reader(t, signed)
	if last := r.Files()[len(r.Files())-1]; last.Name() != assembly.SignatureName {
		t.Errorf("last entry %q", last.Name())
	}
	if _, err := Verify(context.Background(), r, readKeys(t, "trusted.asc"), nil); err != nil {
		t.Fatal(err)
	}
}

func TestParseAttestationStrictJSON(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"duplicate", "{\"algorithm\":\"SHA256\",\n \"algorithm\":\"SHA512\"}", `2:2: duplicate key "algorithm"`},
		{"nested duplicate", `{"items":{"a":{"hash":"","size":"1","size":"2"}}}`, `1:37: duplicate key "size"`},
		{"trailing", `{} x`, "1:4: data after the top-level value"},
		{"bad utf8", "{\"nonce\":\"\xff\"}", "1:11: not valid UTF-8"},
		{"deep", `{"items":` + strings.Repeat("[", 20) + strings.Repeat("]", 20) + `}`, "nested deeper than 16 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseAttestation([]byte(tt.in))
			if !errors.Is(err, ErrAttestation) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want ErrAttestation with %q", err, tt.want)
			}
		})
	}
}

// Issue #11 defect 2: field names match exactly, at every level; a name in
// another case (which encoding/json would match) is an unknown field.
func TestParseAttestationExactFieldNames(t *testing.T) {
	a, err := Attest(t.Context(), reader(t, buildZip(t)), nil)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := a.Marshal()
	if _, err := ParseAttestation(good); err != nil {
		t.Fatalf("good attestation: %v", err)
	}
	tests := []struct{ old, new, field string }{
		{`"items"`, `"ITEMS"`, `unknown field "ITEMS"`},
		{`"algorithm"`, `"Algorithm"`, `unknown field "Algorithm"`},
		{`"nonce"`, `"nOnce"`, `unknown field "nOnce"`},
		{`"timestamp"`, `"Timestamp"`, `unknown field "Timestamp"`},
		{`"hash"`, `"HASH"`, `item "assets/blob.bin": unknown field "HASH"`},
		{`"size"`, `"Size"`, `item "assets/blob.bin": unknown field "Size"`},
		{`"algorithm"`, `"extra": 1, "algorithm"`, `unknown field "extra"`},
		{`"hash"`, `"hash\u0000"`, `unknown field "hash\x00"`},
		{`"size": "15000"`, `"size": 15000`, `"hash" and "size" must both be strings`},
		{`"algorithm": "SHA256"`, `"algorithm": ["SHA256"]`, `"algorithm" is an array, want a string`},
	}
	for _, tt := range tests {
		t.Run(tt.new, func(t *testing.T) {
			in := bytes.Replace(good, []byte(tt.old), []byte(tt.new), 1)
			_, err := ParseAttestation(in)
			if !errors.Is(err, ErrAttestation) || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("got %v, want ErrAttestation with %q", err, tt.field)
			}
		})
	}
}
