package signing

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
)

// matchKeys returns the keys (copies merged, see Keyring) that id names,
// as gpg --local-user matches a user ID:
//
//   - 8 or 16 hex digits (optionally 0x-prefixed): a short or long key ID
//     of the primary key or of a subkey; 40 or 64 hex digits: a
//     fingerprint, of the primary key or of a subkey, also spaced as gpg
//     --fingerprint prints it (a trailing "!" is ignored);
//   - "=Name <mail>": exactly that user ID; "<mail>": exactly that e-mail
//     address; "@part": an e-mail address containing part;
//   - anything else: a user ID containing id, ignoring case.
//
// An empty (or blank) id names no key.
func matchKeys(keys openpgp.EntityList, id string) openpgp.EntityList {
	var out openpgp.EntityList
	for _, e := range NewKeyring(keys).Entities() {
		if matchKey(e, id) {
			out = append(out, e)
		}
	}
	return out
}

func matchKey(e *openpgp.Entity, id string) bool {
	id = strings.TrimSpace(id)
	if id == "" {
		return false // gpg: "Invalid user ID"; as a substring it would name every key
	}
	if fp, err := NormalizeFingerprint(id); err == nil {
		id = fp // "ED62 6527 ... FE04 95B7", as gpg --fingerprint prints it
	}
	if hex := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(id, "0x"), "0X"), "!"); isHex(hex) {
		hex = strings.ToUpper(hex)
		switch len(hex) {
		case 8, 16, 40, 64:
			for _, k := range keys(e) {
				fp := fmt.Sprintf("%X", k.public.Fingerprint)
				kid := fmt.Sprintf("%016X", k.public.KeyId)
				if hex == fp || hex == kid || hex == kid[8:] {
					return true
				}
			}
			return false
		}
	}
	for _, ident := range e.Identities {
		name, mail := ident.Name, ident.UserId.Email
		switch {
		case strings.HasPrefix(id, "="):
			if name == id[1:] {
				return true
			}
		case strings.HasPrefix(id, "<") && strings.HasSuffix(id, ">"):
			if mail != "" && strings.EqualFold(mail, id[1:len(id)-1]) {
				return true
			}
		case strings.HasPrefix(id, "@"):
			if strings.Contains(strings.ToLower(mail), strings.ToLower(id[1:])) {
				return true
			}
		default:
			if strings.Contains(strings.ToLower(name), strings.ToLower(strings.TrimPrefix(id, "*"))) {
				return true
			}
		}
	}
	return false
}

func isHex(s string) bool {
	return s != "" && strings.Trim(strings.ToUpper(s), "0123456789ABCDEF") == ""
}

// selectSigners picks the keys to sign with from keys (copies merged): for
// each of ids the one key it names (see matchKeys; ErrNoMatchingKey when
// none does, ErrAmbiguousKey when several do); with no ids, the one key
// that holds a usable secret signing key (ErrAmbiguousKey when there are
// several: a key file holding several keys needs an id). Each key is
// judged by the trust rule at now, as Seal does, and decrypted
// with passphrase when it is protected.
func selectSigners(keys openpgp.EntityList, ids []string, passphrase []byte, now time.Time) ([]*openpgp.Entity, error) {
	if len(keys) == 0 {
		return nil, ErrNoKey
	}
	ring := NewKeyring(keys).Entities()
	var chosen []*openpgp.Entity
	if len(ids) == 0 {
		var firstErr error
		for _, e := range ring {
			if _, err := selectKey(e, now); err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			chosen = append(chosen, e)
		}
		switch {
		case len(chosen) == 0:
			return nil, firstErr
		case len(chosen) > 1:
			return nil, fmt.Errorf("%w: the key file holds %d secret signing keys (%s); choose one by its fingerprint", ErrAmbiguousKey, len(chosen), describe(chosen))
		}
	}
	for _, id := range ids {
		var m []*openpgp.Entity
		for _, e := range ring {
			if matchKey(e, id) {
				m = append(m, e)
			}
		}
		switch {
		case len(m) == 0:
			return nil, fmt.Errorf("%w: %q names none of the keys (%s)", ErrNoMatchingKey, id, describe(ring))
		case len(m) > 1:
			return nil, fmt.Errorf("%w: %q matches %d keys (%s); name one by its fingerprint", ErrAmbiguousKey, id, len(m), describe(m))
		}
		if _, err := selectKey(m[0], now); err != nil {
			return nil, err
		}
		if !slices.Contains(chosen, m[0]) {
			chosen = append(chosen, m[0])
		}
	}
	for _, e := range chosen {
		if err := decrypt(e, passphrase, now); err != nil {
			return nil, err
		}
	}
	return chosen, nil
}

// decrypt decrypts the key of e that signs at now, if it is protected.
func decrypt(e *openpgp.Entity, passphrase []byte, now time.Time) error {
	k, err := selectKey(e, now)
	if err != nil {
		return err
	}
	if !k.private.Encrypted {
		return nil
	}
	if len(passphrase) == 0 {
		return fmt.Errorf("%w: key %s", ErrPassphraseNeeded, fingerprint(e))
	}
	// go-crypto reports a wrong passphrase as a checksum or AEAD failure of
	// the decrypted key material.
	if err := e.DecryptPrivateKeys(passphrase); err != nil {
		return fmt.Errorf("%w for key %s (%v)", ErrWrongPassphrase, fingerprint(e), err)
	}
	return nil
}

// describe lists keys as `"User ID" FINGERPRINT`, for messages.
func describe(ents []*openpgp.Entity) string {
	var s []string
	for _, e := range ents {
		if id := UserID(e); id != "" {
			s = append(s, fmt.Sprintf("%q %s", id, fingerprint(e)))
		} else {
			s = append(s, fingerprint(e))
		}
	}
	return strings.Join(s, ", ")
}
