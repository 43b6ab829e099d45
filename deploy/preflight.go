package deploy

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-containerregistry/pkg/name"
	"golang.org/x/sync/errgroup"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/errcode"
)

// Refusals of the preflight: what the account holds makes a deploy
// impossible or harmful, found before anything changes.
var (
	// ErrForeignStack: a stack of the droplet's name exists and was not
	// made by this droplet (no assemble:droplet tag naming it).
	ErrForeignStack = errcode.New("foreign_stack", "stack not made by this droplet",
		"if the stack is meant to be this droplet's from now on, adopt it (Options.Adopt ID); else rename the droplet's stack")
	// ErrRepository: an ECR repository deploy pushes an image to does not
	// exist or cannot be read with that account's credentials.
	ErrRepository = errcode.New("repository_unusable", "image repository missing or unusable",
		"create the ECR repository in the registry's account and region (cdk bootstrap makes CDK's), or use credentials that may read it")
	// ErrBucket: a bucket deploy writes to does not exist or cannot be
	// used with these credentials.
	ErrBucket = errcode.New("bucket_unusable", "bucket missing or unusable",
		"create the bucket in the droplet's account and region (or name another one), or use credentials that may write to it")
)

// preflightPass is what one preflight's kinds gather: the stack owners
// asked (in g), the regions needing the staging bucket, the buckets
// named, and the refusals (fail).
type preflightPass struct {
	r             *runner
	ctx           context.Context
	g             *errgroup.Group
	fail          func(error)
	adopt         map[string]bool
	staging       map[[2]string]*clients // account and region that need the staging bucket
	buckets       map[[3]string][]string
	bucketClients map[[3]string]*clients
	repos         map[[3]string][]string // ECR account, region and repository: the image droplets
}

// preflight: the stack's name is one CloudFormation accepts, and a stack
// of that name was made by this droplet (or is adopted); a template too
// large to send inline needs the staging bucket in its region.
func (stackKind) preflight(p *preflightPass, d *droplet) {
	name := str(d.props, "stackName")
	if strings.Contains(name, KnownAfterDeploy) {
		return // made by a droplet of this run: checked in its own step
	}
	if err := checkStackName(d, name); err != nil {
		p.fail(err)
		return
	}
	if p.r.src.sizes[str(d.props, "template")] > MaxTemplateBody && p.r.opts.StagingBucket != "" {
		p.staging[[2]string{d.account, d.region}] = d.aws()
	}
	p.g.Go(func() error {
		if err := p.r.owned(p.ctx, d, name, p.adopt[d.id]); err != nil {
			p.fail(err)
		}
		return nil
	})
}

// preflight: the bucket the objects go to exists (one made by a droplet
// of this run is checked in its own step).
func (objectKind) preflight(p *preflightPass, d *droplet) {
	b := str(d.props, "bucketName")
	if b == "" || strings.Contains(b, KnownAfterDeploy) {
		return
	}
	k := [3]string{d.account, d.region, b}
	p.buckets[k] = append(p.buckets[k], d.id)
	p.bucketClients[k] = d.aws()
}

// imagePreflight: the ECR repository an image goes to exists (one made by
// a droplet of this run is checked in its own step).
// refOf is where the kind pushes.
func imagePreflight(p *preflightPass, d *droplet, refOf func(*droplet) (name.Tag, error)) {
	ref, err := refOf(d)
	if err != nil {
		p.fail(&DropletError{Droplet: d.id, Err: err})
		return
	}
	if m := ecrHostRE.FindStringSubmatch(ref.RegistryStr()); m != nil && !strings.Contains(ref.String(), KnownAfterDeploy) {
		account, _, _ := strings.Cut(ref.RegistryStr(), ".")
		k := [3]string{account, m[2], ref.RepositoryStr()}
		p.repos[k] = append(p.repos[k], d.id)
	}
}

func (k imageKind) preflight(p *preflightPass, d *droplet) { imagePreflight(p, d, k.ref) }
func (k buildKind) preflight(p *preflightPass, d *droplet) { imagePreflight(p, d, k.ref) }

