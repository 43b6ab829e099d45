package deploy

import (
	"context"
	"errors"
	"fmt"

	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"

	"github.com/cloud-assembly/assemble/digest"
)

// A DropletStatus is how one deployed droplet compares with the assembly.
type DropletStatus struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	Kind  string `json:"kind,omitempty"`
	Alias string `json:"alias,omitempty"`
	// State is "match", "absent" (nothing of it is deployed: never
	// deployed, or deleted), "differs", "excluded" (left out by Only) or
	// "unknown" (it could not be compared: Error says why).
	State       string   `json:"state"`
	Differences []string `json:"differences"`
	Error       string   `json:"error,omitempty"`
	// DeployedBy names the assembly whose deploy made what runs, when it
	// is another assembly than this one (its stack's assemble:sha256
	// tag): an assembly whose droplet did not change deploys nothing.
	DeployedBy *digest.Digest `json:"deployedBy,omitempty"`
	// Drift is CloudFormation's drift detection of a stack (Options.Drift):
	// its resources as they are, beside the template's verdict above.
	Drift *StackDrift `json:"drift,omitempty"`
}

// An absentError says that nothing of a droplet is deployed: a kind's
// status returns it instead of a list of differences.
type absentError struct{ what string }

func (e *absentError) Error() string { return e.what }

func absent(format string, args ...any) error {
	return &absentError{fmt.Sprintf(format, args...)}
}

// A StatusResult compares what is deployed with the assembly.
type StatusResult struct {
	SHA256   digest.Digest    `json:"sha256"`
	Account  string           `json:"account,omitempty"`
	Match    bool             `json:"match"`
	Droplets []*DropletStatus `json:"droplets"`
	// Target is the target compared ("" when the assembly has none).
	Target string `json:"target,omitempty"`
	// Environment is the account/region pair of a target's matrix this
	// result is about (in Pairs).
	Environment string `json:"environment,omitempty"`
	// Pairs compare each account/region pair of a target that has
	// several, in its order; the droplets above are then those with an
	// environment of their own.
	Pairs []*StatusResult `json:"pairs,omitempty"`
	// Error is why a pair could not be compared (in Pairs).
	Error string `json:"error,omitempty"`
}

// Status compares, droplet by droplet in deploy order, what is deployed
// with the assembly: a stack's template (GetTemplate) and parameters, each
// object's bytes (by S3's SHA-256 checksum, else by reading and hashing
// it; never by its metadata), each image tag's digest. References are resolved from what is
// deployed. It changes nothing. The error wraps ErrDiffers when anything
// is absent or differs (the result says what); other errors are the
// checks Deploy makes first (Parameters and metadata aside).
func Status(ctx context.Context, src *Source, opts Options) (*StatusResult, error) {
	out := &StatusResult{SHA256: src.SHA256, Droplets: []*DropletStatus{}}
	name, t, err := chooseTarget(src, opts)
	if err != nil {
		return out, err
	}
	out.Target = name
	pairs := targetPairs(src.manifest, t)
	if len(pairs) <= 1 {
		sc := &scope{target: t}
		if len(pairs) == 1 {
			sc.pair = pairs[0]
		}
		if err := statusScope(ctx, src, opts, out, sc); err != nil {
			return out, err
		}
		if !out.Match {
			return out, ErrDiffers
		}
		return out, nil
	}
	mx, err := newMatrix(ctx, src, opts, t, pairs)
	if err != nil {
		return out, err
	}
	if err := statusScope(ctx, src, opts, out, mx.shared()); err != nil {
		return out, err
	}
	var errs []error
	for _, env := range pairs {
		po := &StatusResult{SHA256: src.SHA256, Target: name, Environment: env, Droplets: []*DropletStatus{}}
		out.Pairs = append(out.Pairs, po)
		if err := statusScope(ctx, src, opts, po, mx.pair(env, nil)); err != nil {
			if errors.Is(err, ErrInterrupted) {
				return out, err
			}
			po.Error = err.Error()
			errs = append(errs, fmt.Errorf("%s: %w", env, err))
			out.Match = false
			continue
		}
		out.Match = out.Match && po.Match
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	if !out.Match {
		return out, ErrDiffers
	}
	return out, nil
}

// statusScope compares one scope's droplets into out (out.Match says
// whether all match); the error is a refusal or an interruption.
func statusScope(ctx context.Context, src *Source, opts Options, out *StatusResult, sc *scope) error {
	res := &Result{Droplets: []*DropletResult{}}
	r, ds, err := prepare(ctx, src, opts, res, true, sc)
	if err != nil {
		return err
	}
	out.Account = r.account
	byID := map[string]*droplet{}
	for _, d := range ds {
		byID[d.id] = d
	}
	out.Match = true
	for _, dr := range res.Droplets {
		st := &DropletStatus{ID: dr.ID, Type: dr.Type, Kind: dr.Kind, Alias: dr.Alias, Differences: []string{}}
		out.Droplets = append(out.Droplets, st)
		d := byID[dr.ID]
		switch {
		case d == nil && dr.Err != nil:
			st.State, st.Error = "unknown", dr.Err.Error()
			out.Match = false
			continue
		case d == nil:
			st.State = "excluded"
			continue
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: stopped before comparing %s", ErrInterrupted, d.id)
		}
		props, unknown, err := resolve(d.id, d.spec.Properties, r.lookup)
		if err == nil && len(unknown) > 0 {
			err = fmt.Errorf("%w: %v are not deployed", ErrUnresolved, unknown)
		}
		if err == nil {
			d.setProps(props)
			st.Differences, err = d.kind.status(ctx, d)
			if st.Differences == nil {
				st.Differences = []string{}
			}
		}
		if dg := d.deployedBy; !dg.IsZero() {
			st.DeployedBy = &dg
		}
		var ab *absentError
		switch {
		case ctx.Err() != nil:
			st.State, st.Error = "unknown", "interrupted"
			return fmt.Errorf("%w: while comparing %s", ErrInterrupted, d.id)
		case errors.As(err, &ab):
			st.State = "absent"
			st.Differences = []string{ab.what}
			out.Match = false
		case err != nil && errors.Is(err, ErrUnresolved):
			st.State = "differs"
			st.Differences = append(st.Differences, err.Error())
			out.Match = false
		case err != nil:
			st.State = "unknown"
			st.Error = err.Error()
			out.Match = false
		case len(st.Differences) > 0:
			st.State = "differs"
			out.Match = false
		default:
			st.State = "match"
		}
		if _, isStack := d.kind.(stackKind); isStack && r.opts.Drift && (st.State == "match" || st.State == "differs") {
			st.Drift = r.detectDrift(ctx, d)
			if st.Drift.Status == string(cfntypes.StackDriftStatusDrifted) {
				out.Match = false // what runs is not what was deployed
			}
		}
	}
	return nil
}

// Droplet returns the status of the droplet id, or nil.
func (r *StatusResult) Droplet(id string) *DropletStatus {
	for _, d := range r.Droplets {
		if d.ID == id {
			return d
		}
	}
	return nil
}
