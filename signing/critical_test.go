package signing

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// Issue 19 item 2: a signature carrying a critical notation we do not know
// is invalid (RFC 4880 §5.2.3.16): verification refuses it, and so does
// attaching it; the same notation, not critical, changes nothing. And a
// key whose self-signature carries one can neither verify nor sign. With
// gpg: TestGPGTrustAgreement.
func TestCriticalNotation(t *testing.T) {
	e := signer(t, "ed25519.sec.asc")
	trusted := readKeys(t, "trusted.asc")
	b := buildZip(t)
	at := created.Add(10 * agreeDay)
	opts := &VerifyOptions{Now: func() time.Time { return at }}
	a, err := Attest(t.Context(), reader(t, b), &SignOptions{Now: opts.Now})
	if err != nil {
		t.Fatal(err)
	}
	plain := agreeRawSign(t, a, e, fingerprint(e), at, 0, "policy@example.org=1")
	if _, _, _, err := VerifyCleartext(plain, trusted, opts); err != nil {
		t.Fatalf("a non-critical notation: %v", err)
	}
	critical := agreeRawSign(t, a, e, fingerprint(e), at, 0, "!policy@example.org=1")
	if _, _, _, err := VerifyCleartext(critical, trusted, opts); !errors.Is(err, ErrUnknownCritical) || !errors.Is(err, ErrBadSignature) || !errors.Is(err, ErrVerification) {
		t.Errorf("a critical notation: got %v, want ErrUnknownCritical and ErrBadSignature", err)
	}
	if _, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, b), nil, &SignOptions{Signature: critical, Now: opts.Now}); !errors.Is(err, ErrUnknownCritical) {
		t.Errorf("attaching a signature with a critical notation: got %v, want ErrUnknownCritical", err)
	}

	// The key: its self-signature re-made with a critical notation (a
	// valid self-signature).
	key := signer(t, "ed25519.sec.asc")
	id := key.PrimaryIdentity()
	cfg := &packet.Config{Time: func() time.Time { return created }}
	self := id.SelfSignature
	self.Notations = []*packet.Notation{{Name: "policy@example.org", Value: []byte("1"), IsCritical: true, IsHumanReadable: true}}
	if err := self.SignUserId(id.UserId.Id, key.PrimaryKey, key.PrivateKey, cfg); err != nil {
		t.Fatal(err)
	}
	if err := key.PrimaryKey.VerifyUserIdSignature(id.UserId.Id, key.PrimaryKey, self); err != nil {
		t.Fatalf("the re-made self-signature: %v", err)
	}
	if _, err := Sign(&bytes.Buffer{}, reader(t, b), key, &SignOptions{Now: opts.Now}); !errors.Is(err, ErrNoSigningKey) {
		t.Errorf("signing with the key: got %v, want ErrNoSigningKey", err)
	}
	_, _, _, err = VerifyCleartext(plain, openpgp.EntityList{key}, opts)
	if !errors.Is(err, ErrUnknownCritical) || !errors.Is(err, ErrUnknownSigner) {
		t.Errorf("verifying with the key: got %v, want ErrUnknownCritical and ErrUnknownSigner", err)
	}
}
