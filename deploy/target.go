package deploy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/suggest"
)

// ErrTarget: no --target for an assembly that declares targets, one it
// does not declare, or one for an assembly that declares none.
var ErrTarget = errcode.New("bad_target", "bad target",
	"choose one of the assembly's targets with Options.Target NAME ('assemble inspect' lists them)")

// ErrPairNotStarted: an account/region pair of a target was not started
// because more pairs failed than Options.MaxFailures allows.
var ErrPairNotStarted = errcode.New("pair_not_started", "not started: too many account/region pairs failed",
	"fix the failed pairs and deploy again, or allow more failures with Options.MaxFailures N")

// scope is one run's share of a deploy or status: the target chosen (nil
// when the assembly declares none), the account/region pair its
// environment-agnostic droplets take, which droplets it holds, and which
// droplets another run deploys first (their attributes are given to it).
type scope struct {
	creds    *credProvider // shared by the runs of one target (nil: made by prepare)
	target   *assembly.Target
	pair     string               // aws://ACCOUNT/REGION, or "" (the caller's own)
	include  func(id string) bool // nil: every droplet
	deferred map[string]bool
	// approveOnce: the run is one of a matrix's, approved with the others
	// (matrix.approve), not on its own.
	approveOnce bool
}

func (sc *scope) role() string {
	if sc.target != nil {
		return sc.target.DeployRole
	}
	return ""
}

// environment is a droplet's environment in the scope: the pair fills in
// the account and region the droplet leaves unknown.
func (sc *scope) environment(spec *assembly.Droplet) (assembly.Environment, error) {
	return assembly.ParseEnvironment(assembly.PairEnvironment(spec, sc.pair))
}

// place fills in the caller's account and the configured region where the
// droplet's environment leaves them unknown (no target, or none given).
func (r *runner) place(d *droplet) []error {
	if d.account == assembly.UnknownAccount {
		d.account = r.account
	}
	if d.region == assembly.UnknownRegion || d.region == "" {
		d.region = r.creds.region()
		if d.region == "" {
			return []error{dropletErr(d.id, ErrEnvironment, "its environment %s names no region and none is configured (set AWS_REGION or a profile's region)", d.spec.Environment)}
		}
	}
	return nil
}

// chooseTarget is the target Options.Target names: required when the
// manifest declares targets, refused when it declares none, and asked of
// the verification's policy file (its deploy section: Policy.AllowTarget).
func chooseTarget(src *Source, opts Options) (string, *assembly.Target, error) {
	m := src.manifest
	names := m.TargetNames()
	switch {
	case len(names) == 0 && opts.Target == "":
		return "", nil, nil
	case len(names) == 0:
		return "", nil, fmt.Errorf("%w: Options.Target %s: the assembly declares no targets (deploy it without Options.Target)", ErrTarget, opts.Target)
	case opts.Target == "":
		return "", nil, fmt.Errorf("%w: the assembly declares targets %s: choose one with Options.Target NAME", ErrTarget, strings.Join(names, ", "))
	}
	t := m.Targets[opts.Target]
	if t == nil {
		return "", nil, fmt.Errorf("%w: Options.Target %s: the assembly declares %s%s", ErrTarget, opts.Target, strings.Join(names, ", "), suggest.Hint(opts.Target, names))
	}
	if err := PolicyOf(src.policy).AllowTarget(opts.Target); err != nil {
		return "", nil, err
	}
	return opts.Target, t, nil
}

// targetPairs are the account/region pairs the target deploys its
// environment-agnostic droplets to, in its order (none without a target,
// or when every droplet names its own environment).
func targetPairs(m *assembly.Manifest, t *assembly.Target) []string {
	if t == nil {
		return nil
	}
	for _, id := range m.IDs() {
		if agnostic(m.Droplets[id]) {
			return t.Environments
		}
	}
	return nil
}

// agnostic reports whether the droplet takes the target's environment.
func agnostic(d *assembly.Droplet) bool { return assembly.TakesTarget(d) }

// matrix is a target over several account/region pairs: the droplets with
// an environment of their own run once (first), then each pair runs the
// environment-agnostic droplets, with their attributes given. Every run is
// prepared (every check, every account reached) before anything changes.
type matrix struct {
	src    *Source
	opts   Options
	target *assembly.Target
	pairs  []string
	creds  *credProvider
	fixed  map[string]bool // droplets with an environment of their own
}

func newMatrix(ctx context.Context, src *Source, opts Options, t *assembly.Target, pairs []string) (*matrix, error) {
	creds, err := newCredentials(ctx, &opts, t.DeployRole)
	if err != nil {
		return nil, err
	}
	mx := &matrix{src: src, opts: opts, target: t, pairs: pairs, creds: creds, fixed: map[string]bool{}}
	m := src.manifest
	for _, id := range m.IDs() {
		if !agnostic(m.Droplets[id]) {
			mx.fixed[id] = true
		}
	}
	// A droplet deployed once cannot take a value of one pair.
	var errs []error
	for _, id := range slices.Sorted(maps.Keys(mx.fixed)) {
		if src.graph == nil {
			break
		}
		for _, dep := range src.graph.Dependencies(id) {
			if !mx.fixed[dep] {
				errs = append(errs, dropletErr(id, ErrEnvironment, "its environment %s is its own, yet it depends on %s, which the target deploys to %d account/region pairs: give it the target's environment (aws://unknown-account/unknown-region) or remove the dependency", m.Droplets[id].Environment, dep, len(pairs)))
			}
		}
	}
	return mx, errors.Join(errs...)
}

