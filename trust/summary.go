package trust

import (
	"errors"
	"io"
	"path"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/provenance"
)

// Summary is what the verification that gave r checked, for a SLSA
// verification summary (provenance.NewVSA): the signatures passed, then
// each provenance rule that passed, and the rule that refused (from
// verifyErr, the verification's error, nil when it passed; or the
// provenance verdict's failure under a provenance policy); the inputs
// read (signature.asc, the provenance entry, by SHA-256). Name is the
// file's base name and ResourceURI r.Name; the caller sets Time, and
// PolicyURI and Policy when a policy file was read. ok is false when the
// verification never reached a verdict on an authenticated assembly
// (unreadable, unsigned, a bad signature): there is no subject to
// summarize.
func (r *Result) Summary(verifyErr error) (s provenance.Summary, ok bool) {
	if r == nil || r.Verified == nil || r.SHA256.IsZero() {
		return s, false
	}
	s = provenance.Summary{Name: path.Base(r.Name), ResourceURI: r.Name, File: r.SHA256, Passed: []string{"signatures"}}
	if f := r.Reader.File(assembly.SignatureName); f != nil {
		if d, err := hashEntry(f); err == nil {
			s.Inputs = append(s.Inputs, provenance.Resource{URI: assembly.SignatureName, Digest: map[string]string{"sha256": d.Hex()}})
		}
	}
	if sums := r.Verified.ContentSums(); sums != nil {
		if d, ok := sums[provenance.EntryName]; ok {
			dd, _ := digest.FromSum(d[:])
			s.Inputs = append(s.Inputs, provenance.Resource{URI: provenance.EntryName, Digest: map[string]string{"sha256": dd.Hex()}})
		}
	}
	if pv := r.Provenance; pv != nil {
		for _, ch := range pv.Checks {
			if ch.Passed {
				s.Passed = append(s.Passed, ch.Rule)
			}
		}
		if pv.Failed != nil && r.PolicyFile != nil && r.PolicyFile.Provenance != nil {
			s.Failed = pv.Failed.Rule
		}
	}
	var re *provenance.RuleError
	if errors.As(verifyErr, &re) {
		s.Failed = re.Rule
	}
	return s, true
}

// hashEntry is the SHA-256 of an entry's content.
func hashEntry(f *assembly.File) (digest.Digest, error) {
	rc, err := f.Open()
	if err != nil {
		return digest.Digest{}, err
	}
	defer rc.Close()
	h := digest.NewHasher()
	if _, err := io.Copy(h, rc); err != nil {
		return digest.Digest{}, err
	}
	return h.Digest(), nil
}
