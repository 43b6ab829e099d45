// Package signing attests, clear-signs and verifies Cloud Assemblies.
//
// # The API
//
// Five entry points, each one way of doing its job (see the examples):
//
//   - LoadSigners turns where the keys are (a key file, a reader, an
//     environment variable, or the local gpg) and how a protected key is
//     unlocked (a passphrase file, an environment variable, or a Prompt
//     callback such as a terminal's) into Signers, choosing keys as gpg
//     --local-user does (SignerOptions.LocalUsers) and refusing a key the
//     trust rule refuses. A Signer is anything that clear-signs: Keys (in
//     memory), GPG, or one of the caller's own (a KMS, an HSM).
//   - Seal writes a signed copy of an open assembly; SealFile and
//     SealFileTo are the same for a file (written atomically to a path, or
//     to a writer the caller owns), failing with ErrInputChanged when the
//     file changes while it is read. SignOptions choose a new attestation,
//     co-signing (Add), replacing other signers (Replace) or attaching a
//     signature made elsewhere (Signature).
//   - Attest makes the attestation Seal would sign, for signing elsewhere
//     (gpg --clearsign, a smartcard); like Seal it checks the assembly
//     first. SignedText returns the text an assembly's signature.asc
//     signed, for a co-signer signing elsewhere.
//   - StreamSigner signs while an assembly.Writer writes, in one pass.
//   - Verify checks a signed assembly, and gives its files out only through
//     the *Verified it returns.
//
// # Signing
//
// Seal hashes every file of an assembly but signature.asc, each salted
// with a fresh random nonce (H(content || nonce)), writes the attestation
// as JSON with sorted keys, clear-signs it (RFC 4880 §7) with every
// signer's keys, and stores it as signature.asc through
// assembly.AppendSignature; every other entry keeps its exact stored
// bytes. The signature's armor carries the CRC-24 line that GnuPG 2.2
// needs. Expired and revoked keys are refused, and so is an assembly that
// assembly.Check finds invalid, before anything is written: what Seal
// seals, Verify accepts.
//
// # Verification
//
// Verify takes an *assembly.Reader, which has already checked the ZIP
// structure from the raw bytes, and a non-empty list of trusted keys. When
// it returns a *Verified and no error, the following hold:
//
//   - signature.asc is exactly one cleartext-signed message, with nothing
//     around it, holding one or more signatures (co-signers), none over MD5,
//     SHA-1 or RIPEMD-160;
//   - as many distinct keys of the trusted list as the Policy asks (one by
//     default, and any it requires by fingerprint) made a valid signature,
//     each key existing and unexpired both at its signature's time and at
//     the attestation's timestamp, its key and signing subkey carrying no
//     revocation at all and not all of its user IDs revoked, judged over
//     every copy of that key in the list merged (Keyring); no signature has
//     passed an expiration time of its own (ErrSignatureExpired); a
//     signature by a key outside the list is reported (Verified.Signatures)
//     and does not count, one by a key in it that fails any of this fails
//     the verification;
//   - the attestation was parsed from the signed text only, strictly, and
//     no signature predates its timestamp (less MaxClockSkew): signatures
//     may come any time after it;
//   - the archive holds exactly the attested files (plus signature.asc),
//     and each one's size and salted hash matched when it was read;
//   - assembly.Check then found the verified manifest.json and the attested
//     files valid (the verdict inspect gives on the same archive); its
//     warnings are in Report, or errors under VerifyOptions.Check.Strict.
//
// File content is only reachable through the *Verified (Open, ReadFile),
// which checks every file again as it is read, so an archive changed after
// Verify fails at the end of the read instead of yielding unsigned bytes.
//
// # Co-signing and other signers
//
// Seal signs with any Signer: keys in memory (Keys, chosen from a key file
// by LoadSigners as gpg --local-user chooses), the local gpg and its agent
// (GPG), or an attestation clear-signed elsewhere (SignOptions.Signature,
// checked against the archive file for file). With SignOptions.Add it keeps
// the signatures of signature.asc and adds new ones over its attestation.
// StreamSigner signs while an assembly.Writer writes, in one pass.
//
// # Errors
//
// Every verification failure wraps ErrVerification and one sentinel per
// cause (ErrBadSignature, ErrUnknownSigner, ErrDigestMismatch, ...);
// *DigestError and *SizeError carry the details. Structural failures come
// from package assembly (assembly.ErrFormat, ErrInsecurePath, ErrDuplicate);
// an entry whose data does not match its own ZIP headers (CRC-32, length,
// bytes after the deflate stream) fails with ErrVerification and
// assembly.ErrCorrupt.
//
// # Trust
//
// One rule decides whether a key may have made a signature: every copy of a
// key in the trusted set is merged first (Keyring: a revocation in any copy
// revokes, expiry comes from the newest self-signature), then the key must
// carry no revocation, must have existed at the signature's time
// (ErrKeyNotYetValid) and not have expired by then (ErrKeyExpired); and a
// signature given an expiration time by its signer must not have passed it
// (ErrSignatureExpired). Verify applies it to the signature; LoadSigners
// and Seal apply it to the signer's own key.
//
// # Agreement with GnuPG
//
// TestGPGTrustAgreement generates keys with gpg (Ed25519, NIST P-256/384/521,
// Brainpool P-256/384, RSA, DSA; primaries and signing subkeys) through
// every trust scenario and checks that gpg --verify and Verify agree on each
// signature, both ours and gpg's: GOODSIG is trusted, REVKEYSIG is
// ErrKeyRevoked, EXPKEYSIG ErrKeyExpired, EXPSIG ErrSignatureExpired, BADSIG
// ErrBadSignature, NO_PUBKEY and a key not allowed to sign (ERRSIG, wrong
// key usage) ErrUnknownSigner, and a key newer than the signature (ERRSIG,
// time conflict) ErrKeyNotYetValid; where gpg refuses to sign, so does
// Seal. Three differences are by design: expiry is judged at the signature's
// time and the attestation's timestamp, not now (gpg's EXPKEYSIG for a key
// that expired after it signed is trusted here), and any revocation refuses
// the key whatever its reason or date (a gpg that shows GOODSIG after a
// "superseded" revocation is refused here); a key revoked by a designated
// revoker cannot be read, and a keyring holding it is refused (ErrKeyFormat,
// from ReadKeys), where gpg says REVKEYSIG, or GOODSIG without the
// revoker's key. A user ID revoked while another remains does not revoke the
// key, in either.
package signing
