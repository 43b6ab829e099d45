package signing

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// A Keyring is a set of OpenPGP keys in which every copy of a key is merged
// into one, as GnuPG merges a key on import: the union of its user IDs,
// self-signatures, subkeys and revocations. It answers the one trust
// question of this package, for verification and signing alike: may this
// key make a signature at time T? A revocation in any copy revokes the key
// (whatever its date or reason); a key's expiry comes from its newest
// self-signature, whichever copy holds it; so the order of keyring files,
// or of key blocks in one file, never changes the answer.
type Keyring struct {
	entities openpgp.EntityList // merged, in the order first seen
}

// NewKeyring merges the keys of every list (copies of one key are matched
// by primary key fingerprint). The entities it holds are new values; the
// lists' entities are not modified, but packets are shared with them. It
// takes time linear in the number of copies: each key is merged once, from
// all its copies.
func NewKeyring(lists ...openpgp.EntityList) *Keyring {
	index := map[string]int{}
	var copies [][]*openpgp.Entity
	for _, l := range lists {
		for _, e := range l {
			fp := string(e.PrimaryKey.Fingerprint)
			i, ok := index[fp]
			if !ok {
				i = len(copies)
				index[fp] = i
				copies = append(copies, nil)
			}
			copies[i] = append(copies[i], e)
		}
	}
	k := &Keyring{entities: make(openpgp.EntityList, 0, len(copies))}
	for _, c := range copies {
		k.entities = append(k.entities, mergeEntity(c))
	}
	return k
}

// Entities lists the merged keys, in the order first seen.
func (k *Keyring) Entities() openpgp.EntityList { return k.entities }

// Len is the number of distinct keys.
func (k *Keyring) Len() int { return len(k.entities) }

// mergeEntity returns a new entity holding everything of the copies (at
// least one), which must share a primary key.
func mergeEntity(copies []*openpgp.Entity) *openpgp.Entity {
	m := &openpgp.Entity{PrimaryKey: copies[0].PrimaryKey, PrivateKey: copies[0].PrivateKey, Identities: map[string]*openpgp.Identity{}}
	subkeys := map[string]int{}
	for _, c := range copies {
		// Secret material from any copy that has it.
		if usableSecret(c.PrivateKey) && !usableSecret(m.PrivateKey) {
			m.PrivateKey, m.PrimaryKey = c.PrivateKey, c.PrimaryKey
		}
		m.Revocations = append(m.Revocations, c.Revocations...)
		m.Signatures = append(m.Signatures, c.Signatures...)
		m.SelfSignature = newest(m.SelfSignature, c.SelfSignature)
		for name, id := range c.Identities {
			mid := m.Identities[name]
			if mid == nil {
				mid = &openpgp.Identity{Name: id.Name, UserId: id.UserId}
				m.Identities[name] = mid
			}
			mid.SelfSignature = newest(mid.SelfSignature, id.SelfSignature)
			mid.Revocations = append(mid.Revocations, id.Revocations...)
			mid.Signatures = append(mid.Signatures, id.Signatures...)
		}
		for _, sk := range c.Subkeys {
			fp := string(sk.PublicKey.Fingerprint)
			i, ok := subkeys[fp]
			if !ok {
				subkeys[fp] = len(m.Subkeys)
				m.Subkeys = append(m.Subkeys, openpgp.Subkey{PublicKey: sk.PublicKey})
				i = len(m.Subkeys) - 1
			}
			ms := &m.Subkeys[i]
			if sk.PrivateKey != nil && (ms.PrivateKey == nil || usableSecret(sk.PrivateKey) && !usableSecret(ms.PrivateKey)) {
				ms.PrivateKey, ms.PublicKey = sk.PrivateKey, sk.PublicKey
			}
			ms.Sig = newest(ms.Sig, sk.Sig)
			ms.Revocations = append(ms.Revocations, sk.Revocations...)
		}
	}
	return m
}

// newest is the later-made of two self-signatures (either may be nil); on
// a tie the first is kept.
func newest(a, b *packet.Signature) *packet.Signature {
	if a == nil || (b != nil && b.CreationTime.After(a.CreationTime)) {
		return b
	}
	return a
}

