package signing

import (
	"bytes"
	"crypto"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

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
	// Issue 19: a timestamp without a zone (read as UTC), and forms refused.
	ts := a.Timestamp.UTC().Format(time.RFC3339)
	f.Add(bytes.Replace(seed, []byte(ts), []byte(strings.TrimSuffix(ts, "Z")), 1))
	f.Add(bytes.Replace(seed, []byte(ts), []byte(strings.TrimSuffix(ts, "Z")+".25"), 1))
	f.Add(bytes.Replace(seed, []byte(ts), []byte(strings.Replace(strings.TrimSuffix(ts, "Z"), "T", " ", 1)), 1))
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
		if a.Zoneless {
			// Only an ISO 8601 date-time without a zone, read as UTC.
			var j struct{ Timestamp string }
			json.Unmarshal(b, &j)
			if !zonelessForm.MatchString(j.Timestamp) || a.Timestamp.Location() != time.UTC {
				t.Fatalf("timestamp %q read as zoneless (%v)", j.Timestamp, a.Timestamp)
			}
			a.Zoneless = false // Marshal writes it with its zone, Z
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
// by a trusted key that signed a seed, never by accident; and never with
// fewer trusted signers than the policy asks.
func FuzzVerifyCleartext(f *testing.F) {
	e := signer(f, "ed25519.sec.asc")
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	signed := signZip(f, buildZip(f), e, now, crypto.SHA256)
	sig := signatureOf(f, signed)
	f.Add(sig, uint8(1))
	f.Add(append([]byte("prefix\n"), sig...), uint8(1))
	f.Add(bytes.Replace(sig, []byte("Hash: SHA256"), []byte("Hash: SHA1"), 1), uint8(1))
	// Co-signed: by three keys, one of them untrusted.
	co := signatureOf(f, cosigned(f, "ed25519.sec.asc", "rsa3072.sec.asc", "untrusted.sec.asc"))
	f.Add(co, uint8(2))
	f.Add(co, uint8(3))
	// Issue 19: an inline signed message (as gpg --sign --armor writes it).
	a, err := ParseAttestation(func() []byte { m, _ := parseMessage(sig); return m.plaintext }())
	if err != nil {
		f.Fatal(err)
	}
	body, _ := a.Marshal()
	var inline bytes.Buffer
	aw, _ := armor.Encode(&inline, "PGP MESSAGE", nil)
	sw, err := openpgp.Sign(aw, e, nil, &packet.Config{DefaultHash: crypto.SHA256, Time: func() time.Time { return now }})
	if err != nil {
		f.Fatal(err)
	}
	sw.Write(body)
	sw.Close()
	aw.Close()
	if _, err := verifyCleartext(inline.Bytes(), readKeys(f, "trusted.asc"), &VerifyOptions{Now: func() time.Time { return now }}); err != nil {
		f.Fatalf("the inline seed: %v", err)
	}
	f.Add(inline.Bytes(), uint8(1))
	seeded := map[uint64]bool{e.PrimaryKey.KeyId: true, readKeys(f, "rsa3072.pub.asc")[0].PrimaryKey.KeyId: true}
	trusted := readKeys(f, "trusted.asc")
	f.Fuzz(func(t *testing.T, b []byte, min uint8) {
		v, err := verifyCleartext(b, trusted, &VerifyOptions{Policy: Policy{MinSigners: int(min % 4)}})
		if err != nil {
			if !errors.Is(err, ErrVerification) {
				t.Fatalf("error not under ErrVerification: %v", err)
			}
			return
		}
		a, signer := v.att, v.signer
		if !seeded[signer.PrimaryKey.KeyId] {
			t.Fatalf("verified with an unexpected signer %X", signer.PrimaryKey.Fingerprint)
		}
		if n := len(v.Policy().Signers); n < max(int(min%4), 1) {
			t.Fatalf("verified with %d signers, policy asks %d", n, min%4)
		}
		if a == nil || len(a.Items) != len(testFiles) {
			t.Fatalf("verified attestation differs from the signed one")
		}
	})
}
