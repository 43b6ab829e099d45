package trust

import (
	"time"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/jsontext"
	"github.com/cloud-assembly/assemble/provenance"
	"github.com/cloud-assembly/assemble/signing"
)

// A Verdict is what the verification of an assembly found, as `assemble
// verify --json` prints it (docs/json/verify.json): Assembly.Verdict for
// one that verified, VerifyError.Verdict for one that did not.
// Authenticated is true only when trusted keys signed it as the policy
// asks (an unsigned assembly accepted with
// OpenOptions.InsecureAllowUnsigned is Valid, not Authenticated).
type Verdict struct {
	// File is the assembly as the caller named it (a location with its
	// secrets redacted); SHA256 its SHA-256 (JSON "sha256:HEX"), Size
	// its size.
	File          string        `json:"file"`
	SHA256        digest.Digest `json:"sha256"`
	Size          int64         `json:"size"`
	Valid         bool          `json:"valid"`
	Authenticated bool          `json:"authenticated"`
	Signed        bool          `json:"signed"`
	Signer        *Signer       `json:"signer,omitempty"`
	// Timestamp is when the signature was made (RFC 3339, UTC),
	// Algorithm the attestation's hash.
	Timestamp string `json:"timestamp,omitempty"`
	Algorithm string `json:"algorithm,omitempty"`
	// Files and Bytes count the files verified (all but signature.asc),
	// Droplets the manifest's droplets.
	Files    int   `json:"files"`
	Bytes    int64 `json:"bytes"`
	Droplets int   `json:"droplets"`
	// Warnings are the check's warnings, and the attestation's timestamp
	// without a zone (rule timestamp-without-zone).
	Warnings []assembly.Finding `json:"warnings"`
	// Signatures reports every signature of signature.asc (Signer is the
	// first trusted one), Policy how they met the signature policy.
	Signatures []SignatureVerdict `json:"signatures,omitempty"`
	Policy     *PolicyVerdict     `json:"policy,omitempty"`
	// Provenance is how the provenance met the policy file's provenance
	// section, when it has one (or OpenOptions.Provenance asked).
	Provenance *ProvenanceVerdict `json:"provenance,omitempty"`
}

// RuleZoneless is the rule of the warning about an attestation whose
// timestamp has no zone (signing.ZonelessWarning).
const RuleZoneless = "timestamp-without-zone"

// A Signer names a signing key: the primary key's fingerprint, the
// fingerprint of the key (or subkey) that made the signature, and the
// primary user ID.
type Signer struct {
	Fingerprint string `json:"fingerprint"`
	SigningKey  string `json:"signingKey"`
	UserID      string `json:"userID"`
	// KeyID is set only for a signature whose key is unknown and names
	// no fingerprint (one attached as it was made elsewhere).
	KeyID string `json:"keyID,omitempty"`
}

// A SignatureVerdict is one signature of signature.asc: its key, time and
// hash, whether it is valid and trusted, and why not (Error, with its
// Code).
type SignatureVerdict struct {
	KeyID             string `json:"keyID"`
	IssuerFingerprint string `json:"issuerFingerprint,omitempty"`
	Fingerprint       string `json:"fingerprint,omitempty"`
	SigningKey        string `json:"signingKey,omitempty"`
	UserID            string `json:"userID,omitempty"`
	Time              string `json:"time"`
	Hash              string `json:"hash"`
	Valid             bool   `json:"valid"`
	Trusted           bool   `json:"trusted"`
	Known             bool   `json:"known,omitempty"`
	Error             string `json:"error,omitempty"`
	Code              string `json:"code,omitempty"`
}

// A PolicyVerdict is how the signatures met the signature policy.
type PolicyVerdict struct {
	MinSigners int      `json:"minSigners"`
	Signers    []string `json:"signers"`
	Required   []string `json:"required"`
	Missing    []string `json:"missing"`
	Algorithms []string `json:"algorithms"`
	Met        bool     `json:"met"`
}

// A ProvenanceVerdict is the provenance verdict (provenance.Verdict):
// every rule checked, in order, and the one that refused ("" when none
// did).
type ProvenanceVerdict struct {
	Rule    string             `json:"rule,omitempty"`
	Met     bool               `json:"met"`
	Builder string             `json:"builder,omitempty"`
	Checks  []provenance.Check `json:"checks"`
}