func usableSecret(k *packet.PrivateKey) bool { return k != nil && !k.Dummy() }

// A signingKey is one key of a merged entity that could make signatures:
// the primary key or a subkey, with the self-signature that gives its
// flags and expiry (the primary's newest self-signature, or the subkey's
// newest binding signature) and its own revocations.
type signingKey struct {
	entity      *openpgp.Entity
	public      *packet.PublicKey
	private     *packet.PrivateKey
	binding     *packet.Signature
	revocations []*packet.Signature
}

func (k signingKey) isSubkey() bool { return k.public != k.entity.PrimaryKey }

// keys lists e's keys, subkeys first (newest binding first), then the
// primary key: the order in which a signer picks one.
func keys(e *openpgp.Entity) []signingKey {
	var out []signingKey
	for _, sk := range e.Subkeys {
		out = append(out, signingKey{entity: e, public: sk.PublicKey, private: sk.PrivateKey, binding: sk.Sig, revocations: sk.Revocations})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].binding.CreationTime.After(out[j].binding.CreationTime) })
	self, _ := e.PrimarySelfSignature()
	return append(out, signingKey{entity: e, public: e.PrimaryKey, private: e.PrivateKey, binding: self, revocations: e.Revocations})
}

// A fault is why a key may not make a signature at some time. Verify and
// the signer report it with their own sentinels (see verifyError and
// signError); the rule that finds it is one: keyFault.
type fault struct {
	kind faultKind
	msg  string
}

type faultKind int

const (
	faultRevoked faultKind = iota + 1
	faultNotYetValid
	faultExpired
	faultCritical
	faultCannotSign
)

func (f *fault) verifyError() error {
	switch f.kind {
	case faultRevoked:
		return fmt.Errorf("%w: %s", ErrKeyRevoked, f.msg)
	case faultNotYetValid:
		return fmt.Errorf("%w: %s", ErrKeyNotYetValid, f.msg)
	case faultExpired:
		return fmt.Errorf("%w: %s", ErrKeyExpired, f.msg)
	case faultCritical:
		return &twoCauses{fmt.Sprintf("%v: %s", ErrUnknownCritical, f.msg), [2]error{ErrUnknownCritical, ErrUnknownSigner}}
	}
	return fmt.Errorf("%w: %s", ErrUnknownSigner, f.msg)
}

func (f *fault) signError() error {
	switch f.kind {
	case faultRevoked:
		return fmt.Errorf("%w: %s", ErrSignerRevoked, f.msg)
	case faultExpired:
		return fmt.Errorf("%w: %s", ErrSignerExpired, f.msg)
	}
	return fmt.Errorf("%w: %s", ErrNoSigningKey, f.msg)
}

