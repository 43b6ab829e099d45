package deploy

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// schedule runs step for each droplet once the targeted droplets it
// depends on have had theirs, up to Options.Concurrency steps at a time:
// the one scheduler of a deploy and of a plan. With stopOnFailure (a
// deploy), a droplet whose dependency did not succeed is not started;
// a plan goes on (what the dependency would give is known after deploy).
// Canceling ctx starts no new step; the droplets whose step was under way
// are Interrupted and listed in res.InFlight. step sets the outcome of a
// droplet it succeeds with.
func (r *runner) schedule(ctx context.Context, ds []*droplet, res *Result, stopOnFailure bool, step func(context.Context, *droplet) error) error {
	done := map[string]chan struct{}{}
	for _, d := range ds {
		done[d.id] = make(chan struct{})
	}
	var ok sync.Map
	sem := make(chan struct{}, r.opts.Concurrency)
	var wg sync.WaitGroup
	var inflightMu sync.Mutex
	for _, d := range ds {
		wg.Add(1)
		go func(d *droplet) {
			defer wg.Done()
			defer close(done[d.id])
			var deps []string
			if r.src.graph != nil {
				deps = r.src.graph.Dependencies(d.id)
			}
			for _, dep := range deps {
				ch, isTarget := done[dep]
				if !isTarget {
					continue
				}
				<-ch
				if _, good := ok.Load(dep); !good && stopOnFailure {
					d.res.Outcome = NotStarted
					d.res.Err = dropletErr(d.id, ErrDependency, "not deployed: %s, which it depends on, was not deployed", dep)
					return
				}
			}
			notStarted := func() {
				d.res.Outcome = NotStarted
				d.res.Err = dropletErr(d.id, ErrInterrupted, "not started: interrupted")
			}
			select {
			case sem <- struct{}{}:
				if ctx.Err() != nil {
					<-sem
					notStarted()
					return
				}
			case <-ctx.Done():
				notStarted()
				return
			}
			defer func() { <-sem }()
			err := step(ctx, d)
			switch {
			case err != nil && ctx.Err() != nil:
				d.res.Outcome = Interrupted
				d.res.Err = dropletErr(d.id, ErrInterrupted, "interrupted while in flight: %v", err)
				inflightMu.Lock()
				res.InFlight = append(res.InFlight, d.id)
				inflightMu.Unlock()
			case err != nil:
				var de *DropletError
				if !errors.As(err, &de) {
					err = &DropletError{Droplet: d.id, Err: err}
				}
				d.res.Outcome, d.res.Err = Failed, err
				d.progress("failed: %v", err)
			default:
				ok.Store(d.id, true)
			}
		}(d)
	}
	wg.Wait()
	sort.Strings(res.InFlight)
	var errs []error
	for _, d := range ds {
		if d.res.Err != nil && d.res.Outcome == Failed {
			errs = append(errs, d.res.Err)
		}
	}
	if ctx.Err() != nil {
		errs = append([]error{interruptedErr(res, ds)}, errs...)
	} else {
		for _, d := range ds {
			if d.res.Outcome == NotStarted && d.res.Err != nil {
				errs = append(errs, d.res.Err)
			}
		}
	}
	return errors.Join(errs...)
}

// interruptedErr says what an interrupted run left: the droplets whose
// step was under way, what each had done, and the droplets not started.
func interruptedErr(res *Result, ds []*droplet) error {
	var b strings.Builder
	b.WriteString("stopped starting new steps")
	if len(res.InFlight) > 0 {
		b.WriteString("; in flight: ")
		for i, id := range res.InFlight {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(id)
			for _, d := range ds {
				if doing := d.doing.Load(); d.id == id && doing != nil {
					fmt.Fprintf(&b, " (%s)", *doing)
				}
			}
		}
		if !res.Plan {
			b.WriteString(": a stack operation already started goes on in CloudFormation (a change set not executed was deleted); check it, then deploy again")
		} else {
			b.WriteString(": a change set or review stack this plan made may be left; deleting them was tried")
		}
	}
	var waiting []string
	for _, d := range ds {
		if d.res.Outcome == NotStarted {
			waiting = append(waiting, d.id)
		}
	}
	if len(waiting) > 0 {
		fmt.Fprintf(&b, "; not started: %s", strings.Join(waiting, ", "))
	}
	return fmt.Errorf("%w: %s", ErrInterrupted, b.String())
}
