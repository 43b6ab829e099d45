package signing

import (
	"encoding/base64"
	"fmt"

	"github.com/cloud-assembly/assemble/errcode"
)

// ErrVerification is the umbrella of every verification failure: each of the
// Err* sentinels below that a Verify can return wraps it, so a caller (the
// CLI picks its exit code this way) tests one error to know that an assembly
// is not trusted, and the specific sentinel to know why.
var ErrVerification = errcode.New("verification_failed", "verification failed",
	"the assembly cannot be trusted as it is; rebuild it and sign it again")

// Verification failures, one per cause. Each wraps ErrVerification.
var (
	// ErrUnsigned: the assembly has no signature.asc.
	ErrUnsigned = errcode.Sub(ErrVerification, "unsigned", "assembly is not signed",
		"sign it, or read it unsigned where the caller allows that (it is then not authenticated)")
	// ErrUnsignedContent: signature.asc holds text outside the one signed
	// message, or more than one message.
	ErrUnsignedContent = errcode.Sub(ErrVerification, "unsigned_content", "text outside the signed message",
		"signature.asc must hold one signed message and nothing else; sign again with 'assemble sign'")
	// ErrMalformedSignature: signature.asc is not a signed message, either
	// cleartext (RFC 4880 §7, as sign writes it) or inline and armored (gpg
	// --sign --armor): a detached signature, bad armor, no signature packet.
	ErrMalformedSignature = errcode.Sub(ErrVerification, "malformed_signature", "malformed signature",
		"give exactly one cleartext-signed message, as 'gpg --clearsign' writes it (not gpg --detach-sign, not gpg --sign)")
	// ErrBadSignature: the OpenPGP signature does not match the signed text.
	ErrBadSignature = errcode.Sub(ErrVerification, "bad_signature", "bad signature",
		"the archive changed after it was signed; rebuild it and sign it again")
	// ErrUnknownCritical: a signature, or the self-signature of the key
	// that made it, carries a critical subpacket or notation this package
	// does not know, which makes it invalid (RFC 4880 §5.2.3.1 and
	// §5.2.3.16, RFC 9580 §5.2.3.7). A signature's error also matches
	// ErrBadSignature (gpg --verify says BADSIG); a key's also matches
	// ErrUnknownSigner (gpg will not import such a key).
	ErrUnknownCritical = errcode.Sub(ErrVerification, "unknown_critical", "unknown critical subpacket",
		"the signer's key or signature carries a critical OpenPGP subpacket this tool does not know: sign again with a key without it")
	// ErrUnknownSigner: no trusted key made the signature.
	ErrUnknownSigner = errcode.Sub(ErrVerification, "unknown_signer", "unknown signer",
		"if you trust the signer, add their public key to the trusted keyrings")
	// ErrKeyExpired: the signer's key had expired when the signature was made.
	ErrKeyExpired = errcode.Sub(ErrVerification, "key_expired", "key expired",
		"the signer's key had expired when it signed: the signer must sign again with a valid key")
	// ErrKeyNotYetValid: the signature is dated before the signer's key (or
	// signing subkey) was created.
	ErrKeyNotYetValid = errcode.Sub(ErrVerification, "key_not_yet_valid", "signature predates the key",
		"the signature is dated before the key existed: check the signer's clock, and sign again")
	// ErrSignatureExpired: the signature carries an expiration time (gpg
	// --default-sig-expire) that has passed: its signer made it valid only
	// until then (gpg --verify says EXPSIG).
	ErrSignatureExpired = errcode.Sub(ErrVerification, "signature_expired", "signature expired",
		"the signer made the signature valid only until then: they must sign again")
	// ErrKeyRevoked: the signer's key (or signing subkey, or primary user ID)
	// is revoked.
	ErrKeyRevoked = errcode.Sub(ErrVerification, "key_revoked", "key revoked",
		"the signer must sign again with a valid key")
	// ErrWeakSignatureHash: the OpenPGP signature uses MD5, SHA-1 or
	// RIPEMD-160 ("weak hash, rejected").
	ErrWeakSignatureHash = errcode.Sub(ErrVerification, "weak_signature_hash", "weak signature hash",
		"the OpenPGP signature uses a weak hash (MD5, SHA-1): sign again with 'assemble sign' (SHA256 or stronger)")
	// ErrAttestation: the signed attestation is not valid (bad JSON, duplicate
	// keys, missing fields, bad sizes or hashes).
	ErrAttestation = errcode.Sub(ErrVerification, "invalid_attestation", "invalid attestation",
		"signature.asc does not hold a valid attestation: sign the assembly again with 'assemble sign'")
	// ErrWeakAlgorithm: the attestation uses MD5 or SHA-1.
	ErrWeakAlgorithm = errcode.Sub(ErrVerification, "weak_algorithm", "weak attestation algorithm",
		"the attestation uses a weak hash (MD5, SHA-1): sign again with 'assemble sign' (SHA256 or stronger)")
	// ErrNonce: the attestation's nonce is missing, malformed or too short.
	ErrNonce = errcode.Sub(ErrVerification, "invalid_nonce", "invalid nonce",
		"sign the assembly again with 'assemble sign' (it makes a fresh nonce of the right size)")
	// ErrTimestamp: the attestation's timestamp disagrees with the
	// signature's creation time, or the signature is from the future.
	ErrTimestamp = errcode.Sub(ErrVerification, "timestamp_mismatch", "timestamp mismatch",
		"a signature may not predate its attestation by more than 5 minutes, nor come from the future: check the signer's clock, and sign soon after 'assemble attest'")
	// ErrUnlisted: the archive holds a file the attestation does not list.
	ErrUnlisted = errcode.Sub(ErrVerification, "file_not_attested", "file not attested",
		"the archive changed after it was signed (it holds a file the signature does not list); rebuild it and sign it again")
	// ErrMissing: the attestation lists a file the archive does not hold.
	ErrMissing = errcode.Sub(ErrVerification, "attested_file_missing", "attested file missing",
		"the archive changed after it was signed (a file the signature lists is gone); rebuild it and sign it again")
	// ErrSizeMismatch: a file's size differs from its attested size.
	ErrSizeMismatch = errcode.Sub(ErrVerification, "size_mismatch", "size mismatch",
		"the archive changed after it was signed (a file's size is not the signed one); rebuild it and sign it again")
	// ErrDigestMismatch: a file's salted hash differs from its attested hash.
	ErrDigestMismatch = errcode.Sub(ErrVerification, "digest_mismatch", "digest mismatch",
		"the archive changed after it was signed (a file's bytes are not the signed ones); rebuild it and sign it again")
)

