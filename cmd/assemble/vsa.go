package main

import (
	"errors"
	"io"
	"path"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/provenance"
)

// writeVSA writes verify --vsa's verification summary of res (verr is
// the verification's error): PASSED, or FAILED naming what passed before
// the rule that refused. A verification that never reached a verdict on
// an authenticated assembly (unreadable, unsigned, a bad signature)
// writes none: there is no subject to summarize.
func writeVSA(c *cli.Context, file, name string, res *verifyResult, verr error) error {
	v := res.checked
	if v == nil || v.Verified == nil || res.SHA256.IsZero() {
		if verr == nil {
			return usagef("--vsa summarizes a signed assembly's verification: %s is not authenticated", name)
		}
		return nil
	}
	s := provenance.Summary{Name: path.Base(name), ResourceURI: name, File: res.SHA256, Time: time.Now(),
		Passed: []string{"signatures"}}
	if pf := c.String("policy"); pf != "" {
		s.PolicyURI = pf
		if data, err := limitio.ReadFile(pf, 1<<20); err == nil {
			s.Policy = digest.Of(data)
		}
	}
	if f := v.Reader.File(assembly.SignatureName); f != nil {
		if d, err := hashEntry(f); err == nil {
			s.Inputs = append(s.Inputs, provenance.Resource{URI: assembly.SignatureName, Digest: map[string]string{"sha256": d.Hex()}})
		}
	}
	if sums := v.Verified.ContentSums(); sums != nil {
		if d, ok := sums[provenance.EntryName]; ok {
			dd, _ := digest.FromSum(d[:])
			s.Inputs = append(s.Inputs, provenance.Resource{URI: provenance.EntryName, Digest: map[string]string{"sha256": dd.Hex()}})
		}
	}
	if pv := v.Provenance; pv != nil {
		for _, ch := range pv.Checks {
			if ch.Passed {
				s.Passed = append(s.Passed, ch.Rule)
			}
		}
		if pv.Failed != nil && v.PolicyFile != nil && v.PolicyFile.Provenance != nil {
			s.Failed = pv.Failed.Rule
		}
	}
	var re *provenance.RuleError
	if errors.As(verr, &re) {
		s.Failed = re.Rule
	}
	body, err := provenance.NewVSA(s).Marshal()
	if err != nil {
		return err
	}
	return writeOutput(c, file, body, []string{name})
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
