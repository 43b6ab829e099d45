package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cloud-assembly/assemble/errcode"
)

// Outcomes of Destroy.
const (
	Deleted Outcome = "deleted" // a stack or objects were deleted
	Absent  Outcome = "absent"  // nothing of the droplet is there
	Kept    Outcome = "kept"    // left as it is (an image: registries keep their tags)
)

// ErrNotOwned: Destroy found a stack or object of a droplet's name that
// this droplet did not deploy (no assemble:droplet tag naming it).
var ErrNotOwned = errcode.New("not_owned", "not deployed by this droplet",
	"destroy only removes what the droplet deployed: delete it yourself, or leave it out with Options.Only")

// DestroyOptions tune Destroy: Options (Only, Target, RoleARN, Qualifier,
// Plan, Concurrency, AWS ...) and Purge.
type DestroyOptions struct {
	Options
	// Purge empties the stack's S3 buckets first, those it retains
	// (DeletionPolicy Retain) too; without it their contents are never
	// touched (a non-empty bucket the stack deletes fails the delete).
	Purge bool
}

// Destroy verifies nothing itself (src is a verification's outcome). It
// deletes, in reverse dependency order, what the targeted droplets
// deployed, each in its own account and region: a stack whose
// assemble:droplet tag names the droplet (DeleteStack, waited for); a file
// or directory droplet's objects whose assemble-droplet metadata names it.
// Images are kept. Everything is looked at first: a stack or object of the
// droplet's name that another assembly or tool made refuses the whole
// destroy (ErrNotOwned) before anything is deleted. With Plan it deletes
// nothing and says what it would delete. A target of several pairs is
// destroyed pair by pair (in reverse order), then its droplets with an
// environment of their own.
func Destroy(ctx context.Context, src *Source, opts DestroyOptions) (*Result, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	res := newResult(src, opts.Options)
	name, t, err := chooseTarget(src, opts.Options)
	if err != nil {
		return res, err
	}
	res.Target = name
	type run struct {
		r   *runner
		ds  []*droplet
		res *Result
	}
	var runs []run
	pairs := targetPairs(src.manifest, t)
	if len(pairs) <= 1 {
		sc := &scope{target: t}
		if len(pairs) == 1 {
			sc.pair = pairs[0]
		}
		r, ds, err := prepare(ctx, src, opts.Options, res, true, sc)
		if err != nil {
			markRefused(res, err)
			return res, err
		}
		runs = append(runs, run{r, ds, res})
	} else {
		mx, err := newMatrix(ctx, src, opts.Options, t, pairs)
		if err != nil {
			return res, err
		}
		for i := len(pairs) - 1; i >= 0; i-- {
			pr := newResult(src, opts.Options)
			pr.Target, pr.Environment = name, pairs[i]
			res.Pairs = append([]*Result{pr}, res.Pairs...)
			r, ds, err := prepare(ctx, src, opts.Options, pr, true, mx.pair(pairs[i], nil))
			if err != nil {
				markRefused(pr, err)
				return res, fmt.Errorf("%s: %w", pairs[i], err)
			}
			runs = append(runs, run{r, ds, pr})
		}
		r, ds, err := prepare(ctx, src, opts.Options, res, true, mx.shared())
		if err != nil {
			markRefused(res, err)
			return res, err
		}
		runs = append(runs, run{r, ds, res})
	}
	// Look at everything first: what each droplet deployed, and whether
	// it is its own.
	var errs []error
	for _, rn := range runs {
		for _, d := range rn.ds {
			if err := destroyLook(ctx, d, opts.Purge); err != nil {
				d.res.Outcome, d.res.Err = NotStarted, err
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return res, errors.Join(errs...)
	}
	if opts.Plan {
		for _, rn := range runs {
			for _, d := range rn.ds {
				if d.res.Outcome == "" {
					d.res.Outcome = Planned
				}
			}
		}
		return res, nil
	}
	// Then delete, dependents first: a failure stops the droplets the
	// failed one depends on (they are still needed).
	for _, rn := range runs {
		failed := map[string]bool{}
		for i := len(rn.ds) - 1; i >= 0; i-- {
			d := rn.ds[i]
			if ctx.Err() != nil {
				d.res.Outcome, d.res.Err = NotStarted, dropletErr(d.id, ErrInterrupted, "not started: interrupted")
				continue
			}
			if d.res.Outcome == Absent || d.res.Outcome == Kept {
				continue
			}
			if blocker := dependentFailed(rn.r, d.id, failed); blocker != "" {
				d.res.Outcome, d.res.Err = NotStarted, dropletErr(d.id, ErrDependency, "kept: %s, which depends on it, was not destroyed", blocker)
				failed[d.id] = true
				continue
			}
			d.progress("destroying (%s)", d.alias)
			if err := destroyOne(ctx, d, opts.Purge); err != nil {
				d.res.Outcome, d.res.Err = Failed, &DropletError{Droplet: d.id, Err: err}
				errs = append(errs, d.res.Err)
				failed[d.id] = true
				continue
			}
			d.res.Outcome = Deleted
			d.progress("deleted")
		}
	}
	if ctx.Err() != nil {
		errs = append([]error{fmt.Errorf("%w: stopped starting new deletions", ErrInterrupted)}, errs...)
	}
	return res, errors.Join(errs...)
}

// dependentFailed names a droplet that depends on id and failed (or was
// kept), "" when none did.
func dependentFailed(r *runner, id string, failed map[string]bool) string {
	if r.src.graph == nil {
		return ""
	}
	for f := range failed {
		for _, dep := range r.src.graph.Dependencies(f) {
			if dep == id {
				return f
			}
		}
	}
	return ""
}

// destroyLook reads what the droplet deployed: its stack (owned by it) or
// its objects (written by it), records what would be deleted in its
// actions, sets Absent or Kept when there is nothing to delete, and gives
// its attributes to the droplets that refer to it.
func destroyLook(ctx context.Context, d *droplet, purge bool) error {
	props, _, err := resolve(d.id, d.spec.Properties, d.run.lookup)
	if err != nil {
		return err
	}
	d.setProps(props)
	return d.kind.look(ctx, d, purge)
}

// destroyOne deletes what destroyLook found.
func destroyOne(ctx context.Context, d *droplet, purge bool) error {
	return d.kind.destroy(ctx, d, purge)
}

// look: the stack, owned by the droplet.
func (stackKind) look(ctx context.Context, d *droplet, purge bool) error {
	name := str(d.props, "stackName")
	s, err := describeStack(ctx, d.aws().cfn, name)
	if err != nil {
		return &DropletError{Droplet: d.id, Err: err}
	}
	if s == nil || s.StackStatus == cfntypes.StackStatusDeleteComplete {
		d.res.Outcome = Absent
		d.res.action("stack %s: not there", name)
		return nil
	}
	if owner := tagValue(s.Tags, TagDroplet); owner != d.id {
		why := "it has no " + TagDroplet + " tag (another tool made it)"
		if owner != "" {
			why = fmt.Sprintf("its %s tag names droplet %s (another assembly's)", TagDroplet, owner)
		}
		return dropletErr(d.id, ErrNotOwned, "stack %s in aws://%s/%s: %s", name, d.account, d.region, why)
	}
	d.run.setAttrs(d.id, stackAttrs(s))
	d.res.action("delete stack %s (%s) in aws://%s/%s", name, s.StackStatus, d.account, d.region)
	if purge {
		buckets, err := stackBuckets(ctx, d.aws().cfn, name)
		if err != nil {
			return &DropletError{Droplet: d.id, Err: err}
		}
		for _, b := range buckets {
			d.res.action("empty bucket %s (DestroyOptions.Purge)", b)
		}
	}
	return nil
}

// destroy deletes the stack (its buckets emptied first with purge).
func (stackKind) destroy(ctx context.Context, d *droplet, purge bool) error {
	c := d.aws().cfn
	name := str(d.props, "stackName")
	if purge {
		buckets, err := stackBuckets(ctx, c, name)
		if err != nil {
			return err
		}
		for _, b := range buckets {
			if err := emptyBucket(ctx, d.aws().s3, b); err != nil {
				return err
			}
		}
	}
	s, err := describeStack(ctx, c, name)
	if err != nil || s == nil {
		return err
	}
	if _, err := c.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: s.StackId}); err != nil {
		return fmt.Errorf("%w: cloudformation:DeleteStack %s: %s", ErrAWS, name, apiMessage(err))
	}
	return waitDeleted(ctx, d, c, aws.ToString(s.StackId))
}

