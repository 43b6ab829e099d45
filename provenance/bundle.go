package provenance

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"strconv"

	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/errcode"
)

// The media and payload types of a provenance bundle.
const (
	// BundleMediaType is a Sigstore bundle v0.3.
	BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// PayloadType is DSSE's type for an in-toto statement.
	PayloadType = "application/vnd.in-toto+json"
)

// A Bundle is a Sigstore bundle v0.3 holding a DSSE envelope signed with
// a plain key (no certificate, no transparency log entry): what attest
// --provenance writes, and what sigstore-go and cosign verify with the
// public key.
type Bundle struct {
	MediaType            string               `json:"mediaType"`
	VerificationMaterial VerificationMaterial `json:"verificationMaterial"`
	DSSEEnvelope         *Envelope            `json:"dsseEnvelope"`
}

// VerificationMaterial names the key that signed (a hint; the verifier
// brings the key).
type VerificationMaterial struct {
	PublicKey *PublicKeyHint `json:"publicKey,omitempty"`
	// Other kinds of material (certificates, transparency log entries)
	// are kept to say why a bundle is refused.
	X509CertificateChain json.RawMessage `json:"x509CertificateChain,omitempty"`
	Certificate          json.RawMessage `json:"certificate,omitempty"`
	TlogEntries          json.RawMessage `json:"tlogEntries,omitempty"`
}

// PublicKeyHint identifies a key: assemble writes the hex SHA-256 of its
// DER (PKIX) encoding.
type PublicKeyHint struct {
	Hint string `json:"hint"`
}

// An Envelope is a DSSE envelope.
type Envelope struct {
	Payload     string      `json:"payload"`
	PayloadType string      `json:"payloadType"`
	Signatures  []Signature `json:"signatures"`
}

// A Signature is one DSSE signature.
type Signature struct {
	Sig   string `json:"sig"`
	KeyID string `json:"keyid,omitempty"`
}

// pae is DSSE's pre-authentication encoding: what is signed.
func pae(payloadType string, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString("DSSEv1 ")
	b.WriteString(strconv.Itoa(len(payloadType)))
	b.WriteByte(' ')
	b.WriteString(payloadType)
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(len(payload)))
	b.WriteByte(' ')
	b.Write(payload)
	return b.Bytes()
}

// KeyHint is the hex SHA-256 of a public key's PKIX encoding.
func KeyHint(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:]), nil
}

// ecdsaHash is the hash an ECDSA key signs with, as Sigstore pairs them:
// SHA-256 for P-256, SHA-384 for P-384, SHA-512 for P-521.
func ecdsaHash(c elliptic.Curve) (crypto.Hash, func() hash.Hash) {
	switch c {
	case elliptic.P384():
		return crypto.SHA384, sha512.New384
	case elliptic.P521():
		return crypto.SHA512, sha512.New
	}
	return crypto.SHA256, sha256.New
}

