package signing

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
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
		// GnuPG would skip text before the armor; we say where it is, so a
		// keyring never holds more (or less) than its owner sees.
		if i := bytes.Index(data, []byte("-----BEGIN PGP ")); i >= 0 {
			line := bytes.Count(data[:i], []byte("\n")) + 1
			return nil, fmt.Errorf("%w: text before the armored key block (which starts on line %d); remove it, or export the key again with 'gpg --export --armor'", ErrKeyFormat, line)
		}
		if data[0]&0x80 == 0 {
			// A binary keyring starts with a packet tag, which has the top
			// bit set; go-crypto would say "tag byte does not have MSB set".
			return nil, fmt.Errorf("%w: neither an armored key block (-----BEGIN PGP PUBLIC KEY BLOCK-----) nor a binary keyring", ErrKeyFormat)
		}
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

// SelectSigner merges the copies of each key in keys (see Keyring), then
// picks the first key that has a secret signing key (primary or subkey) the
// trust rule allows at now, and decrypts it with passphrase if it is
// protected. It refuses revoked and expired keys (ErrSignerRevoked,
// ErrSignerExpired) as Verify would, says ErrPassphraseNeeded when a
// protected key gets no passphrase and ErrWrongPassphrase when the
// passphrase is wrong.
func SelectSigner(keys openpgp.EntityList, passphrase []byte, now time.Time) (*openpgp.Entity, error) {
	if len(keys) == 0 {
		return nil, ErrNoKey
	}
	var firstErr error
	for _, e := range NewKeyring(keys).Entities() {
		k, err := selectKey(e, now)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if k.private.Encrypted {
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

// fingerprint is e's primary key fingerprint in upper-case hex.
func fingerprint(e *openpgp.Entity) string { return fmt.Sprintf("%X", e.PrimaryKey.Fingerprint) }

// UserID is e's primary user ID, or "" if it has none.
func UserID(e *openpgp.Entity) string {
	if id := e.PrimaryIdentity(); id != nil {
		return id.Name
	}
	return ""
}
