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
var ErrVerification = errors.New("verification failed")

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
	ErrUnsigned = verificationError("assembly is not signed")
	// ErrUnsignedContent: signature.asc holds text outside the one signed
	// message, or more than one message.
	ErrUnsignedContent = verificationError("text outside the signed message")
	// ErrMalformedSignature: signature.asc is not a signed message, either
	// cleartext (RFC 4880 §7, as sign writes it) or inline and armored (gpg
	// --sign --armor): a detached signature, bad armor, no signature packet.
	ErrMalformedSignature = verificationError("malformed signature")
	// ErrBadSignature: the OpenPGP signature does not match the signed text.
	ErrBadSignature = verificationError("bad signature")
	// ErrUnknownCritical: a signature, or the self-signature of the key
	// that made it, carries a critical subpacket or notation this package
	// does not know, which makes it invalid (RFC 4880 §5.2.3.1 and
	// §5.2.3.16, RFC 9580 §5.2.3.7). A signature's error also matches
	// ErrBadSignature (gpg --verify says BADSIG); a key's also matches
	// ErrUnknownSigner (gpg will not import such a key).
	ErrUnknownCritical = verificationError("unknown critical subpacket")
	// ErrUnknownSigner: no trusted key made the signature.
	ErrUnknownSigner = verificationError("unknown signer")
	// ErrKeyExpired: the signer's key had expired when the signature was made.
	ErrKeyExpired = verificationError("key expired")
	// ErrKeyNotYetValid: the signature is dated before the signer's key (or
	// signing subkey) was created.
	ErrKeyNotYetValid = verificationError("signature predates the key")
	// ErrSignatureExpired: the signature carries an expiration time (gpg
	// --default-sig-expire) that has passed: its signer made it valid only
	// until then (gpg --verify says EXPSIG).
	ErrSignatureExpired = verificationError("signature expired")
	// ErrKeyRevoked: the signer's key (or signing subkey, or primary user ID)
	// is revoked.
	ErrKeyRevoked = verificationError("key revoked")
	// ErrWeakSignatureHash: the OpenPGP signature uses MD5, SHA-1 or
	// RIPEMD-160 ("weak hash, rejected").
	ErrWeakSignatureHash = verificationError("weak signature hash")
	// ErrAttestation: the signed attestation is not valid (bad JSON, duplicate
	// keys, missing fields, bad sizes or hashes).
	ErrAttestation = verificationError("invalid attestation")
	// ErrWeakAlgorithm: the attestation uses MD5 or SHA-1.
	ErrWeakAlgorithm = verificationError("weak attestation algorithm")
	// ErrNonce: the attestation's nonce is missing, malformed or too short.
	ErrNonce = verificationError("invalid nonce")
	// ErrTimestamp: the attestation's timestamp disagrees with the
	// signature's creation time, or the signature is from the future.
	ErrTimestamp = verificationError("timestamp mismatch")
	// ErrUnlisted: the archive holds a file the attestation does not list.
	ErrUnlisted = verificationError("file not attested")
	// ErrMissing: the attestation lists a file the archive does not hold.
	ErrMissing = verificationError("attested file missing")
	// ErrSizeMismatch: a file's size differs from its attested size.
	ErrSizeMismatch = verificationError("size mismatch")
	// ErrDigestMismatch: a file's salted hash differs from its attested hash.
	ErrDigestMismatch = verificationError("digest mismatch")
)

// ErrPolicy is the umbrella of the policy failures below: the signatures
// are sound, but not the ones the Policy asks for. It wraps ErrVerification.
var ErrPolicy = verificationError("signature policy not met")

// Policy failures, each wrapping ErrPolicy (and so ErrVerification).
var (
	// ErrThreshold: fewer distinct trusted keys signed than Policy.MinSigners.
	ErrThreshold = &sentinel{"too few trusted signers", ErrPolicy}
	// ErrRequiredSigner: a key that Policy.Signers requires did not sign.
	ErrRequiredSigner = &sentinel{"required signer missing", ErrPolicy}
	// ErrAlgorithmNotAllowed: the attestation or a trusted signature uses a
	// hash that Policy.Algorithms does not list.
	ErrAlgorithmNotAllowed = &sentinel{"algorithm not allowed by the policy", ErrPolicy}
)

// Signing failures.
var (
	// ErrNoKey: no signing key was given; the spec forbids signing without one.
	ErrNoKey = errors.New("no signing key configured")
	// ErrNoSigningKey: the key holds no usable secret signing key (for
	// instance a public key, or a primary-only key without the sign flag).
	ErrNoSigningKey = errors.New("no usable signing key")
	// ErrSignerExpired: the signing key has expired (as of the signing time).
	ErrSignerExpired = errors.New("signing key expired")
	// ErrSignerRevoked: the signing key is revoked.
	ErrSignerRevoked = errors.New("signing key revoked")
	// ErrPassphraseNeeded: the key is protected and no passphrase was given.
	ErrPassphraseNeeded = errors.New("key is passphrase-protected")
	// ErrWrongPassphrase: the passphrase does not decrypt the key.
	ErrWrongPassphrase = errors.New("wrong passphrase")
	// ErrKeyFormat: the key file cannot be read as OpenPGP keys.
	ErrKeyFormat = errors.New("unreadable key")
	// ErrAttestationMismatch: an attestation to sign or co-sign (sign
	// --signature, sign --add) does not match the assembly: a file changed,
	// was added or removed since it was made, or it is another assembly's.
	// The error also wraps the cause (ErrDigestMismatch, ErrSizeMismatch,
	// ErrUnlisted or ErrMissing).
	ErrAttestationMismatch = errors.New("the attestation does not match the assembly")
	// ErrWouldDropSignatures: signing an assembly already signed, neither
	// co-signing (SignOptions.Add) nor replacing (SignOptions.Replace),
	// would drop signatures by keys that do not sign again.
	ErrWouldDropSignatures = errors.New("signing would drop the assembly's signatures")
	// ErrNotSigned: sign --add on an assembly that has no signature yet.
	ErrNotSigned = errors.New("no signature to add to")
	// ErrAlreadySigned: a new signature (sign --add, several keys, an
	// attached message) is by a key whose primary key already signed the
	// attestation; it would not count as another signer.
	ErrAlreadySigned = errors.New("the key already signed this attestation")
	// ErrNoMatchingKey: no key matches a LocalUsers entry.
	ErrNoMatchingKey = errors.New("no matching key")
	// ErrAmbiguousKey: a LocalUsers entry matches more than one key, or a
	// key file holds several usable secret keys and none was chosen.
	ErrAmbiguousKey = errors.New("ambiguous key choice")
	// ErrInputChanged: the assembly being signed was written to or
	// replaced while it was read, so the signed copy matches neither
	// version; nothing was written.
	ErrInputChanged = errors.New("assembly changed while it was signed")
)

// twoCauses is an error matching two sentinels (errors.Is), with its own
// message.
type twoCauses struct {
	msg  string
	errs [2]error
}

func (e *twoCauses) Error() string   { return e.msg }
func (e *twoCauses) Unwrap() []error { return e.errs[:] }

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