// SignBundle signs statement (an in-toto statement's JSON) with key, an
// Ed25519 or ECDSA private key, into a bundle.
func SignBundle(statement []byte, key crypto.Signer) ([]byte, error) {
	msg := pae(PayloadType, statement)
	var sig []byte
	var err error
	switch k := key.(type) {
	case ed25519.PrivateKey:
		sig = ed25519.Sign(k, msg)
	case *ecdsa.PrivateKey:
		h, newHash := ecdsaHash(k.Curve)
		hw := newHash()
		hw.Write(msg)
		sig, err = k.Sign(rand.Reader, hw.Sum(nil), h)
	default:
		return nil, fmt.Errorf("%w: a %T key (Ed25519 and ECDSA are supported)", ErrKey, key)
	}
	if err != nil {
		return nil, err
	}
	hint, err := KeyHint(key.Public())
	if err != nil {
		return nil, err
	}
	b := Bundle{
		MediaType:            BundleMediaType,
		VerificationMaterial: VerificationMaterial{PublicKey: &PublicKeyHint{Hint: hint}},
		DSSEEnvelope: &Envelope{Payload: base64.StdEncoding.EncodeToString(statement), PayloadType: PayloadType,
			Signatures: []Signature{{Sig: base64.StdEncoding.EncodeToString(sig)}}},
	}
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// verifySig checks a DSSE signature over msg with pub.
func verifySig(pub crypto.PublicKey, msg, sig []byte) bool {
	switch k := pub.(type) {
	case ed25519.PublicKey:
		return ed25519.Verify(k, msg, sig)
	case *ecdsa.PublicKey:
		_, newHash := ecdsaHash(k.Curve)
		h := newHash()
		h.Write(msg)
		return ecdsa.VerifyASN1(k, h.Sum(nil), sig)
	}
	return false
}

// ErrBundle is a provenance bundle that cannot be read.
var ErrBundle = errcode.New("provenance_bundle", "not a provenance bundle",
	"give the Sigstore bundle (v0.3, a DSSE envelope of an in-toto statement) that AttestBundle or cosign wrote")

// maxBundle bounds a bundle read.
const maxBundle = 8 << 20

// A BundleResult is a bundle whose signature a trusted key made: the
// statement it holds, and the key file that verified it; Name and Data
// are the bundle as VerifyBundle was given it (the bytes verified).
type BundleResult struct {
	Statement *Statement
	KeyFile   string
	Name      string
	Data      []byte
}

// NewBundleStatement is the statement attest --provenance signs: about
// the .cloud file (name, its SHA-256), with the assembly's own SLSA
// provenance predicate.
func NewBundleStatement(name string, file digest.Digest, pred SLSAPredicate) *Statement {
	return &Statement{Type: StatementType, PredicateType: PredicateType, Predicate: pred,
		Subject: []Subject{{Name: name, Digest: map[string]string{"sha256": file.Hex()}}}}
}

// VerifyBundle checks a provenance bundle for the file whose SHA-256 is
// file: its DSSE signature must be by one of keys (else rule
// RuleBundleKey), and its statement's subject must name the file's
// SHA-256 (else RuleBundleSubject). A certificate or transparency log
// entry is not what a key-signed bundle carries, and is not needed: the
// key decides. name is what errors call the bundle.
func VerifyBundle(name string, data []byte, file digest.Digest, keys []BundleKey) (*BundleResult, error) {
	if len(data) > maxBundle {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrBundle, name, maxBundle)
	}
	var b Bundle
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBundle, name, err)
	}
	switch {
	case b.MediaType != BundleMediaType && b.MediaType != "application/vnd.dev.sigstore.bundle+json;version=0.3":
		return nil, fmt.Errorf("%w: %s: media type %q, want %s", ErrBundle, name, b.MediaType, BundleMediaType)
	case b.DSSEEnvelope == nil:
		return nil, fmt.Errorf("%w: %s holds no DSSE envelope (a message signature is not a provenance)", ErrBundle, name)
	case b.DSSEEnvelope.PayloadType != PayloadType:
		return nil, fmt.Errorf("%w: %s: payload type %q, want %s", ErrBundle, name, b.DSSEEnvelope.PayloadType, PayloadType)
	}
	payload, err := base64.StdEncoding.DecodeString(b.DSSEEnvelope.Payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: payload is not base64", ErrBundle, name)
	}
	msg := pae(b.DSSEEnvelope.PayloadType, payload)
	var by *BundleKey
	for _, s := range b.DSSEEnvelope.Signatures {
		sig, err := base64.StdEncoding.DecodeString(s.Sig)
		if err != nil {
			continue
		}
		for i := range keys {
			if verifySig(keys[i].Key, msg, sig) {
				by = &keys[i]
				break
			}
		}
		if by != nil {
			break
		}
	}
	if by == nil {
		return nil, &RuleError{Rule: RuleBundleKey, Detail: fmt.Sprintf("%s is signed by no key the policy allows (%d bundle keys)", name, len(keys))}
	}
	var st Statement
	dec := json.NewDecoder(bytes.NewReader(payload))
	if err := dec.Decode(&st); err != nil || (st.Type != StatementType && st.Type != StatementTypeV01) {
		return nil, fmt.Errorf("%w: %s: the payload is not an in-toto statement (v1, or v0.1 as cosign attest-blob writes it)", ErrBundle, name)
	}
	for _, s := range st.Subject {
		if s.Digest["sha256"] == file.Hex() {
			return &BundleResult{Statement: &st, KeyFile: by.File, Name: name, Data: data}, nil
		}
	}
	return nil, &RuleError{Rule: RuleBundleSubject, Detail: fmt.Sprintf("%s is about another file: no subject has sha256 %s", name, file.Hex())}
}

// ErrNotAttestable is an assembly whose own provenance does not hold: a
// bundle would vouch for what nobody checked.
var ErrNotAttestable = errcode.New("provenance_not_attestable", "the assembly's provenance does not hold",
	"attest a signed assembly that build wrote (its provenance.intoto.json names its content); build it again if it has none")

// AttestBundle signs, with key, the bundle statement about a .cloud file
// (name, its SHA-256 file) carrying the assembly's own provenance, which
// v (Evaluate's verdict on the verified assembly) must have accepted.
func AttestBundle(name string, file digest.Digest, v *Verdict, key crypto.Signer) ([]byte, error) {
	switch {
	case v == nil || v.Statement == nil:
		return nil, fmt.Errorf("%w: %s has no provenance", ErrNotAttestable, name)
	case v.Failed != nil:
		return nil, fmt.Errorf("%w: %s: %v", ErrNotAttestable, name, v.Failed)
	case file.IsZero():
		return nil, fmt.Errorf("%w: %s: its SHA-256 is not known", ErrNotAttestable, name)
	}
	st := NewBundleStatement(name, file, v.Statement.Predicate)
	body, err := st.Marshal()
	if err != nil {
		return nil, err
	}
	return SignBundle(body, key)
}
