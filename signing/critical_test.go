package signing

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/cloud-assembly/assemble/internal/gpgtest"
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
	if _, err := verifyCleartext(plain, trusted, opts); err != nil {
		t.Fatalf("a non-critical notation: %v", err)
	}
	critical := agreeRawSign(t, a, e, fingerprint(e), at, 0, "!policy@example.org=1")
	if _, err := verifyCleartext(critical, trusted, opts); !errors.Is(err, ErrUnknownCritical) || !errors.Is(err, ErrBadSignature) || !errors.Is(err, ErrVerification) {
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
	if _, err := Seal(context.Background(), &bytes.Buffer{}, reader(t, b), []Signer{Keys(key)}, &SignOptions{Now: opts.Now}); !errors.Is(err, ErrNoSigningKey) {
		t.Errorf("signing with the key: got %v, want ErrNoSigningKey", err)
	}
	_, err = verifyCleartext(plain, openpgp.EntityList{key}, opts)
	if !errors.Is(err, ErrUnknownCritical) || !errors.Is(err, ErrUnknownSigner) {
		t.Errorf("verifying with the key: got %v, want ErrUnknownCritical and ErrUnknownSigner", err)
	}
}

// Issue 19 item 6: signing an assembly signed by another key, without Add,
// is refused naming that signer (ErrWouldDropSignatures), whether the new
// signature is made here or attached; Replace drops it; re-signing by the
// same key drops nothing, so it needs neither.
func TestSignRefusesToDropSignatures(t *testing.T) {
	ed, rsa := signer(t, "ed25519.sec.asc"), signer(t, "rsa3072.sec.asc")
	trusted := readKeys(t, "trusted.asc")
	now := created.Add(10 * agreeDay)
	at := func(o *SignOptions) *SignOptions { o.Now = func() time.Time { return now }; return o }
	signedByEd := sealed(t, buildZip(t), at(&SignOptions{}), Keys(ed))

	_, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, signedByEd), []Signer{Keys(rsa)}, at(&SignOptions{}))
	if !errors.Is(err, ErrWouldDropSignatures) || !strings.Contains(err.Error(), fingerprint(ed)) || !strings.Contains(err.Error(), "SignOptions.Add") || !strings.Contains(err.Error(), "SignOptions.Replace") {
		t.Fatalf("signing with another key: got %v, want ErrWouldDropSignatures naming %s and both choices", err, fingerprint(ed))
	}
	// Named by user ID when a keyring at hand holds the key.
	_, err = Seal(t.Context(), &bytes.Buffer{}, reader(t, signedByEd), []Signer{Keys(rsa)}, at(&SignOptions{Keyring: trusted}))
	if !errors.Is(err, ErrWouldDropSignatures) || !strings.Contains(err.Error(), UserID(ed)) {
		t.Fatalf("with a keyring: got %v, want the signer's user ID", err)
	}
	// An attached signature by another key too.
	a, err := Attest(t.Context(), reader(t, signedByEd), at(&SignOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	ext := agreeRawSign(t, a, rsa, fingerprint(rsa), now, 0, "")
	if _, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, signedByEd), nil, at(&SignOptions{Signature: ext})); !errors.Is(err, ErrWouldDropSignatures) {
		t.Fatalf("attaching another key's signature: got %v, want ErrWouldDropSignatures", err)
	}
	// Replace drops it; the same key re-signs freely.
	replaced := sealed(t, signedByEd, at(&SignOptions{Replace: true}), Keys(rsa))
	v, err := Verify(context.Background(), reader(t, replaced), trusted, &VerifyOptions{Now: func() time.Time { return now }})
	if err != nil || len(v.Signatures()) != 1 || v.Fingerprint() != fingerprint(rsa) {
		t.Fatalf("replaced: %v", err)
	}
	if _, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, signedByEd), []Signer{Keys(ed)}, at(&SignOptions{})); err != nil {
		t.Fatalf("re-signing with the same key: %v", err)
	}
	// Of two signers, re-signing by one still drops the other.
	both := sealed(t, buildZip(t), at(&SignOptions{}), Keys(ed, rsa))
	if _, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, both), []Signer{Keys(ed)}, at(&SignOptions{})); !errors.Is(err, ErrWouldDropSignatures) || !strings.Contains(err.Error(), fingerprint(rsa)) || strings.Contains(err.Error(), fingerprint(ed)) {
		t.Fatalf("re-signing by one of two: got %v, want ErrWouldDropSignatures naming only %s", err, fingerprint(rsa))
	}
}

// Issue 19 item 7: sign through gpg with a key that has expired (or been
// revoked) says so, as signing with the key file does (ErrSignerExpired,
// ErrSignerRevoked), from gpg's status lines and the key's validity, not
// "no secret key". Keys made by a real gpg, the expired ones under a faked
// time a year ago.
func TestGPGSignerExpiredKey(t *testing.T) {
	h := gpgtest.New(t, "")
	k := &agreeKit{t: t, home: h}
	past := time.Now().Add(-400 * agreeDay).Truncate(time.Second)
	k.genKey("expired", "ed25519", past, false, 30*agreeDay, 0)
	k.genKey("subkey-expired", "ed25519", past, true, 0, 30*agreeDay)
	p, _ := k.genKey("revoked", "ed25519", past, false, 0, 0)
	k.revokeKey(p, past.Add(agreeDay), 1)
	k.genKey("good", "ed25519", past, false, 0, 0)
	b := buildZip(t)
	for _, tt := range []struct {
		user string
		want error
	}{
		{"ed25519-1@agree.test", ErrSignerExpired},
		{"ed25519-2@agree.test", ErrSignerExpired},
		{"ed25519-3@agree.test", ErrSignerRevoked},
		{"ed25519-4@agree.test", nil},
		{"nobody@agree.test", ErrGPGUnknownKey},
	} {
		_, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, b), []Signer{&GPG{Home: h.Dir, LocalUsers: []string{tt.user}}}, nil)
		if tt.want == nil && err != nil || !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.user, err, tt.want)
		}
		if tt.want != nil && tt.want != ErrGPGUnknownKey && (errors.Is(err, ErrGPGUnknownKey) || !errors.Is(err, ErrGPG)) {
			t.Errorf("%s: %v: want it to match ErrGPG, not ErrGPGUnknownKey", tt.user, err)
		}
	}
}