func (mx *matrix) shared() *scope {
	return &scope{creds: mx.creds, target: mx.target, include: func(id string) bool { return mx.fixed[id] }, approveOnce: true}
}

func (mx *matrix) pair(env string, deferred map[string]bool) *scope {
	return &scope{creds: mx.creds, target: mx.target, pair: env, include: func(id string) bool { return !mx.fixed[id] }, deferred: deferred, approveOnce: true}
}

// deployMatrix deploys (or plans) a target over several pairs: up to
// Options.Concurrency pairs at once, started in the target's order; once
// more than Options.MaxFailures pairs failed, the pairs not started yet are
// not started (ErrPairNotStarted).
func deployMatrix(ctx context.Context, src *Source, opts Options, res *Result, t *assembly.Target, pairs []string) error {
	mx, err := newMatrix(ctx, src, opts, t, pairs)
	if err != nil {
		return err
	}
	// Prepare every run before any change. A pair refused here (its
	// account or region does not allow it) counts as a failed pair: with
	// more than MaxFailures, nothing starts.
	shared, runs, err := mx.prepare(ctx, res)
	if err != nil {
		return err
	}
	perr := make([]error, len(pairs))
	failed := 0
	for i, rn := range runs {
		if rn.err != nil {
			perr[i] = rn.err
			failed++
		}
	}
	joined := func() error {
		var errs []error
		for i, err := range perr {
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", pairs[i], err))
			}
		}
		return errors.Join(errs...)
	}
	tooMany := func() bool {
		if failed <= opts.MaxFailures {
			return false
		}
		for i, rn := range runs {
			if rn.r != nil {
				perr[i] = fmt.Errorf("%w (%d refused before any change, Options.MaxFailures %d)", ErrPairNotStarted, failed, opts.MaxFailures)
				notStarted(rn.res, perr[i])
			}
		}
		return true
	}
	if tooMany() {
		return joined()
	}
	if !opts.Plan {
		// One approval for the whole matrix, then its first writes: the
		// large templates staged, a pair whose staging fails refused.
		if err := mx.approve(ctx, shared, runs); err != nil {
			refuseMatrix(shared, runs, err)
			return err
		}
		if err := shared.r.stageTemplates(ctx, shared.ds); err != nil {
			refuseMatrix(shared, runs, err)
			return err
		}
		for i, rn := range runs {
			if rn.r == nil {
				continue
			}
			if err := rn.r.stageTemplates(ctx, rn.ds); err != nil {
				markRefused(rn.res, err)
				rn.res.Error = err.Error()
				perr[i], runs[i].r = err, nil
				failed++
			}
		}
		if tooMany() {
			return joined()
		}
	}
	// The droplets with their own environment, once.
	if r0, ds0 := shared.r, shared.ds; len(ds0) > 0 {
		var err error
		if opts.Plan {
			err = r0.plan(ctx, ds0, res)
		} else {
			err = r0.deploy(ctx, ds0, res)
		}
		if err != nil {
			for _, rn := range runs {
				if rn.r != nil {
					notStarted(rn.res, fmt.Errorf("%w: the droplets with an environment of their own were not deployed", ErrDependency))
				}
			}
			return err
		}
		for _, rn := range runs {
			if rn.r != nil {
				giveShared(shared, rn.r)
			}
		}
	}
	// The pairs.
	var mu sync.Mutex
	sem := make(chan struct{}, opts.Concurrency)
	var wg sync.WaitGroup
	for i, rn := range runs {
		if rn.r == nil {
			continue // refused
		}
		acquired := false
		select {
		case sem <- struct{}{}:
			acquired = true
		case <-ctx.Done():
		}
		mu.Lock()
		stop := failed > opts.MaxFailures || ctx.Err() != nil
		mu.Unlock()
		if stop {
			if acquired {
				<-sem
			}
			if ctx.Err() != nil {
				perr[i] = fmt.Errorf("%w: not started", ErrInterrupted)
			} else {
				perr[i] = fmt.Errorf("%w (%d failed, Options.MaxFailures %d)", ErrPairNotStarted, failed, opts.MaxFailures)
			}
			notStarted(rn.res, perr[i])
			continue
		}
		wg.Add(1)
		go func(i int, rn pairRun) {
			defer wg.Done()
			defer func() { <-sem }()
			var err error
			if opts.Plan {
				err = rn.r.plan(ctx, rn.ds, rn.res)
			} else {
				err = rn.r.deploy(ctx, rn.ds, rn.res)
			}
			if err != nil {
				rn.res.Error = err.Error()
				mu.Lock()
				failed++
				mu.Unlock()
			}
			perr[i] = err
		}(i, rn)
	}
	wg.Wait()
	return joined()
}

// notStarted marks a pair that was not started, and why.
func notStarted(res *Result, why error) {
	res.Error = why.Error()
	for _, d := range res.Droplets {
		if d.Outcome == "" || d.Outcome == NotStarted {
			d.Outcome = NotStarted
			if d.Err == nil {
				d.Err = &DropletError{Droplet: d.ID, Err: why}
			}
		}
	}
}