// Verdict is what the verification found (docs/json/verify.json).
func (a *Assembly) Verdict() *Verdict {
	v := newVerdict(a.res)
	r := a.res
	v.SHA256, v.Size, v.Valid = r.SHA256, r.Size, true
	v.Droplets = len(r.Manifest.Droplets)
	v.Warnings = append(v.Warnings, r.Report.Warnings()...)
	v.Files, v.Bytes = r.Files(), r.Bytes()
	if r.Verified == nil {
		return v
	}
	vf := r.Verified
	v.Authenticated = true
	v.Signer = &Signer{Fingerprint: vf.Fingerprint(), SigningKey: vf.SigningKeyFingerprint(), UserID: vf.UserID()}
	v.Timestamp = vf.Time().UTC().Format(time.RFC3339)
	if att := vf.Attestation(); att.Zoneless {
		v.Warnings = append(v.Warnings, assembly.Finding{Severity: assembly.Warning, Rule: RuleZoneless, Message: signing.ZonelessWarning(att)})
	}
	v.Algorithm = signing.AlgorithmName(vf.Attestation().Algorithm)
	return v
}

// Verdict is what was learnt before the verification failed: neither
// Valid nor Authenticated; whether the assembly is signed, and, when it
// got that far, its signatures, how they met the policy and the
// provenance verdict (SHA256 too when a provenance rule refused).
func (e *VerifyError) Verdict() *Verdict {
	v := newVerdict(e.Result)
	v.File = e.Name
	if e.Result != nil {
		v.Size = e.Result.Size
		if e.Result.Verified != nil {
			v.SHA256 = e.Result.SHA256 // a provenance rule refused
		}
	}
	return v
}

// MarshalJSON writes what verify --json prints beside the error of a
// failed verification (docs/json/verify.json#/$defs/failure): the file,
// that it is neither valid nor authenticated, whether it is signed, the
// signatures, policy and provenance verdicts when known.
func (e *VerifyError) MarshalJSON() ([]byte, error) {
	v := e.Verdict()
	return jsontext.Marshal(struct {
		File          string             `json:"file"`
		Valid         bool               `json:"valid"`
		Authenticated bool               `json:"authenticated"`
		Signed        bool               `json:"signed"`
		Signatures    []SignatureVerdict `json:"signatures,omitempty"`
		Policy        *PolicyVerdict     `json:"policy,omitempty"`
		Provenance    *ProvenanceVerdict `json:"provenance,omitempty"`
	}{v.File, false, false, v.Signed, v.Signatures, v.Policy, v.Provenance})
}

// newVerdict is the part of a verdict a failure reports too: the name,
// whether it is signed, the signatures and policy (once signature.asc was
// read), the provenance verdict.
func newVerdict(r *Result) *Verdict {
	v := &Verdict{Warnings: []assembly.Finding{}}
	if r == nil {
		return v
	}
	v.File, v.Signed = r.Name, r.Signed
	v.Provenance = newProvenanceVerdict(r.Provenance)
	if !r.Signed || len(r.Signatures) == 0 {
		return v
	}
	v.Signatures = []SignatureVerdict{}
	for _, s := range r.Signatures {
		sv := SignatureVerdict{KeyID: s.KeyID, IssuerFingerprint: s.IssuerFingerprint, Fingerprint: s.Fingerprint, SigningKey: s.SigningKey,
			UserID: s.UserID, Time: s.Time.UTC().Format(time.RFC3339), Hash: signing.AlgorithmName(s.Hash), Valid: s.Valid, Trusted: s.Trusted, Known: s.Known}
		if s.Err != nil {
			sv.Error, sv.Code = s.Err.Error(), errcode.Of(s.Err)
		}
		v.Signatures = append(v.Signatures, sv)
	}
	pr := r.PolicyResult
	v.Policy = &PolicyVerdict{MinSigners: pr.MinSigners, Signers: nonNil(pr.Signers), Required: nonNil(pr.Required), Missing: nonNil(pr.Missing),
		Algorithms: AlgorithmNames(r.Policy.Algorithms), Met: pr.Met}
	return v
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func newProvenanceVerdict(v *provenance.Verdict) *ProvenanceVerdict {
	if v == nil {
		return nil
	}
	r := &ProvenanceVerdict{Met: v.Failed == nil, Checks: v.Checks}
	if v.Failed != nil {
		r.Rule = v.Failed.Rule
	}
	if v.Statement != nil {
		r.Builder = v.Statement.Predicate.RunDetails.Builder.ID
	}
	return r
}
