package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
		"review them with 'assemble diff', then approve them with Options.RequireApproval never (or deploy at a terminal to be asked)")
	// ErrNotApproved: the person asked said no.
	ErrNotApproved = errcode.New("not_approved", "changes not approved", "nothing was changed; deploy again when the changes are right")
	// ErrAccountChanged: the credentials' account after approval is not
	// the one whose diff was approved.
	ErrAccountChanged = errcode.New("account_changed", "the account changed after the diff was approved",
		"the approval was for another account's diff: deploy again, and approve the diff of this account")
	// ErrApprovalLevel: an approval level that is none of the three.
	ErrApprovalLevel = errcode.New("bad_approval_level", "unknown approval level",
		"use Options.RequireApproval never, any-change or broadening")
)

// ParseApproval reads an approval level ("" is the default). Its error
// is an *errcode.FieldError (ErrApprovalLevel) naming RequireApproval.
func ParseApproval(s string) (Approval, error) {
	switch a := Approval(s); a {
	case "":
		return DefaultApproval, nil
	case ApproveNever, ApproveAnyChange, ApproveBroadening:
		return a, nil
	}
	return "", &errcode.FieldError{Field: "RequireApproval", Value: fmt.Sprintf("%q", s), Reason: "want never, any-change or broadening", Err: ErrApprovalLevel}
}

// NeedsApproval lists, in words, what in the diff needs approval at level
// a (nothing at ApproveNever): each droplet that changes (any-change), or
// each grant a change adds that nothing deployed covers (broadening); at
// either level, each droplet that could not be compared (it cannot be
// shown to change nothing, or to grant nothing new). A matrix's pairs
// (Pairs) are listed after the droplets with an environment of their
// own, each line starting with its pair's environment.
func (d *DiffResult) NeedsApproval(a Approval) []string {
	if a == ApproveNever {
		return nil
	}
	var out []string
	for _, dd := range d.Droplets {
		if dd.State == StateFailed && dd.Err != nil {
			out = append(out, fmt.Sprintf("%s: cannot be reviewed: %v", dd.ID, dd.Err))
			continue
		}
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
	for _, p := range d.Pairs {
		for _, r := range p.NeedsApproval(a) {
			out = append(out, p.Environment+": "+r)
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
	return fmt.Sprintf("%v (Options.RequireApproval %s): %s", e.Err, e.Level, strings.Join(e.Reasons, "; "))
}

func (e *ApprovalError) Unwrap() error { return e.Err }

// approvalLevel is the level the options ask for (DefaultApproval when
// none).
func (o Options) approvalLevel() Approval {
	if o.RequireApproval == "" {
		return DefaultApproval
	}
	return o.RequireApproval
}

// reviewed are the droplets the approval's diff compares at level:
// broadening is a matter of templates, so only the stacks are compared
// then (no file is hashed, no registry asked).
func reviewed(level Approval, ds []*droplet) []*droplet {
	if level != ApproveBroadening {
		return ds
	}
	var stacks []*droplet
	for _, d := range ds {
		if _, ok := d.kind.(stackKind); ok {
			stacks = append(stacks, d)
		}
	}
	return stacks
}

// reviewing readies the runner for the approval's diff (a plan's change
// set names) and returns what puts it back as it was for the deploy: its
// known attributes, Plan, and the outcomes of ds.
func (r *runner) reviewing(ds []*droplet) (restore func()) {
	saved := map[string]map[string]string{}
	r.attrMu.Lock()
	for k, v := range r.attrs {
		saved[k] = v
	}
	r.attrMu.Unlock()
	plan := r.opts.Plan
	r.opts.Plan = true
	return func() {
		r.opts.Plan = plan
		r.attrMu.Lock()
		r.attrs = saved
		r.attrMu.Unlock()
		for _, d := range ds {
			d.unknown = nil
			d.res.Outcome, d.res.Err = "", nil // the deploy's, not the diff's
		}
	}
}

// subResult is a Result holding the droplets ds only (what diff lists).
func subResult(ds []*droplet) *Result {
	sub := &Result{Droplets: []*DropletResult{}}
	for _, d := range ds {
		sub.Droplets = append(sub.Droplets, d.res)
	}
	return sub
}

// approve runs the diff the approval is about, asks, and checks that the
// account did not change meanwhile. The runner's known attributes are
// left as they were.
func (r *runner) approve(ctx context.Context, ds []*droplet) (*DiffResult, error) {
	level := r.opts.approvalLevel()
	if level == ApproveNever {
		return nil, nil
	}
	compared := reviewed(level, ds)
	restore := r.reviewing(ds)
	diff, err := r.diff(ctx, compared, subResult(compared), newDiffResult(r.src), false)
	restore()
	return diff, askApproval(ctx, r.opts, r.creds, level, diff, err)
}

// askApproval is the one decision on a diff at level: nothing needs
// approval, or Approve approves it (and the credentials still answer for
// the account diffed), or the deploy stops: ErrApprovalRequired when there
// is no one to ask, Approve's error, ErrAccountChanged. err is the diff's
// own error: an interruption stops; a droplet that could not be compared
// needs approval (NeedsApproval).
func askApproval(ctx context.Context, o Options, creds *credProvider, level Approval, diff *DiffResult, err error) error {
	if err != nil && (ctx.Err() != nil || errors.Is(err, ErrInterrupted)) {
		return err
	}
	reasons := diff.NeedsApproval(level)
	if len(reasons) == 0 {
		return nil
	}
	if o.Approve == nil {
		return &ApprovalError{Level: level, Reasons: reasons, Err: ErrApprovalRequired}
	}
	if err := o.Approve(ctx, diff, reasons); err != nil {
		return err
	}
	acct, err := creds.callerNow(ctx)
	if err != nil {
		return err
	}
	if acct != diff.Account {
		return fmt.Errorf("%w: the diff approved was account %s's, the credentials are now account %s's", ErrAccountChanged, diff.Account, acct)
	}
	return nil
}
