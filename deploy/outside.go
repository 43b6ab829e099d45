package deploy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/cloud-assembly/assemble/assembly"
)

// readOutside reads, from the account as it is now, the droplets that the
// targeted ones refer to or depend on but Options.Only leaves out (and
// the droplets those refer to, to resolve their own properties): nothing
// is deployed with a placeholder. Such a droplet counts as deployed when
//   - a stack: the live stack is there and complete (its outputs are read
//     from it);
//   - a file, directory or image: every object holds the signed bytes, or
//     the tag points at the signed image (as Status judges it);
//   - a docker build: the tag is there.
//
// Any that is not is an error wrapping ErrUnresolved, naming the droplet,
// the one that needs it, and how to deploy both. Nothing changes.
func (r *runner) readOutside(ctx context.Context, ds []*droplet, targeted map[string]bool) []error {
	m := r.src.manifest
	// need maps a left-out droplet to the targeted one that first needs it.
	need := map[string]string{}
	var queue []string
	add := func(id, by string) {
		// A target's value is no droplet; a droplet another run of the
		// target deploys first is given, not read.
		if targeted[id] || m.Droplets[id] == nil || r.sc.deferred[id] || m.IsTargetReference(assembly.Reference{Droplet: id}) {
			return
		}
		if _, seen := need[id]; !seen {
			need[id] = by
			queue = append(queue, id)
		}
	}
	for _, d := range ds {
		refs, _ := assembly.ScanProperties(d.spec.Properties)
		for _, ref := range refs {
			add(ref.Droplet, d.id)
		}
		for _, dep := range d.spec.DependsOn {
			add(dep, d.id)
		}
	}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		refs, _ := assembly.ScanProperties(m.Droplets[id].Properties)
		for _, ref := range refs {
			add(ref.Droplet, need[id])
		}
	}
	// In deploy order, so that a droplet's references are read first.
	order := r.src.order
	if order == nil {
		order = m.IDs()
	}
	pos := map[string]int{}
	for i, id := range order {
		pos[id] = i
	}
	ids := slices.Sorted(maps.Keys(need))
	sort.SliceStable(ids, func(i, j int) bool { return pos[ids[i]] < pos[ids[j]] })

	var errs []error
	for _, id := range ids {
		if ctx.Err() != nil {
			return append(errs, fmt.Errorf("%w: %v", ErrInterrupted, ctx.Err()))
		}
		by := need[id]
		fix := fmt.Sprintf("deploy it first, or both together (Options.Only %s,%s)", by, id)
		notDeployed := func(why string) {
			errs = append(errs, dropletErr(id, ErrUnresolved, "%s needs it, Options.Only leaves it out, and it is not deployed (%s): %s", by, why, fix))
		}
		spec := m.Droplets[id]
		kind, _ := kindOf(spec.Type)
		if kind == nil {
			errs = append(errs, dropletErr(id, ErrUnresolved, "%s needs it, Options.Only leaves it out, and its type %s has no deployer to read it from the account", by, spec.Type))
			continue
		}
		o, err := r.outsideDroplet(ctx, id, spec, kind)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		props, unknown, err := resolve(id, spec.Properties, r.lookup)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if len(unknown) > 0 {
			notDeployed("it refers to " + strings.Join(unknown, ", ") + ", not deployed")
			continue
		}
		o.setProps(props)
		diff, err := kind.usable(ctx, o)
		if ab := (*absentError)(nil); errors.As(err, &ab) {
			diff, err = []string{ab.what}, nil
		}
		if err != nil {
			errs = append(errs, &DropletError{Droplet: id, Err: err})
			continue
		}
		if len(diff) > 0 {
			notDeployed(strings.Join(diff, "; "))
			continue
		}
		attrs, ok, err := kind.current(ctx, o)
		switch {
		case err != nil:
			var de *DropletError
			if !errors.As(err, &de) {
				err = &DropletError{Droplet: id, Err: err}
			}
			errs = append(errs, err)
		case !ok:
			notDeployed("no complete stack " + str(o.props, "stackName"))
		default:
			r.setAttrs(id, attrs)
		}
	}
	return errs
}

// outsideDroplet is a droplet read, not deployed, in its own environment
// (the target's account and region where it names none, else the
// caller's), with the clients of that account: never the caller's copy
// of another account's droplet. An account no credentials reach is an
// error wrapping ErrAccount, before any change.
func (r *runner) outsideDroplet(ctx context.Context, id string, spec *assembly.Droplet, kind dropletKind) (*droplet, error) {
	_, alias := kindOf(spec.Type)
	env, err := r.sc.environment(spec)
	if err != nil || env.Protocol != "aws" {
		return nil, dropletErr(id, ErrEnvironment, "environment %s: deploy supports aws://ACCOUNT/REGION only", spec.Environment)
	}
	o := &droplet{id: id, spec: spec, kind: kind, alias: alias, account: env.Account, region: env.Region, res: &DropletResult{ID: id}, run: r}
	if errs := r.place(o); len(errs) > 0 {
		return nil, errs[0]
	}
	if o.cl, err = r.creds.reach(ctx, o.account, o.region, kind.purpose()); err != nil {
		return nil, &DropletError{Droplet: id, Err: fmt.Errorf("it is referenced, and its account cannot be read: %w", err)}
	}
	return o, nil
}