// keyFault is the trust rule: it reports why k (of a merged entity) may
// not make a signature at time at, or nil if it may.
//
//   - revoked: any revocation of the key, of the signing subkey or of the
//     primary user ID, in any copy, whatever its date or reason (the
//     primary user ID is an unrevoked one while any remains, so a key is
//     revoked by its user IDs only when all of them are, as gpg has it);
//   - not yet valid: at is before the key (or subkey) was created;
//   - expired: at is after the expiry stated by the newest self-signature
//     (the primary's, and the subkey's binding for a subkey), or after that
//     self-signature's own expiry;
//   - critical: the self-signature or binding (or a subkey's cross
//     signature) carries a critical notation, which we do not know;
//   - cannot sign: no self-signature, or one whose key flags lack "sign".
func keyFault(k signingKey, at time.Time) *fault {
	e := k.entity
	fp := fingerprint(e)
	what := "key " + fp
	if k.isSubkey() {
		what = fmt.Sprintf("signing subkey %X of key %s", k.public.Fingerprint, fp)
	}
	if id := UserID(e); id != "" {
		what += fmt.Sprintf(" (%s)", id)
	}
	self, ident := e.PrimarySelfSignature()
	switch {
	case len(e.Revocations) > 0:
		return &fault{faultRevoked, fmt.Sprintf("key %s is revoked (%s)", fp, revocationNote(e.Revocations))}
	case ident != nil && len(ident.Revocations) > 0:
		return &fault{faultRevoked, fmt.Sprintf("the primary user ID of key %s is revoked (%s)", fp, revocationNote(ident.Revocations))}
	case k.isSubkey() && len(k.revocations) > 0:
		return &fault{faultRevoked, fmt.Sprintf("%s is revoked (%s)", what, revocationNote(k.revocations))}
	case self == nil:
		return &fault{faultCannotSign, fmt.Sprintf("%s has no valid self-signature", what)}
	case k.binding == nil:
		return &fault{faultCannotSign, fmt.Sprintf("%s has no valid binding signature", what)}
	}
	var cross *packet.Signature
	if k.isSubkey() {
		cross = k.binding.EmbeddedSignature
	}
	if name, ok := criticalNotation(self, k.binding, cross); ok {
		return &fault{faultCritical, fmt.Sprintf("a self-signature of %s carries the critical notation %q, which we do not know: it is invalid, and so is the key (RFC 4880 §5.2.3.16; gpg will not import it)", what, name)}
	}
	for _, c := range []struct {
		pk  *packet.PublicKey
		sig *packet.Signature
	}{{e.PrimaryKey, self}, {k.public, k.binding}} {
		if at.Before(c.pk.CreationTime) {
			return &fault{faultNotYetValid, fmt.Sprintf("%s was created on %s, after the signature time %s", what, day(c.pk.CreationTime), day(at))}
		}
		if end, ok := keyExpiry(c.pk, c.sig); ok && at.After(end) {
			return &fault{faultExpired, fmt.Sprintf("%s expired on %s, before the signature time %s", what, day(end), day(at))}
		}
		if c.sig.SigLifetimeSecs != nil && *c.sig.SigLifetimeSecs != 0 {
			end := c.sig.CreationTime.Add(time.Duration(*c.sig.SigLifetimeSecs) * time.Second)
			if at.After(end) {
				return &fault{faultExpired, fmt.Sprintf("the self-signature of %s expired on %s, before the signature time %s", what, day(end), day(at))}
			}
		}
	}
	if !k.binding.FlagsValid || !k.binding.FlagSign || !k.public.PubKeyAlgo.CanSign() {
		return &fault{faultCannotSign, fmt.Sprintf("%s is not a signing key (its key flags do not allow signing)", what)}
	}
	return nil
}

// keyExpiry is when pk expires according to self-signature sig.
func keyExpiry(pk *packet.PublicKey, sig *packet.Signature) (time.Time, bool) {
	if sig.KeyLifetimeSecs == nil || *sig.KeyLifetimeSecs == 0 {
		return time.Time{}, false
	}
	return pk.CreationTime.Add(time.Duration(*sig.KeyLifetimeSecs) * time.Second), true
}

func revocationNote(revs []*packet.Signature) string {
	r := revs[0]
	note := "revocation of " + day(r.CreationTime)
	if r.RevocationReasonText != "" {
		note += fmt.Sprintf(": %q", r.RevocationReasonText)
	}
	return note
}

