package signing

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// maxKeyFileSize bounds a key or keyring file.
const maxKeyFileSize = 16 << 20

// ReadKeys reads OpenPGP keys, public or secret: a binary keyring, or armored
// text holding one or several key blocks (as `cat a.asc b.asc` makes).
func ReadKeys(r io.Reader) (openpgp.EntityList, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxKeyFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxKeyFileSize {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrKeyFormat, maxKeyFileSize)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%w: empty", ErrKeyFormat)
	}
	var keys openpgp.EntityList
	if !bytes.HasPrefix(trimmed, []byte("-----BEGIN ")) {
		keys, err = openpgp.ReadKeyRing(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrKeyFormat, err)
		}
	} else {
		// ReadArmoredKeyRing reads only the first armor block: read each.
		const endMark = "-----END PGP "
		rest := trimmed
		for len(bytes.TrimSpace(rest)) > 0 {
			rest = bytes.TrimSpace(rest)
			if !bytes.HasPrefix(rest, []byte("-----BEGIN PGP ")) {
				return nil, fmt.Errorf("%w: text between armored key blocks", ErrKeyFormat)
			}
			i := bytes.Index(rest, []byte(endMark))
			if i < 0 {
				return nil, fmt.Errorf("%w: armored block without an END line", ErrKeyFormat)
			}
			j := bytes.IndexByte(rest[i:], '\n')
			if j < 0 {
				j = len(rest) - i
			}
			block := rest[:i+j]
			rest = rest[i+j:]
			el, err := openpgp.ReadArmoredKeyRing(bytes.NewReader(block))
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrKeyFormat, err)
			}
			keys = append(keys, el...)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no keys found", ErrKeyFormat)
	}
	return keys, nil
}

// SelectSigner picks the first entity in keys that has a secret signing key
// (primary or subkey) valid at now, and decrypts it with passphrase if it is
// protected. It refuses expired and revoked keys (ErrSignerExpired,
// ErrSignerRevoked), says ErrPassphraseNeeded when a protected key gets no
// passphrase and ErrWrongPassphrase when the passphrase is wrong.
func SelectSigner(keys openpgp.EntityList, passphrase []byte, now time.Time) (*openpgp.Entity, error) {
	if len(keys) == 0 {
		return nil, ErrNoKey
	}
	var firstErr error
	for _, e := range keys {
		k, err := signingKey(e, now)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if k.PrivateKey.Encrypted {
			if len(passphrase) == 0 {
				return nil, fmt.Errorf("%w: key %s", ErrPassphraseNeeded, fingerprint(e))
			}
			// go-crypto reports a wrong passphrase as a checksum or AEAD
			// failure of the decrypted key material.
			if err := e.DecryptPrivateKeys(passphrase); err != nil {
				return nil, fmt.Errorf("%w for key %s (%v)", ErrWrongPassphrase, fingerprint(e), err)
			}
		}
		return e, nil
	}
	return nil, firstErr
}

// signingKey returns e's secret signing key valid at now, or why there is none.
func signingKey(e *openpgp.Entity, now time.Time) (openpgp.Key, error) {
	if revokedAny(e, nil) {
		return openpgp.Key{}, fmt.Errorf("%w: key %s", ErrSignerRevoked, fingerprint(e))
	}
	if now.Before(e.PrimaryKey.CreationTime) {
		return openpgp.Key{}, fmt.Errorf("%w: key %s was created on %s, after the signing time", ErrNoSigningKey, fingerprint(e), e.PrimaryKey.CreationTime.UTC().Format(time.RFC3339))
	}
	k, ok := e.SigningKey(now)
	if !ok {
		if self, _ := e.PrimarySelfSignature(); self != nil && e.PrimaryKey.KeyExpired(self, now) {
			return openpgp.Key{}, fmt.Errorf("%w: key %s expired on %s", ErrSignerExpired, fingerprint(e), expiry(e.PrimaryKey, self))
		}
		for _, sk := range e.Subkeys {
			if sk.Sig.FlagsValid && sk.Sig.FlagSign && sk.PublicKey.KeyExpired(sk.Sig, now) {
				return openpgp.Key{}, fmt.Errorf("%w: signing subkey %X expired on %s", ErrSignerExpired, sk.PublicKey.Fingerprint, expiry(sk.PublicKey, sk.Sig))
			}
			if sk.Sig.FlagsValid && sk.Sig.FlagSign && len(sk.Revocations) > 0 {
				return openpgp.Key{}, fmt.Errorf("%w: signing subkey %X", ErrSignerRevoked, sk.PublicKey.Fingerprint)
			}
		}
		return openpgp.Key{}, fmt.Errorf("%w: key %s has no signing key valid now", ErrNoSigningKey, fingerprint(e))
	}
	if len(k.Revocations) > 0 {
		return openpgp.Key{}, fmt.Errorf("%w: signing subkey %X", ErrSignerRevoked, k.PublicKey.Fingerprint)
	}
	if k.PrivateKey == nil || k.PrivateKey.Dummy() {
		return openpgp.Key{}, fmt.Errorf("%w: key %s: no secret key material (is this a public key?)", ErrNoSigningKey, fingerprint(e))
	}
	return k, nil
}

// revokedAny reports whether e, its primary identity, or the given subkey
// carries any revocation signature, whatever its reason and date.
func revokedAny(e *openpgp.Entity, signingKey *packet.PublicKey) bool {
	if len(e.Revocations) > 0 {
		return true
	}
	if _, id := e.PrimarySelfSignature(); id != nil && len(id.Revocations) > 0 {
		return true
	}
	if signingKey != nil {
		for _, sk := range e.Subkeys {
			if sk.PublicKey.KeyId == signingKey.KeyId && len(sk.Revocations) > 0 {
				return true
			}
		}
	}
	return false
}

func expiry(pk *packet.PublicKey, sig *packet.Signature) string {
	if sig.KeyLifetimeSecs == nil {
		return "never"
	}
	return pk.CreationTime.Add(time.Duration(*sig.KeyLifetimeSecs) * time.Second).UTC().Format(time.RFC3339)
}

// fingerprint is e's primary key fingerprint in upper-case hex.
func fingerprint(e *openpgp.Entity) string { return fmt.Sprintf("%X", e.PrimaryKey.Fingerprint) }

// UserID is e's primary user ID, or "" if it has none.
func UserID(e *openpgp.Entity) string {
	if id := e.PrimaryIdentity(); id != nil {
		return id.Name
	}
	return ""
}
