package signing

import (
	"crypto"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// A Signature is what verification found about one signature packet of
// signature.asc. Only a Trusted signature counts towards a Policy.
type Signature struct {
	// KeyID is the issuer key ID the signature names (16 upper-case hex
	// digits); IssuerFingerprint is its issuer fingerprint subpacket, ""
	// when it has none. Both come from the signature itself, as gpg
	// --verify reports them for a key it does not have.
	KeyID             string
	IssuerFingerprint string
	// Fingerprint (of the primary key), SigningKey (the fingerprint of the
	// key or subkey that signed) and UserID name the key that made the
	// signature when a keyring holds it: the trusted keys, or the known but
	// untrusted ones (VerifyOptions.Known). Empty otherwise.
	Fingerprint, SigningKey, UserID string
	// Time is the signature's creation time; Hash its digest.
	Time time.Time
	Hash crypto.Hash
	// Known: the key is in the known but untrusted keys, not the trusted
	// ones. Valid: the signature checks over the signed text with
	// SigningKey. Trusted: Valid, by a trusted key that the trust rule
	// allowed at the signature's time and at the attestation's timestamp.
	Known, Valid, Trusted bool
	// Err says why the signature is not trusted; nil when it is.
	Err error

	signer *openpgp.Entity
	key    *packet.PublicKey
}

// A Policy says which signatures an assembly needs. The zero value needs
// one trusted signature (and allows every strong algorithm).
type Policy struct {
	// MinSigners is how many distinct trusted primary keys must each have
	// made a valid signature; 0 means 1. Two signatures by one key (or by
	// two subkeys of one key) count once.
	MinSigners int
	// Signers lists primary key fingerprints (hex) that must each have made
	// a trusted signature.
	Signers []string
	// Algorithms, when not empty, lists the hashes allowed for the
	// attestation and for each trusted signature's digest (among SHA256,
	// SHA384 and SHA512; weaker ones are always refused).
	Algorithms []crypto.Hash
}

// A PolicyResult says how an assembly's signatures met its policy.
type PolicyResult struct {
	MinSigners int      // the signers needed (at least 1)
	Signers    []string // the distinct trusted primary keys that signed, in signature order
	Required   []string // the policy's required signers (normalized fingerprints)
	Missing    []string // the required signers that did not sign
	Met        bool     // enough signers, none missing, algorithms allowed
}

// A SignaturesError is a verification failure at the signature step,
// carrying what was found about every signature (in the order of
// signature.asc) and how the policy fared, so that a caller can report
// them all. It wraps the failure's sentinel.
type SignaturesError struct {
	Signatures []Signature
	Policy     PolicyResult
	Err        error
}

func (e *SignaturesError) Error() string { return e.Err.Error() }
func (e *SignaturesError) Unwrap() error { return e.Err }

// NormalizeFingerprint returns a key fingerprint in upper-case hex without
// spaces or a 0x prefix, or an error if it is not the 40 (v4) or 64 (v5
// and v6) hex digits of a fingerprint.
func NormalizeFingerprint(s string) (string, error) {
	f := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
	f = strings.TrimPrefix(f, "0X")
	if (len(f) != 40 && len(f) != 64) || strings.Trim(f, "0123456789ABCDEF") != "" {
		return "", fmt.Errorf("%q is not a key fingerprint (40 or 64 hex digits, as 'gpg --fingerprint' shows)", s)
	}
	return f, nil
}

// verifySignatures judges every signature of m against the trusted keyring
// (naming unknown signers from known), parses the attestation once at
// least one trusted signature vouches for the text, applies the timestamp
// rule and then the policy. A signature by a key outside the trusted set
// is reported and does not count; a trusted key's signature that does not
// check, or whose key the trust rule refuses (revoked, expired, not yet
// valid at the signature's time or at the attestation's), fails the whole
// verification, as does a policy not met.
func verifySignatures(m *message, trusted, known *Keyring, pol Policy, now time.Time) (*Attestation, []Signature, PolicyResult, error) {
	sigs := make([]Signature, len(m.sigs))
	res := PolicyResult{MinSigners: max(pol.MinSigners, 1)}
	for _, f := range pol.Signers {
		nf, err := NormalizeFingerprint(f)
		if err != nil {
			return nil, nil, res, fmt.Errorf("policy: %w", err)
		}
		res.Required = append(res.Required, nf)
	}
	fail := func(i int, err error) (*Attestation, []Signature, PolicyResult, error) {
		if i >= 0 && len(sigs) > 1 {
			err = fmt.Errorf("signature %d of %d: %w", i+1, len(sigs), err)
		}
		res.Met = false
		return nil, sigs, res, &SignaturesError{Signatures: sigs, Policy: res, Err: err}
	}
	for i, s := range m.sigs {
		sigs[i] = judgeSignature(trusted, known, s, m.text, now, s.CreationTime)
	}
	if err := checkTimes(m.sigs, nil, now); err != nil {
		return fail(-1, err)
	}
	for i, s := range sigs {
		if !s.Trusted && !errors.Is(s.Err, ErrUnknownSigner) {
			return fail(i, s.Err)
		}
	}
	trustedAny := slices.ContainsFunc(sigs, func(s Signature) bool { return s.Trusted })
	if !trustedAny {
		if len(sigs) == 1 {
			return fail(-1, sigs[0].Err)
		}
		var who []string
		for _, s := range sigs {
			who = append(who, strings.TrimPrefix(s.Err.Error(), ErrUnknownSigner.Error()+": "))
		}
		return fail(-1, fmt.Errorf("%w: none of the %d signatures is by a trusted key: %s", ErrUnknownSigner, len(sigs), strings.Join(who, "; ")))
	}
	// The text is vouched for by a trusted signature: read it.
	att, err := ParseAttestation(m.plaintext)
	if err != nil {
		return fail(-1, err)
	}
	if err := checkTimes(m.sigs, att, now); err != nil {
		return fail(-1, err)
	}
	// The spec: a key must be valid as of the attestation's timestamp.
	for i, s := range m.sigs {
		if !sigs[i].Trusted {
			continue
		}
		sigs[i] = judgeSignature(trusted, known, s, m.text, now, s.CreationTime, att.Timestamp)
		if !sigs[i].Trusted {
			return fail(i, fmt.Errorf("at the attestation's timestamp %s: %w", day(att.Timestamp), sigs[i].Err))
		}
	}
	if len(pol.Algorithms) > 0 {
		allowed := func(h crypto.Hash) bool { return slices.Contains(pol.Algorithms, h) }
		if !allowed(att.Algorithm) {
			return fail(-1, fmt.Errorf("%w: the attestation uses %s; the policy allows %s", ErrAlgorithmNotAllowed, AlgorithmName(att.Algorithm), algorithmNames(pol.Algorithms)))
		}
		for i, s := range sigs {
			if s.Trusted && !allowed(s.Hash) {
				return fail(i, fmt.Errorf("%w: the signature uses %s; the policy allows %s", ErrAlgorithmNotAllowed, AlgorithmName(s.Hash), algorithmNames(pol.Algorithms)))
			}
		}
	}
	for _, s := range sigs {
		if s.Trusted && !slices.Contains(res.Signers, s.Fingerprint) {
			res.Signers = append(res.Signers, s.Fingerprint)
		}
	}
	for _, f := range res.Required {
		if !slices.Contains(res.Signers, f) {
			res.Missing = append(res.Missing, f)
		}
	}
	if len(res.Missing) > 0 {
		var names []string
		for _, f := range res.Missing {
			names = append(names, keyName(f, trusted, known))
		}
		return fail(-1, fmt.Errorf("%w: no trusted signature by %s", ErrRequiredSigner, strings.Join(names, ", ")))
	}
	if len(res.Signers) < res.MinSigners {
		return fail(-1, fmt.Errorf("%w: %s signed, at least %d required", ErrThreshold, countKeys(len(res.Signers)), res.MinSigners))
	}
	res.Met = true
	return att, sigs, res, nil
}

// judgeSignature is the one trust verdict (Keyring.judge) on one signature,
// as a Signature: judged against the trusted keys at the times at; a key
// the trusted set does not hold is looked up in the known keys, to name it
// and say whether its signature is valid, and never trusted.
func judgeSignature(trusted, known *Keyring, sig *packet.Signature, text []byte, now time.Time, at ...time.Time) Signature {
	s := Signature{KeyID: fmt.Sprintf("%016X", *sig.IssuerKeyId), Time: sig.CreationTime, Hash: sig.Hash}
	if len(sig.IssuerFingerprint) > 0 {
		s.IssuerFingerprint = fmt.Sprintf("%X", sig.IssuerFingerprint)
	}
	j := trusted.judge(sig, text, now, at...)
	if j.Signer == nil && errors.Is(j.Err, ErrUnknownSigner) && known != nil {
		if kj := known.judge(sig, text, now, at...); kj.Signer != nil {
			s.Known, s.Valid = true, kj.Valid
			s.signer, s.key = kj.Signer, kj.Key
			s.Fingerprint, s.SigningKey, s.UserID = fingerprint(kj.Signer), fmt.Sprintf("%X", kj.Key.Fingerprint), UserID(kj.Signer)
			s.Err = fmt.Errorf("%w: signature made %s by %q, %s, a known key that is not trusted", ErrUnknownSigner, day(sig.CreationTime), s.UserID, issuer(sig))
			return s
		}
	}
	s.Valid, s.Trusted, s.Err = j.Valid, j.Trusted, j.Err
	if j.Signer != nil {
		s.signer, s.key = j.Signer, j.Key
		s.Fingerprint, s.SigningKey, s.UserID = fingerprint(j.Signer), fmt.Sprintf("%X", j.Key.Fingerprint), UserID(j.Signer)
	}
	return s
}

// keyName names the key with primary fingerprint fp: `"User ID" (FPR)`
// when one of the keyrings holds it, else the fingerprint.
func keyName(fp string, rings ...*Keyring) string {
	for _, k := range rings {
		if k == nil {
			continue
		}
		for _, e := range k.entities {
			if id := UserID(e); fingerprint(e) == fp && id != "" {
				return fmt.Sprintf("%q (%s)", id, fp)
			}
		}
	}
	return fp
}

func countKeys(n int) string {
	if n == 1 {
		return "1 trusted key"
	}
	return fmt.Sprintf("%d trusted keys", n)
}

func algorithmNames(hs []crypto.Hash) string {
	var names []string
	for _, h := range hs {
		names = append(names, AlgorithmName(h))
	}
	return strings.Join(names, ", ")
}
