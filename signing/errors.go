package signing

import (
	"encoding/base64"
	"errors"
	"fmt"
)

// ErrVerification is the umbrella of every verification failure: each of the
// Err* sentinels below that a Verify can return wraps it, so a caller (the
// CLI picks its exit code this way) tests one error to know that an assembly
// is not trusted, and the specific sentinel to know why.
var ErrVerification = errors.New("signing: verification failed")

type sentinel struct {
	msg    string
	parent error
}

func (s *sentinel) Error() string { return s.msg }
func (s *sentinel) Unwrap() error { return s.parent }

func verificationError(msg string) error { return &sentinel{msg, ErrVerification} }

// Verification failures, one per cause. Each wraps ErrVerification.
var (
	// ErrUnsigned: the assembly has no signature.asc.
	ErrUnsigned = verificationError("signing: assembly is not signed")
	// ErrUnsignedContent: signature.asc holds text outside the one
	// cleartext-signed message, or more than one message.
	ErrUnsignedContent = verificationError("signing: text outside the signed message")
	// ErrMalformedSignature: signature.asc is not a cleartext-signed
	// message (a detached or binary signature, bad armor, no signature packet).
	ErrMalformedSignature = verificationError("signing: malformed signature")
	// ErrBadSignature: the OpenPGP signature does not match the signed text.
	ErrBadSignature = verificationError("signing: bad signature")
	// ErrUnknownSigner: no trusted key made the signature.
	ErrUnknownSigner = verificationError("signing: unknown signer")
	// ErrKeyExpired: the signer's key had expired when the signature was made.
	ErrKeyExpired = verificationError("signing: key expired")
	// ErrKeyNotYetValid: the signature is dated before the signer's key (or
	// signing subkey) was created.
	ErrKeyNotYetValid = verificationError("signing: signature predates the key")
	// ErrKeyRevoked: the signer's key (or signing subkey, or primary user ID)
	// is revoked.
	ErrKeyRevoked = verificationError("signing: key revoked")
	// ErrWeakSignatureHash: the OpenPGP signature uses MD5, SHA-1 or
	// RIPEMD-160 ("weak hash, rejected").
	ErrWeakSignatureHash = verificationError("signing: weak signature hash")
	// ErrAttestation: the signed attestation is not valid (bad JSON, duplicate
	// keys, missing fields, bad sizes or hashes).
	ErrAttestation = verificationError("signing: invalid attestation")
	// ErrWeakAlgorithm: the attestation uses MD5 or SHA-1.
	ErrWeakAlgorithm = verificationError("signing: weak attestation algorithm")
	// ErrNonce: the attestation's nonce is missing, malformed or too short.
	ErrNonce = verificationError("signing: invalid nonce")
	// ErrTimestamp: the attestation's timestamp disagrees with the
	// signature's creation time, or the signature is from the future.
	ErrTimestamp = verificationError("signing: timestamp mismatch")
	// ErrUnlisted: the archive holds a file the attestation does not list.
	ErrUnlisted = verificationError("signing: file not attested")
	// ErrMissing: the attestation lists a file the archive does not hold.
	ErrMissing = verificationError("signing: attested file missing")
	// ErrSizeMismatch: a file's size differs from its attested size.
	ErrSizeMismatch = verificationError("signing: size mismatch")
	// ErrDigestMismatch: a file's salted hash differs from its attested hash.
	ErrDigestMismatch = verificationError("signing: digest mismatch")
)

// Signing failures.
var (
	// ErrNoKey: no signing key was given; the spec forbids signing without one.
	ErrNoKey = errors.New("signing: no signing key configured")
	// ErrNoSigningKey: the key holds no usable secret signing key (for
	// instance a public key, or a primary-only key without the sign flag).
	ErrNoSigningKey = errors.New("signing: no usable signing key")
	// ErrSignerExpired: the signing key has expired (as of the signing time).
	ErrSignerExpired = errors.New("signing: signing key expired")
	// ErrSignerRevoked: the signing key is revoked.
	ErrSignerRevoked = errors.New("signing: signing key revoked")
	// ErrPassphraseNeeded: the key is protected and no passphrase was given.
	ErrPassphraseNeeded = errors.New("signing: key is passphrase-protected")
	// ErrWrongPassphrase: the passphrase does not decrypt the key.
	ErrWrongPassphrase = errors.New("signing: wrong passphrase")
	// ErrKeyFormat: the key file cannot be read as OpenPGP keys.
	ErrKeyFormat = errors.New("signing: unreadable key")
	// ErrInputChanged: the assembly being signed was written to or
	// replaced while it was read, so the signed copy matches neither
	// version; nothing was written.
	ErrInputChanged = errors.New("signing: assembly changed while it was signed")
)

// A DigestError reports a file whose salted hash differs from the attested
// one. It wraps ErrDigestMismatch.
type DigestError struct {
	Name      string
	Want, Got []byte
}

func (e *DigestError) Error() string {
	return fmt.Sprintf("%q: digest mismatch (attested %s, found %s)", e.Name,
		base64.StdEncoding.EncodeToString(e.Want), base64.StdEncoding.EncodeToString(e.Got))
}
func (e *DigestError) Unwrap() error { return ErrDigestMismatch }

// A SizeError reports a file whose size differs from the attested one. Got
// is at most Want+1: reading stops one byte past the attested size.
type SizeError struct {
	Name      string
	Want, Got int64
}

func (e *SizeError) Error() string {
	if e.Got > e.Want {
		return fmt.Sprintf("%q: size mismatch (attested %d bytes, found more)", e.Name, e.Want)
	}
	return fmt.Sprintf("%q: size mismatch (attested %d bytes, found %d)", e.Name, e.Want, e.Got)
}
func (e *SizeError) Unwrap() error { return ErrSizeMismatch }
