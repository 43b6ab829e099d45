package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/provenance"
)

// writeVSA writes verify --vsa's verification summary of res (verr is
// the verification's error): PASSED, or FAILED naming what passed before
// the rule that refused (trust.Result.Summary). A verification that never
// reached a verdict on an authenticated assembly (unreadable, unsigned, a
// bad signature) writes none: there is no subject to summarize.
func writeVSA(c *cli.Context, file, name string, res *verifyResult, verr error) error {
	s, ok := res.checked.Summary(verr)
	if !ok {
		if verr == nil {
			return usagef("--vsa summarizes a signed assembly's verification: %s is not authenticated", name)
		}
		return nil
	}
	s.Time = time.Now()
	if pf := c.String("policy"); pf != "" {
		s.PolicyURI = pf
		if data, err := limitio.ReadFile(pf, 1<<20); err == nil {
			s.Policy = digest.Of(data)
		}
	}
	body, err := provenance.NewVSA(s).Marshal()
	if err != nil {
		return err
	}
	return writeOutput(c, file, body, []string{name})
}