// ErrPolicy is the umbrella of the policy failures below: the signatures
// are sound, but not the ones the Policy asks for. It wraps ErrVerification.
var ErrPolicy = errcode.Sub(ErrVerification, "policy_not_met", "signature policy not met",
	"the signatures do not meet the policy: see the signature lines above, and have the missing signers co-sign (SignOptions.Add)")

// Policy failures, each wrapping ErrPolicy (and so ErrVerification).
var (
	// ErrThreshold: fewer distinct trusted keys signed than Policy.MinSigners.
	ErrThreshold = errcode.Sub(ErrPolicy, "too_few_signers", "too few trusted signers",
		"more trusted keys must sign: each co-signer adds a signature (SignOptions.Add)")
	// ErrRequiredSigner: a key that Policy.Signers requires did not sign.
	ErrRequiredSigner = errcode.Sub(ErrPolicy, "required_signer_missing", "required signer missing",
		"the required signer must add a signature with their key (SignOptions.Add)")
	// ErrAlgorithmNotAllowed: the attestation or a trusted signature uses a
	// hash that Policy.Algorithms does not list.
	ErrAlgorithmNotAllowed = errcode.Sub(ErrPolicy, "algorithm_not_allowed", "algorithm not allowed by the policy",
		"sign again with an allowed algorithm (SignOptions.Algorithm)")
)

