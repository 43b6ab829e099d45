package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/errcode"
)

// Approval says which changes need a person's approval before deploy
// makes them (cdk deploy --require-approval).
type Approval string

// Approval levels.
const (
	// ApproveNever deploys without asking.
	ApproveNever Approval = "never"
	// ApproveAnyChange asks when any droplet would change.
	ApproveAnyChange Approval = "any-change"
	// ApproveBroadening asks when a change allows something the deployed
	// version does not (review.Broadening): the default, as CDK's.
	ApproveBroadening Approval = "broadening"
)

// DefaultApproval is the level when none is given.
const DefaultApproval = ApproveBroadening

// Approval errors.
var (
	// ErrApprovalRequired: the changes need approval and there is no one
	// to ask (no terminal).
	ErrApprovalRequired = errcode.New("approval_required", "changes need approval",
		"review them with 'assemble diff', then approve them with --require-approval never (or deploy at a terminal to be asked)")
	// ErrNotApproved: the person asked said no.
	ErrNotApproved = errcode.New("not_approved", "changes not approved", "nothing was changed; deploy again when the changes are right")
	// ErrAccountChanged: the credentials' account after approval is not
	// the one whose diff was approved.
	ErrAccountChanged = errcode.New("account_changed", "the account changed after the diff was approved",
		"the approval was for another account's diff: deploy again, and approve the diff of this account")
	// ErrApprovalLevel: an approval level that is none of the three.
	ErrApprovalLevel = errcode.New("bad_approval_level", "unknown approval level",
		"use --require-approval never, any-change or broadening")
)

// ParseApproval reads an approval level ("" is the default).
func ParseApproval(s string) (Approval, error) {
	switch a := Approval(s); a {
	case "":
		return DefaultApproval, nil
	case ApproveNever, ApproveAnyChange, ApproveBroadening:
		return a, nil
	}
	return "", fmt.Errorf("%w: %q: want never, any-change or broadening", ErrApprovalLevel, s)
}

// NeedsApproval lists, in words, what in the diff needs approval at level
// a (nothing at ApproveNever): each droplet that changes (any-change), or
// each grant a change adds that nothing deployed covers (broadening).
func (d *DiffResult) NeedsApproval(a Approval) []string {
	var out []string
	for _, dd := range d.Droplets {
		switch a {
		case ApproveAnyChange:
			if dd.State == StateNew || dd.State == StateChanged {
				out = append(out, fmt.Sprintf("%s: %s", dd.ID, dd.State))
			}
		case ApproveBroadening:
			if dd.Stack == nil {
				continue
			}
			for _, g := range dd.Stack.Security {
				out = append(out, fmt.Sprintf("%s: %s", dd.ID, g.String()))
			}
		}
	}
	return out
}

// An ApprovalError is ErrApprovalRequired (or ErrNotApproved) with what
// needed approval.
type ApprovalError struct {
	Level   Approval
	Reasons []string
	Err     error
}

func (e *ApprovalError) Error() string {
	return fmt.Sprintf("%v (--require-approval %s): %s", e.Err, e.Level, strings.Join(e.Reasons, "; "))
}

func (e *ApprovalError) Unwrap() error { return e.Err }

// approve runs the diff the approval is about, asks, and checks that the
// account did not change meanwhile. The runner's known attributes are
// left as they were.
func (r *runner) approve(ctx context.Context, ds []*droplet) (*DiffResult, error) {
	level := r.opts.RequireApproval
	if level == "" {
		level = DefaultApproval
	}
	if level == ApproveNever {
		return nil, nil
	}
	saved := map[string]map[string]string{}
	r.attrMu.Lock()
	for k, v := range r.attrs {
		saved[k] = v
	}
	r.attrMu.Unlock()
	plan := r.opts.Plan
	r.opts.Plan = true // change set names, as a plan's
	// Broadening is a matter of templates: only the stacks are compared
	// (no file is hashed, no registry asked).
	compared := ds
	if level == ApproveBroadening {
		compared = nil
		for _, d := range ds {
			if _, ok := d.kind.(stackKind); ok {
				compared = append(compared, d)
			}
		}
	}
	sub := &Result{Droplets: []*DropletResult{}}
	for _, d := range compared {
		sub.Droplets = append(sub.Droplets, d.res)
	}
	out := &DiffResult{SHA256: r.src.SHA256, Regions: []string{}, Deployed: []digest.Digest{}, Droplets: []*DropletDiff{}}
	diff, err := r.diff(ctx, compared, sub, out, false)
	r.opts.Plan = plan
	r.attrMu.Lock()
	r.attrs = saved
	r.attrMu.Unlock()
	for _, d := range ds {
		d.unknown = nil
		d.res.Outcome, d.res.Err = "", nil // the deploy's, not the diff's
	}
	if err != nil && (ctx.Err() != nil || errors.Is(err, ErrInterrupted)) {
		return diff, err
	}
	// A droplet that cannot be compared (a template that cannot be read,
	// a failed read) cannot be shown to grant nothing new: it needs
	// approval too.
	reasons := diff.NeedsApproval(level)
	for _, dd := range diff.Droplets {
		if dd.State == StateFailed && dd.Err != nil {
			reasons = append(reasons, fmt.Sprintf("%s: cannot be reviewed: %v", dd.ID, dd.Err))
		}
	}
	if len(reasons) == 0 {
		return diff, nil
	}
	if r.opts.Approve == nil {
		return diff, &ApprovalError{Level: level, Reasons: reasons, Err: ErrApprovalRequired}
	}
	if err := r.opts.Approve(ctx, diff, reasons); err != nil {
		return diff, err
	}
	acct, err := r.creds.callerNow(ctx)
	if err != nil {
		return diff, err
	}
	if acct != diff.Account {
		return diff, fmt.Errorf("%w: the diff approved was account %s's, the credentials are now account %s's", ErrAccountChanged, diff.Account, acct)
	}
	return diff, nil
}