func day(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// A judgement is the verdict on one signature packet against the keyring at
// given times: which key of the keyring made it, whether it is
// cryptographically valid over the text, and whether that key was trusted
// (unrevoked, existing, not expired, allowed to sign) at each time. Err says
// why not; it is nil exactly when Trusted is true, and wraps ErrVerification
// and one cause.
type judgement struct {
	Signer  *openpgp.Entity   // the merged key that made the signature, or nil
	Key     *packet.PublicKey // the primary key or subkey that made it, or nil
	Time    time.Time         // the signature's creation time
	Valid   bool              // the signature is valid over the text, made by Key
	Trusted bool              // Valid, Key passed the trust rule (keyFault) at every time, and the signature has not expired
	Err     error
}

// judge checks one signature packet over text (the canonical signed bytes
// of a cleartext message) against the keyring, judging the key by the trust
// rule (keyFault) at each of the times at: the signature's own creation
// time, and for an assembly the attestation's timestamp too; then the
// signature itself at now: one its signer gave an expiration time that has
// passed is refused (ErrSignatureExpired; gpg --verify says EXPSIG). It tries every
// key with the signature's issuer key ID (and issuer fingerprint, when the
// signature states one).
func (k *Keyring) judge(sig *packet.Signature, text []byte, now time.Time, at ...time.Time) judgement {
	j := judgement{Time: sig.CreationTime}
	if sig.IssuerKeyId == nil {
		j.Err = fmt.Errorf("%w: signature names no issuer", ErrMalformedSignature)
		return j
	}
	var candidates []signingKey
	for _, e := range k.entities {
		for _, c := range keys(e) {
			if c.public.KeyId != *sig.IssuerKeyId {
				continue
			}
			if len(sig.IssuerFingerprint) > 0 && !bytes.Equal(sig.IssuerFingerprint, c.public.Fingerprint) {
				continue
			}
			candidates = append(candidates, c)
		}
	}
	if len(candidates) == 0 {
		j.Err = fmt.Errorf("%w: signature made %s by %s, which is not among the trusted keys", ErrUnknownSigner, day(sig.CreationTime), issuer(sig))
		return j
	}
	var lastErr error
	for _, c := range candidates {
		if err := checkSignature(c.public, sig, text); err != nil {
			lastErr = err
			continue
		}
		j.Signer, j.Key, j.Valid = c.entity, c.public, true
		for _, t := range at {
			if f := keyFault(c, t); f != nil {
				j.Err = f.verifyError()
				return j
			}
		}
		if l := sig.SigLifetimeSecs; l != nil && *l != 0 {
			if end := sig.CreationTime.Add(time.Duration(*l) * time.Second); now.After(end) {
				j.Err = fmt.Errorf("%w: the signature made %s expired on %s", ErrSignatureExpired, day(sig.CreationTime), day(end))
				return j
			}
		}
		j.Trusted = true
		return j
	}
	j.Err = fmt.Errorf("%w: %v", ErrBadSignature, lastErr)
	return j
}

// issuer names the key a signature says made it, as gpg --verify does:
// "key ID 0123456789ABCDEF (fingerprint ...)", from its issuer subpackets.
func issuer(sig *packet.Signature) string {
	s := fmt.Sprintf("key ID %016X", *sig.IssuerKeyId)
	if len(sig.IssuerFingerprint) > 0 {
		s += fmt.Sprintf(" (fingerprint %X)", sig.IssuerFingerprint)
	}
	return s
}

// checkSignature checks sig over the canonical text with pk.
func checkSignature(pk *packet.PublicKey, sig *packet.Signature, text []byte) error {
	h, err := sig.PrepareVerify()
	if err != nil {
		return err
	}
	switch sig.SigType {
	case packet.SigTypeText:
		// Text signatures hash the text with CRLF line endings (RFC 4880 5.2.1).
		_, err = openpgp.NewCanonicalTextHash(h).Write(text)
	case packet.SigTypeBinary:
		// Only an inline message's (parseSignatureOf): its literal data as it is.
		_, err = h.Write(text)
	default:
		return fmt.Errorf("signature type %#x, want a text or binary signature", sig.SigType)
	}
	if err != nil {
		return err
	}
	if err := pk.VerifySignature(h, sig); err != nil {
		return errors.New("the signature does not match the signed text")
	}
	return nil
}

// selectKey returns the key of the merged entity e that signs at time now:
// the first of keys(e) that has secret key material and that the trust rule
// allows. Otherwise it says why, the gravest reason first: revoked, not yet
// valid, expired, no secret key material, no key allowed to sign.
func selectKey(e *openpgp.Entity, now time.Time) (signingKey, error) {
	var worst *fault
	publicOnly := false
	for _, k := range keys(e) {
		f := keyFault(k, now)
		if f == nil {
			if usableSecret(k.private) {
				return k, nil
			}
			publicOnly = true
			continue
		}
		if worst == nil || f.kind < worst.kind {
			worst = f
		}
	}
	if worst != nil && worst.kind != faultCannotSign {
		return signingKey{}, worst.signError()
	}
	if publicOnly {
		return signingKey{}, fmt.Errorf("%w: key %s: no secret key material (is this a public key?)", ErrNoSigningKey, fingerprint(e))
	}
	if worst != nil {
		return signingKey{}, worst.signError()
	}
	return signingKey{}, fmt.Errorf("%w: key %s has no signing key", ErrNoSigningKey, fingerprint(e))
}