// preflight checks what only the account can tell, before the first
// change, for every targeted droplet at once (up to Concurrency calls at a
// time), and returns every refusal:
//   - each stack name, once references to droplets outside the selection
//     are read, is one CloudFormation accepts;
//   - no two stack droplets of the assembly name one stack in one account
//     and region, once unknown-account and unknown-region are the caller's;
//   - a stack that exists under a targeted droplet's name was made by that
//     droplet (its assemble:droplet tag names it), unless Options.Adopt
//     names the droplet;
//   - the staging bucket exists, in each region where a template needs it;
//   - every bucket a file or directory droplet names (fixed, not made by a
//     droplet deployed in this run) exists;
//   - every ECR repository an image or build droplet pushes to exists
//     (asked with the credentials of the registry's account and region).
//
// A deploy (not a plan) then stages the templates that need it, each
// once: the staging bucket is written before any stack changes, so a
// bucket that cannot be written stops the deploy there.
func (r *runner) preflight(ctx context.Context, all map[string]*droplet, ds []*droplet) error {
	var errs []error
	var mu sync.Mutex
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	adopt := map[string]bool{}
	for _, id := range r.opts.Adopt {
		spec := r.src.manifest.Droplets[id]
		if spec == nil || !isStackType(spec.Type) {
			errs = append(errs, fmt.Errorf("%w: adopt %s: the assembly holds no stack droplet %s", ErrParameter, id, id))
			continue
		}
		adopt[id] = true
	}
	// One stack, one droplet: across the whole assembly, environments
	// resolved as deploy resolves them.
	dups := assembly.DuplicateStacks(r.src.manifest, func(id string) (string, string, bool) {
		if d := all[id]; d != nil {
			return d.account, d.region, true
		}
		env, err := r.sc.environment(r.src.manifest.Droplets[id])
		if err != nil || env.Protocol != "aws" {
			return "", "", false
		}
		if env.Account == assembly.UnknownAccount {
			env.Account = r.account
		}
		if env.Region == assembly.UnknownRegion {
			env.Region = r.creds.region()
		}
		return env.Account, env.Region, true
	})
	for _, k := range sortedStackKeys(dups) {
		ids := dups[k]
		errs = append(errs, dropletErr(ids[1], assembly.ErrDuplicateStack, "stack %s is also droplet %s's: each stack droplet needs its own stackName in one account and region", k, ids[0]))
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.opts.Concurrency)
	// Buckets are looked at with the clients of the droplets' own
	// account and region.
	pass := &preflightPass{r: r, ctx: gctx, g: g, fail: fail, adopt: adopt,
		staging: map[[2]string]*clients{}, buckets: map[[3]string][]string{}, bucketClients: map[[3]string]*clients{}, repos: map[[3]string][]string{}}
	staging, buckets, bucketClients, repos := pass.staging, pass.buckets, pass.bucketClients, pass.repos
	for _, d := range ds {
		props, _, err := resolve(d.id, d.spec.Properties, r.lookup)
		if err != nil {
			fail(err)
			continue
		}
		d.setProps(props)
		d.kind.preflight(pass, d)
	}
	for k, ids := range repos {
		g.Go(func() error {
			cl, err := r.creds.reach(gctx, k[0], k[1], forImages)
			if err != nil {
				for _, id := range ids {
					fail(&DropletError{Droplet: id, Err: err})
				}
				return nil
			}
			if why := repositoryProblem(gctx, cl, k[0], k[2]); why != "" {
				sort.Strings(ids)
				for _, id := range ids {
					fail(dropletErr(id, ErrRepository, "ECR repository %s in aws://%s/%s: %s", k[2], k[0], k[1], why))
				}
			}
			return nil
		})
	}
	for k, cl := range staging {
		g.Go(func() error {
			if why := bucketProblem(gctx, cl, r.opts.StagingBucket); why != "" {
				fail(fmt.Errorf("%w: staging bucket %s (for templates over %d bytes) in aws://%s/%s: %s", ErrBucket, r.opts.StagingBucket, MaxTemplateBody, k[0], k[1], why))
			}
			return nil
		})
	}
	for k, ids := range buckets {
		g.Go(func() error {
			if why := bucketProblem(gctx, bucketClients[k], k[2]); why != "" {
				sort.Strings(ids)
				for _, id := range ids {
					fail(dropletErr(id, ErrBucket, "bucket %s in %s: %s", k[2], k[1], why))
				}
			}
			return nil
		})
	}
	g.Wait()
	if ctx.Err() != nil {
		return fmt.Errorf("%w: during the checks, before anything changed", ErrInterrupted)
	}
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return dropletOf(errs[i]) < dropletOf(errs[j]) })
		return errors.Join(errs...)
	}
	if r.opts.Plan || r.sc.approveOnce {
		// A matrix's runs are approved together, then staged
		// (matrix.approve).
		return nil
	}
	// Every check passed: the changes approved (approval.go), before
	// the first write.
	if _, err := r.approve(ctx, ds); err != nil {
		return err
	}
	return r.stageTemplates(ctx, ds)
}