// look: the objects, written by the droplet.
func (k objectKind) look(ctx context.Context, d *droplet, purge bool) error {
	d.run.setAttrs(d.id, k.attrs(d))
	objs, err := k.objects(d)
	if err != nil {
		return &DropletError{Droplet: d.id, Err: err}
	}
	releaseAll(objs)
	mine := 0
	for _, o := range objs {
		head, err := d.aws().s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.key)})
		if err != nil {
			switch apiCode(err) {
			case "NotFound", "NoSuchKey", "404":
				continue
			}
			return &DropletError{Droplet: d.id, Err: fmt.Errorf("%w: s3:HeadObject s3://%s/%s: %s", ErrAWS, o.bucket, o.key, apiMessage(err))}
		}
		if owner := head.Metadata[MetaDroplet]; owner != d.id {
			return dropletErr(d.id, ErrNotOwned, "object s3://%s/%s was not written by this droplet (its %s metadata is %q)", o.bucket, o.key, MetaDroplet, owner)
		}
		mine++
		d.res.action("delete s3://%s/%s", o.bucket, o.key)
	}
	if mine == 0 {
		d.res.Outcome = Absent
	}
	return nil
}

// destroy deletes the objects.
func (k objectKind) destroy(ctx context.Context, d *droplet, purge bool) error {
	objs, err := k.objects(d)
	if err != nil {
		return err
	}
	releaseAll(objs)
	for _, o := range objs {
		if _, err := d.aws().s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.key)}); err != nil {
			return fmt.Errorf("%w: s3:DeleteObject s3://%s/%s: %s", ErrAWS, o.bucket, o.key, apiMessage(err))
		}
	}
	return nil
}

