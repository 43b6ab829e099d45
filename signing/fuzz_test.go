package signing

import (
	"bytes"
	"crypto"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/internal/strictjson"
)

// FuzzParseAttestation: failures are of our attestation classes (all under
// ErrVerification); successes re-marshal to text that parses to the same
// attestation.
func FuzzParseAttestation(f *testing.F) {
	a, err := Attest(f.Context(), reader(f, buildZip(f)), &SignOptions{Algorithm: crypto.SHA512})
	if err != nil {
		f.Fatal(err)
	}
	seed, _ := a.Marshal()
	f.Add(seed)
	f.Add(bytes.Replace(seed, []byte(`"SHA512"`), []byte(`"SHA-512"`), 1))
	f.Add(bytes.Replace(seed, []byte(`"SHA512"`), []byte(`"MD5"`), 1))
	f.Add([]byte(`{"algorithm":"SHA256","items":{},"nonce":"","timestamp":"2026-01-01T00:00:00Z","algorithm":"SHA256"}`))
	f.Add(bytes.Replace(seed, []byte(`"items"`), []byte(`"ITEMS"`), 1))
	f.Add(bytes.Replace(seed, []byte(`"hash"`), []byte(`"Hash"`), 1))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ParseAttestation(b)
		if err == nil {
			// Every field name was spelled exactly (issue #11 defect 2).
			v, derr := strictjson.Decode(b, maxAttestationDepth)
			if derr != nil {
				t.Fatalf("parsed, but not strict JSON: %v", derr)
			}
			top := v.(map[string]any)
			for k := range top {
				if !slices.Contains([]string{"algorithm", "items", "nonce", "timestamp"}, k) {
					t.Fatalf("parsed with top-level field %q", k)
				}
			}
			for _, it := range top["items"].(map[string]any) {
				for k := range it.(map[string]any) {
					if k != "hash" && k != "size" {
						t.Fatalf("parsed with item field %q", k)
					}
				}
			}
		}
		if err != nil {
			if !errors.Is(err, ErrAttestation) && !errors.Is(err, ErrWeakAlgorithm) && !errors.Is(err, ErrNonce) {
				t.Fatalf("error of no class: %v", err)
			}
			if !errors.Is(err, ErrVerification) {
				t.Fatalf("error not under ErrVerification: %v", err)
			}
			return
		}
		out, err := a.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		b2, err := ParseAttestation(out)
		if err != nil {
			t.Fatalf("re-marshalled attestation does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(a, b2) {
			t.Fatalf("round trip changed the attestation:\n%+v\n%+v", a, b2)
		}
		out2, _ := b2.Marshal()
		if !bytes.Equal(out, out2) {
			t.Fatal("Marshal is not stable")
		}
	})
}

// FuzzVerifyCleartext: whatever signature.asc holds, verification fails
// with a sentinel under ErrVerification, or succeeds only for a signature
// by the trusted key (the seed), never by accident.
func FuzzVerifyCleartext(f *testing.F) {
	e := signer(f, "ed25519.sec.asc")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	signed := signZip(f, buildZip(f), e, now, crypto.SHA256)
	sig := signatureOf(f, signed)
	f.Add(sig)
	f.Add(append([]byte("prefix\n"), sig...))
	f.Add(bytes.Replace(sig, []byte("Hash: SHA256"), []byte("Hash: SHA1"), 1))
	trusted := readKeys(f, "trusted.asc")
	f.Fuzz(func(t *testing.T, b []byte) {
		a, signer, _, err := VerifyCleartext(b, trusted, nil)
		if err != nil {
			if !errors.Is(err, ErrVerification) {
				t.Fatalf("error not under ErrVerification: %v", err)
			}
			return
		}
		if signer.PrimaryKey.KeyId != e.PrimaryKey.KeyId {
			t.Fatalf("verified with an unexpected signer %X", signer.PrimaryKey.Fingerprint)
		}
		if a == nil || len(a.Items) != len(testFiles) {
			t.Fatalf("verified attestation differs from the signed one")
		}
	})
}
