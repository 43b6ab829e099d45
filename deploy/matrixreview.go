package deploy

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
)

// A pairRun is one run of a matrix, prepared: the droplets with an
// environment of their own (env ""), or one account/region pair's; r is
// nil when the run was refused before any change (err says why).
type pairRun struct {
	env string
	r   *runner
	ds  []*droplet
	res *Result
	err error
}

// prepare prepares every run of the matrix before anything changes: the
// droplets with an environment of their own into res, then each pair into
// a Result of its own in res.Pairs. An error is the shared run's refusal
// (or an interruption); a pair's refusal is its run's err.
func (mx *matrix) prepare(ctx context.Context, res *Result) (pairRun, []pairRun, error) {
	shared := pairRun{res: res}
	var err error
	shared.r, shared.ds, err = prepare(ctx, mx.src, mx.opts, res, false, mx.shared())
	if err != nil {
		markRefused(res, err)
		return shared, nil, err
	}
	deferred := map[string]bool{}
	for _, d := range shared.ds {
		deferred[d.id] = true
	}
	runs := make([]pairRun, len(mx.pairs))
	for i, env := range mx.pairs {
		pr := newResult(mx.src, mx.opts)
		pr.Target, pr.Environment = res.Target, env
		res.Pairs = append(res.Pairs, pr)
		runs[i] = pairRun{env: env, res: pr}
		r, ds, err := prepare(ctx, mx.src, mx.opts, pr, false, mx.pair(env, deferred))
		if err != nil {
			if ctx.Err() != nil {
				return shared, runs, err
			}
			markRefused(pr, err)
			pr.Error = err.Error()
			runs[i].err = err
			continue
		}
		runs[i].r, runs[i].ds = r, ds
	}
	return shared, runs, nil
}

// giveShared gives a pair's runner the attributes the shared run knows of
// its droplets (deployed, or unchanged in a diff).
func giveShared(shared pairRun, to *runner) {
	shared.r.attrMu.Lock()
	defer shared.r.attrMu.Unlock()
	for _, d := range shared.ds {
		if a, ok := shared.r.attrs[d.id]; ok {
			to.setAttrs(d.id, a)
		}
	}
}

// diffMatrix is Diff of a target over several account/region pairs: every
// run prepared (every check, every account reached) as a deploy prepares
// it, then the droplets with an environment of their own compared once,
// then each pair, up to Concurrency pairs at a time.
func diffMatrix(ctx context.Context, src *Source, o Options, res *Result, out *DiffResult, t *assembly.Target, pairs []string, changeSet bool) (*DiffResult, error) {
	mx, err := newMatrix(ctx, src, o, t, pairs)
	if err != nil {
		return out, err
	}
	shared, runs, err := mx.prepare(ctx, res)
	if err != nil {
		refusedDiff(out, res)
		return out, err
	}
	return mx.diff(ctx, shared, runs, changeSet, "", out)
}

// diff compares the matrix's runs into out: the shared droplets in
// out.Droplets, each pair in out.Pairs (a refused pair with its Error),
// the counts summed. At an approval level, only what that level judges is
// compared (reviewed); level "" compares everything.
func (mx *matrix) diff(ctx context.Context, shared pairRun, runs []pairRun, changeSet bool, level Approval, out *DiffResult) (*DiffResult, error) {
	pick := func(rn pairRun) ([]*droplet, *Result) {
		if level == "" {
			return rn.ds, rn.res
		}
		ds := reviewed(level, rn.ds)
		return ds, subResult(ds)
	}
	ds0, res0 := pick(shared)
	own := newDiffResult(mx.src)
	_, err0 := shared.r.diff(ctx, ds0, res0, own, changeSet)
	var errs []error
	if err0 != nil {
		errs = append(errs, err0)
	}
	out.Account, out.Droplets = shared.r.account, own.Droplets
	out.Pairs = make([]*DiffResult, len(runs))
	perr := make([]error, len(runs))
	sem := make(chan struct{}, mx.opts.Concurrency)
	var wg sync.WaitGroup
	for i, rn := range runs {
		po := newDiffResult(mx.src)
		po.Target, po.Environment = out.Target, rn.env
		env, _ := assembly.ParseEnvironment(rn.env)
		po.Account = env.Account
		out.Pairs[i] = po
		if rn.r == nil {
			refusedDiff(po, rn.res)
			po.Error, perr[i] = rn.err.Error(), rn.err
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			perr[i] = fmt.Errorf("%w: not compared", ErrInterrupted)
			po.Error = perr[i].Error()
			continue
		}
		giveShared(shared, rn.r)
		wg.Add(1)
		go func(i int, rn pairRun, po *DiffResult) {
			defer wg.Done()
			defer func() { <-sem }()
			ds, res := pick(rn)
			_, err := rn.r.diff(ctx, ds, res, po, changeSet)
			po.Account = env.Account // the pair's, not the caller's
			if err != nil {
				po.Error, perr[i] = err.Error(), err
			}
		}(i, rn, po)
	}
	wg.Wait()
	regions, deployed := map[string]bool{}, map[digest.Digest]bool{}
	for _, d := range append([]*DiffResult{own}, out.Pairs...) {
		out.Total += d.Total
		out.Changed += d.Changed
		out.Broadened += d.Broadened
		for _, r := range d.Regions {
			regions[r] = true
		}
		for _, s := range d.Deployed {
			deployed[s] = true
		}
	}
	out.Regions, out.Deployed = jsonList(regions), digestList(deployed)
	for i, err := range perr {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", runs[i].env, err))
		}
	}
	if ctx.Err() != nil {
		return out, fmt.Errorf("%w: %v", ErrInterrupted, ctx.Err())
	}
	return out, errors.Join(errs...)
}

// approve asks one approval for the whole matrix, before its first write:
// the diff of the shared droplets and of every pair that will run (a pair
// refused already does not), what needs approval listed pair by pair, asked
// once (askApproval).
func (mx *matrix) approve(ctx context.Context, shared pairRun, runs []pairRun) error {
	level := mx.opts.approvalLevel()
	if level == ApproveNever {
		return nil
	}
	var live []pairRun
	for _, rn := range runs {
		if rn.r != nil {
			live = append(live, rn)
		}
	}
	var restores []func()
	for _, rn := range append([]pairRun{shared}, live...) {
		restores = append(restores, rn.r.reviewing(rn.ds))
	}
	out := newDiffResult(mx.src)
	out.Target = shared.res.Target
	diff, err := mx.diff(ctx, shared, live, false, level, out)
	for _, restore := range restores {
		restore()
	}
	return askApproval(ctx, mx.opts, mx.creds, level, diff, err)
}

// refuseMatrix records a refusal of the whole matrix before any change
// (approval): no droplet of any run is started.
func refuseMatrix(shared pairRun, runs []pairRun, err error) {
	markRefused(shared.res, err)
	for _, rn := range runs {
		if rn.r != nil {
			notStarted(rn.res, err)
		}
	}
}
