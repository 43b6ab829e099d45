package main

import (
	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/packager/artifacts"
	"github.com/cloud-assembly/assemble/packager/cfn"
	"github.com/cloud-assembly/assemble/packager/schema"
	"github.com/cloud-assembly/assemble/provenance"
	"github.com/cloud-assembly/assemble/remote"
	"github.com/cloud-assembly/assemble/signing"
	"github.com/cloud-assembly/assemble/trust"
)

// flagHints are the hints of the causes whose fix is one of this
// command's flags. A library says what is wrong in its own terms (the
// option's field, the file, the rule) and never names a flag
// (TestNoLibraryMessageNamesAFlag); where the user's fix is a flag, the
// command's hint for the sentinel's code names it, in place of the
// library's. One hint per code still: codeHint prints this one.
var flagHints = map[error]string{
	trust.ErrNoKeyring:             "name the trusted public keys with --keyring FILE (gpg --export --armor KEYID > keyring.asc), or a --policy file",
	trust.ErrKeyringFile:           "give --keyring an armored or binary OpenPGP public keyring (gpg --export --armor KEYID > keyring.asc)",
	signing.ErrUnsigned:            "sign it with 'assemble sign', or pass --allow-unsigned to check it without authenticating it",
	signing.ErrMalformedSignature:  "give exactly one cleartext-signed message, as 'gpg --clearsign' writes it (not --detach-sign, not --sign)",
	signing.ErrUnknownSigner:       "if you trust the signer, add their public key with --keyring FILE",
	signing.ErrPolicy:              "the signatures do not meet the policy: see the signature lines above, and have the missing signers sign with 'assemble sign --add'",
	signing.ErrThreshold:           "more trusted keys must sign: each co-signer runs 'assemble sign --add' (with --key, --gpg or --signature)",
	signing.ErrRequiredSigner:      "the required signer must add a signature: 'assemble sign --add' with their key",
	signing.ErrAlgorithmNotAllowed: "sign again with an allowed algorithm (assemble sign --algorithm)",
	signing.ErrNoKey:               "name a secret key with --key FILE (or $ASSEMBLE_SIGNING_KEY), or sign with --gpg or --signature",
	signing.ErrNoSigningKey:        "--key takes a secret key (gpg --export-secret-keys --armor KEYID > key.asc); a public key belongs in verify --keyring",
	signing.ErrPassphraseNeeded:    "pass the passphrase with --passphrase-file FILE or $ASSEMBLE_PASSPHRASE; assemble prompts for it only at a terminal",
	signing.ErrKeyFormat:           "give an OpenPGP key, armored or binary (gpg --export --armor KEYID, or --export-secret-keys for a signing key)",
	signing.ErrWouldDropSignatures: "add your signature beside theirs with --add (co-sign), or re-sign with --replace to drop theirs; 'assemble verify' lists who signed",
	signing.ErrNotSigned:           "--add adds a co-signature: sign the assembly first, without --add",
	signing.ErrAlreadySigned:       "each co-signer signs with a key of their own (gpg's default key may be the one that signed: choose with --local-user); 'assemble verify' lists who signed",
	signing.ErrNoMatchingKey:       "check --local-user: a fingerprint, key ID or part of a user ID of a key in the file",
	signing.ErrAmbiguousKey:        "choose the key with --local-user FINGERPRINT (repeat it to sign with several)",
	signing.ErrGPGNotFound:         "install GnuPG (apt-get install gnupg) or name it with $ASSEMBLE_GPG, or sign with a key file (--key FILE)",
	signing.ErrGPGUnknownKey:       "list the keys gpg can sign with: gpg --list-secret-keys (GNUPGHOME chooses the keyring); choose one with --local-user",
	assembly.ErrManifest:           "the assembly is invalid: every command refuses it (see FINDINGS in 'assemble verify --help'); fix it and build it again",
	assembly.ErrUnknownKey:         "remove the key the spec does not define (FINDINGS in 'assemble verify --help' lists the rules), then build again",
	remote.ErrDigestMismatch:       "the bytes that arrived are not the ones asked for: the server or the --digest is wrong; do not use them",
	schema.ErrCatalog:              "--schemas names a folder of resource type schemas (JSON files)",
	artifacts.ErrOutsideProject:    "keep local artifacts (Lambda code, nested templates) inside the project folder: assemble package --root DIR names a folder that holds the template and its artifacts; assemble build reads the folder of assembly.yaml, so put one in a folder that holds both",
	cfn.ErrNoArtifacts:             "give a bucket for local artifacts: --asset-bucket NAME, or assets: {bucketName: NAME} in assembly.yaml",
	provenance.ErrBundle:           "give the Sigstore bundle (v0.3, a DSSE envelope of an in-toto statement) that 'assemble attest --provenance' or cosign wrote",
}