// stageTemplates stages the large templates: the first writes, once the
// changes are approved.
func (r *runner) stageTemplates(ctx context.Context, ds []*droplet) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.opts.Concurrency)
	for _, d := range ds {
		if _, ok := d.kind.(stackKind); !ok || r.src.sizes[str(d.props, "template")] <= MaxTemplateBody {
			continue
		}
		g.Go(func() error {
			in, err := stackKind{}.input(d)
			if err == nil {
				_, err = in.stage(gctx, d)
			}
			if err != nil {
				return &DropletError{Droplet: d.id, Err: err}
			}
			return nil
		})
	}
	return g.Wait()
}

// owned refuses a stack that exists under the droplet's name and was not
// made by it, unless adopt.
func (r *runner) owned(ctx context.Context, d *droplet, name string, adopt bool) error {
	s, err := describeStack(ctx, d.aws().cfn, name)
	if err != nil {
		return &DropletError{Droplet: d.id, Err: err}
	}
	return foreignStack(d, s, name, adopt)
}

// foreignStack refuses the described stack s (nil: none) when it was not
// made by the droplet, unless adopt: the one rule of the preflight and of
// the droplet's own step (where a stack name made by a droplet of the same
// run is known first, and where a stack made since the preflight is seen).
func foreignStack(d *droplet, s *cfntypes.Stack, name string, adopt bool) error {
	if s == nil || s.StackStatus == cfntypes.StackStatusDeleteComplete || adopt {
		return nil
	}
	if owner := tagValue(s.Tags, TagDroplet); owner != d.id {
		why := "it has no " + TagDroplet + " tag"
		if owner != "" {
			why = fmt.Sprintf("its %s tag names droplet %s", TagDroplet, owner)
		}
		return dropletErr(d.id, ErrForeignStack, "stack %s (%s) exists in aws://%s/%s and was not made by this droplet: %s; adopt it to deploy over it", name, s.StackStatus, d.account, d.region, why)
	}
	return nil
}

// adopts reports whether Options.Adopt names the droplet.
func (r *runner) adopts(id string) bool {
	for _, a := range r.opts.Adopt {
		if a == id {
			return true
		}
	}
	return false
}

// checkStackName refuses a name CloudFormation does not accept.
func checkStackName(d *droplet, name string) error {
	if !assembly.ValidStackName(name) {
		return dropletErr(d.id, assembly.ErrStackName, "stack name %q is not one CloudFormation accepts: a letter, then letters, digits and hyphens (-), at most 128 characters", name)
	}
	return nil
}

// bucketProblem says why the bucket cannot be used ("" when it can):
// HeadBucket in the region.
func bucketProblem(ctx context.Context, cl *clients, bucket string) string {
	_, err := cl.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
	if err == nil {
		return ""
	}
	switch apiCode(err) {
	case "NotFound", "NoSuchBucket", "404":
		return "it does not exist"
	case "Forbidden", "AccessDenied", "403":
		return "these credentials may not use it (403 Forbidden)"
	case "MovedPermanently", "301":
		return "it is in another region"
	}
	return "s3:HeadBucket: " + apiMessage(err)
}

// repositoryProblem says why the ECR repository cannot be pushed to (""
// when it can): ecr:DescribeRepositories in the registry's region.
func repositoryProblem(ctx context.Context, cl *clients, account, repo string) string {
	_, err := cl.ecr.DescribeRepositories(ctx, &ecr.DescribeRepositoriesInput{RegistryId: aws.String(account), RepositoryNames: []string{repo}})
	if err == nil {
		return ""
	}
	switch apiCode(err) {
	case "RepositoryNotFoundException":
		return "it does not exist"
	case "AccessDeniedException", "403":
		return "these credentials may not use it (access denied)"
	}
	return "ecr:DescribeRepositories: " + apiMessage(err)
}

func tagValue(tags []cfntypes.Tag, key string) string {
	for _, t := range tags {
		if aws.ToString(t.Key) == key {
			return aws.ToString(t.Value)
		}
	}
	return ""
}

func isStackType(typ string) bool {
	k, _ := kindOf(typ)
	_, ok := k.(stackKind)
	return ok
}

func sortedStackKeys(m map[assembly.StackKey][]string) []assembly.StackKey {
	ks := make([]assembly.StackKey, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return m[ks[i]][0] < m[ks[j]][0] })
	return ks
}

// dropletOf is the droplet an error names ("" for none).
func dropletOf(err error) string {
	var de *DropletError
	if errors.As(err, &de) {
		return de.Droplet
	}
	return ""
}
