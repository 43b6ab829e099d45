package provenance

import (
	"strings"
	"time"

	"github.com/cloud-assembly/assemble/digest"
)

// VSAPredicateType is SLSA's verification summary, v1.
const VSAPredicateType = "https://slsa.dev/verification_summary/v1"

// VerifierID is the VSA's verifier.id: assemble.
const VerifierID = "https://github.com/cloud-assembly/assemble"

// A VSAStatement is an in-toto Statement v1 whose predicate is a SLSA
// verification summary.
type VSAStatement struct {
	Type          string       `json:"_type"`
	Subject       []Subject    `json:"subject"`
	PredicateType string       `json:"predicateType"`
	Predicate     VSAPredicate `json:"predicate"`
}

// VSAPredicate is SLSA's verification summary v1.
type VSAPredicate struct {
	Verifier           VSAVerifier `json:"verifier"`
	TimeVerified       string      `json:"timeVerified"`
	ResourceURI        string      `json:"resourceUri"`
	Policy             Resource    `json:"policy"`
	InputAttestations  []Resource  `json:"inputAttestations,omitempty"`
	VerificationResult string      `json:"verificationResult"`
	VerifiedLevels     []string    `json:"verifiedLevels"`
	SlsaVersion        string      `json:"slsaVersion"`
}

// VSAVerifier is who verified. (The spec's verifier.version is left out:
// the in-toto Go bindings' VSA schema, v1.2, has no such field and
// refuses it.)
type VSAVerifier struct {
	ID string `json:"id"`
}

// A Summary is what a verification found, for a VSA: the assembly (its
// location and its file's SHA-256), the policy (its file, its SHA-256),
// the attestations read, the rules checked, and the verdict.
type Summary struct {
	Name        string // the subject's name (the file's base name)
	ResourceURI string // where it was read (a path or a location)
	File        digest.Digest
	PolicyURI   string
	Policy      digest.Digest // zero when no policy file
	Inputs      []Resource    // the attestations read (signature.asc, the provenance, bundles)
	Passed      []string      // the rules that passed (signatures, provenance rules)
	Failed      string        // the rule that failed, "" when none
	Time        time.Time
}

// NewVSA is the verification summary of s: PASSED when no rule failed,
// with verifiedLevels SLSA_BUILD_LEVEL_1 when a provenance rule passed
// (the build has provenance the verifier checked) and one
// ASSEMBLE_<RULE> level per rule that passed (custom levels never start
// with SLSA_, as the spec asks); FAILED otherwise, with the levels of
// the rules that passed before.
func NewVSA(s Summary) *VSAStatement {
	p := VSAPredicate{
		Verifier:           VSAVerifier{ID: VerifierID},
		TimeVerified:       s.Time.UTC().Format(time.RFC3339),
		ResourceURI:        s.ResourceURI,
		Policy:             Resource{URI: s.PolicyURI},
		InputAttestations:  s.Inputs,
		VerificationResult: "PASSED",
		VerifiedLevels:     []string{},
		SlsaVersion:        "1.0",
	}
	if p.Policy.URI == "" {
		p.Policy.URI = "assemble:flags"
	}
	if !s.Policy.IsZero() {
		p.Policy.Digest = map[string]string{"sha256": s.Policy.Hex()}
	}
	if s.Failed != "" {
		p.VerificationResult = "FAILED"
	}
	provenance := false
	for _, r := range s.Passed {
		if strings.HasPrefix(r, "provenance-") {
			provenance = true
		}
	}
	if provenance && s.Failed == "" {
		p.VerifiedLevels = append(p.VerifiedLevels, "SLSA_BUILD_LEVEL_1")
	}
	for _, r := range s.Passed {
		p.VerifiedLevels = append(p.VerifiedLevels, "ASSEMBLE_"+strings.ToUpper(strings.ReplaceAll(r, "-", "_")))
	}
	return &VSAStatement{Type: StatementType, PredicateType: VSAPredicateType, Predicate: p,
		Subject: []Subject{{Name: s.Name, Digest: map[string]string{"sha256": s.File.Hex()}}}}
}
