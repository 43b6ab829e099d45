package deploy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/trust"
)

// A Policy is a policy file's deploy section: what a deploy of an
// assembly verified with that file may do. This package reads and
// checks it (trust reads the file once and hands the section here).
//
//	deploy:
//	  staging-bucket: assets-1          # templates over 51,200 bytes
//	  capabilities: [IAM]               # what stacks may be granted
//	  require-approval: broadening      # never, any-change, broadening
//	  targets: [staging, prod]          # the targets it may choose
//	  deployer-parameters: [Api.Mode]   # parameters a deployer may set
type Policy struct {
	// StagingBucket receives templates too large to send inline, unless
	// Options.StagingBucket names one.
	StagingBucket string
	// Capabilities are the stack capabilities deploy may grant (IAM,
	// NAMED_IAM, AUTO_EXPAND), besides Options.Capabilities.
	Capabilities []string
	// RequireApproval is the approval level, unless Options sets one.
	RequireApproval Approval
	// Targets are the assembly targets (stages) a deploy, status or
	// destroy may choose; nil (the key absent) allows any.
	Targets []string
	// DeployerParameters are the stack parameters (DROPLET.NAME) a
	// deployer may set beyond the assembly's missing ones (Options.Settable
	// unless it is set).
	DeployerParameters []string
}

// PolicyKeys are the keys of a policy file's deploy section.
func PolicyKeys() []string {
	return []string{"staging-bucket", "capabilities", "require-approval", "targets", "deployer-parameters"}
}

func init() {
	trust.RegisterPolicySection(trust.SectionDeploy, func(s *trust.PolicySection) (any, error) { return readPolicy(s) })
}

// bucketRE is an S3 bucket name.
var bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// readPolicy reads and checks the deploy section: every error is at its
// place in the file (file:line:column), an unknown key named with the
// nearest known one.
func readPolicy(s *trust.PolicySection) (*Policy, error) {
	p := &Policy{}
	for _, e := range s.Entries {
		var err error
		switch e.Key {
		case "staging-bucket":
			v, ok := e.Scalar()
			if !ok || !bucketRE.MatchString(v) {
				return nil, e.Errorf("staging-bucket must be an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens)")
			}
			p.StagingBucket = v
		case "capabilities":
			if p.Capabilities, err = e.Strings(); err == nil {
				for j, c := range p.Capabilities {
					if _, cerr := capabilities([]string{c}); cerr != nil {
						return nil, e.ItemErrorf(j, "capabilities: %q: use IAM, NAMED_IAM or AUTO_EXPAND", c)
					}
				}
			}
		case "require-approval":
			v, ok := e.Scalar()
			a, aerr := ParseApproval(v)
			if !ok || aerr != nil {
				return nil, e.Errorf("require-approval must be never, any-change or broadening")
			}
			p.RequireApproval = a
		case "deployer-parameters":
			if p.DeployerParameters, err = e.Strings(); err == nil {
				for j, dp := range p.DeployerParameters {
					if id, name, ok := strings.Cut(dp, "."); !ok || id == "" || name == "" {
						return nil, e.ItemErrorf(j, "deployer-parameters: %q: name a stack parameter as DROPLET.NAME", dp)
					}
				}
			}
		case "targets":
			if p.Targets, err = e.Strings(); err == nil {
				for j, t := range p.Targets {
					if !assembly.ValidTargetName(t) {
						return nil, e.ItemErrorf(j, "targets: %q is not a target name (letters, digits, _ and -)", t)
					}
				}
			}
		default:
			return nil, e.Unknown(PolicyKeys())
		}
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// PolicyOf is the deploy section of the policy file p (nil when p is nil
// or has none): checked as trust.ReadPolicy read the file.
func PolicyOf(p *trust.PolicyFile) *Policy {
	pol, _ := p.Section(trust.SectionDeploy).(*Policy)
	return pol
}

// ErrTargetRefused: the policy file's targets do not name the target a
// deploy, status or destroy chose.
var ErrTargetRefused = errcode.New("target_refused", "target refused by the policy",
	"choose a target the policy file's targets: list names, or change the policy")

// AllowTarget is the verdict on a target: nil when the policy names no
// targets (any is allowed) or names this one. It is what deploy asks
// before reaching any account.
func (p *Policy) AllowTarget(name string) error {
	if p == nil || p.Targets == nil {
		return nil
	}
	if slices.Contains(p.Targets, name) {
		return nil
	}
	allowed := "none"
	if len(p.Targets) > 0 {
		allowed = strings.Join(p.Targets, ", ")
	}
	return fmt.Errorf("%w: target %s: the policy allows %s", ErrTargetRefused, name, allowed)
}