// Signing failures.
var (
	// ErrNoKey: no signing key was given; the spec forbids signing without one.
	ErrNoKey = errcode.New("no_key", "no signing key configured",
		"name a secret key (SignerOptions.KeyFile, or $ASSEMBLE_SIGNING_KEY), or sign with gpg or a made signature")
	// ErrNoSigningKey: the key holds no usable secret signing key (for
	// instance a public key, or a primary-only key without the sign flag).
	ErrNoSigningKey = errcode.New("no_signing_key", "no usable signing key",
		"a signer needs a secret key (gpg --export-secret-keys --armor KEYID > key.asc); a public key belongs in the trusted keyrings")
	// ErrSignerExpired: the signing key has expired (as of the signing time).
	ErrSignerExpired = errcode.New("signer_expired", "signing key expired",
		"sign with a valid key; extend an expired key with gpg --quick-set-expire")
	// ErrSignerRevoked: the signing key is revoked.
	ErrSignerRevoked = errcode.New("signer_revoked", "signing key revoked",
		"sign with a key that is not revoked")
	// ErrPassphraseNeeded: the key is protected and no passphrase was given.
	ErrPassphraseNeeded = errcode.New("passphrase_needed", "key is passphrase-protected",
		"give the passphrase (SignerOptions.PassphraseFile, or $ASSEMBLE_PASSPHRASE); assemble prompts for it only at a terminal")
	// ErrWrongPassphrase: the passphrase does not decrypt the key.
	ErrWrongPassphrase = errcode.New("wrong_passphrase", "wrong passphrase",
		"check the passphrase file, $ASSEMBLE_PASSPHRASE or what was typed at the prompt (a trailing newline is ignored)")
	// ErrKeyFormat: the key file cannot be read as OpenPGP keys.
	ErrKeyFormat = errcode.New("key_format", "unreadable key",
		"give an OpenPGP key, armored or binary (gpg --export --armor KEYID, or gpg --export-secret-keys for a signing key)")
	// ErrAttestationMismatch: an attestation to sign or co-sign (sign
	// --signature, sign --add) does not match the assembly: a file changed,
	// was added or removed since it was made, or it is another assembly's.
	// The error also wraps the cause (ErrDigestMismatch, ErrSizeMismatch,
	// ErrUnlisted or ErrMissing).
	ErrAttestationMismatch = errcode.New("attestation_mismatch", "the attestation does not match the assembly",
		"the attestation was made for another assembly, or this one changed since: run 'assemble attest' on it again and sign that")
	// ErrWouldDropSignatures: signing an assembly already signed, neither
	// co-signing (SignOptions.Add) nor replacing (SignOptions.Replace),
	// would drop signatures by keys that do not sign again.
	ErrWouldDropSignatures = errcode.New("would_drop_signatures", "signing would drop the assembly's signatures",
		"add your signature beside theirs (SignOptions.Add, co-sign), or re-sign to drop theirs (SignOptions.Replace); verifying lists who signed")
	// ErrNotSigned: sign --add on an assembly that has no signature yet.
	ErrNotSigned = errcode.New("not_signed", "no signature to add to",
		"a co-signature (SignOptions.Add) needs a signature to add to: sign the assembly first")
	// ErrAlreadySigned: a new signature (sign --add, several keys, an
	// attached message) is by a key whose primary key already signed the
	// attestation; it would not count as another signer.
	ErrAlreadySigned = errcode.New("already_signed", "the key already signed this attestation",
		"each co-signer signs with a key of their own (gpg's default key may be the one that signed: choose one with SignerOptions.LocalUsers); verifying lists who signed")
	// ErrNoMatchingKey: no key matches a LocalUsers entry.
	ErrNoMatchingKey = errcode.New("no_matching_key", "no matching key",
		"check the key choice (SignerOptions.LocalUsers): a fingerprint, key ID or part of a user ID of a key in the file")
	// ErrAmbiguousKey: a LocalUsers entry matches more than one key, or a
	// key file holds several usable secret keys and none was chosen.
	ErrAmbiguousKey = errcode.New("ambiguous_key", "ambiguous key choice",
		"choose the key by its fingerprint (SignerOptions.LocalUsers; several sign with several)")
	// ErrSignerOptions: SignerOptions name two ways to sign at once (a
	// key and gpg), or a passphrase file for gpg.
	ErrSignerOptions = errcode.New("signer_options", "conflicting ways to sign",
		"choose one way to sign: a secret key (with its passphrase), or the local gpg")
	// ErrInputChanged: the assembly being signed was written to or
	// replaced while it was read, so the signed copy matches neither
	// version; nothing was written.
	ErrInputChanged = errcode.New("input_changed", "assembly changed while it was signed",
		"something wrote the assembly while it was being signed: sign it again once nothing else writes it")
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