// keptImage is an image droplet's look: images are not deleted from
// registries.
func keptImage(d *droplet) error {
	d.res.Outcome = Kept
	d.res.action("kept: images are not deleted from registries")
	return nil
}

func (imageKind) look(ctx context.Context, d *droplet, purge bool) error    { return keptImage(d) }
func (buildKind) look(ctx context.Context, d *droplet, purge bool) error    { return keptImage(d) }
func (imageKind) destroy(ctx context.Context, d *droplet, purge bool) error { return nil }
func (buildKind) destroy(ctx context.Context, d *droplet, purge bool) error { return nil }

// stackBuckets lists the physical names of the stack's S3 buckets.
func stackBuckets(ctx context.Context, c *cloudformation.Client, stack string) ([]string, error) {
	var out []string
	p := cloudformation.NewListStackResourcesPaginator(c, &cloudformation.ListStackResourcesInput{StackName: aws.String(stack)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("%w: cloudformation:ListStackResources %s: %s", ErrAWS, stack, apiMessage(err))
		}
		for _, r := range page.StackResourceSummaries {
			if aws.ToString(r.ResourceType) == "AWS::S3::Bucket" && aws.ToString(r.PhysicalResourceId) != "" {
				out = append(out, aws.ToString(r.PhysicalResourceId))
			}
		}
	}
	return out, nil
}

// emptyBucket deletes every object (and version) of the bucket.
func emptyBucket(ctx context.Context, c *s3.Client, bucket string) error {
	p := s3.NewListObjectVersionsPaginator(c, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			if strings.Contains(apiCode(err), "NoSuchBucket") {
				return nil
			}
			return fmt.Errorf("%w: s3:ListObjectVersions %s: %s", ErrAWS, bucket, apiMessage(err))
		}
		var ids []s3types.ObjectIdentifier
		for _, v := range page.Versions {
			ids = append(ids, s3types.ObjectIdentifier{Key: v.Key, VersionId: v.VersionId})
		}
		for _, m := range page.DeleteMarkers {
			ids = append(ids, s3types.ObjectIdentifier{Key: m.Key, VersionId: m.VersionId})
		}
		if len(ids) == 0 {
			continue
		}
		if _, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)}}); err != nil {
			return fmt.Errorf("%w: s3:DeleteObjects %s: %s", ErrAWS, bucket, apiMessage(err))
		}
	}
	return nil
}
