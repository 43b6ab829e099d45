package deploy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/go-containerregistry/pkg/authn"
	"golang.org/x/sync/semaphore"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/trust"
)

// Method is how stacks are deployed.
type Method string

const (
	// ChangeSet creates a change set, then executes it (the default).
	ChangeSet Method = "change-set"
	// Direct calls CreateStack or UpdateStack (cdk deploy --method=direct).
	Direct Method = "direct"
)

// DefaultConcurrency is how many droplets deploy at once by default.
const DefaultConcurrency = 4

// MaxTemplateBody is the largest template CloudFormation takes inline;
// a larger one is uploaded to the staging bucket first.
const MaxTemplateBody = 51200

// Options tune Deploy and Status. The zero value deploys everything with
// change sets, four droplets at a time.
type Options struct {
	// AWS is the SDK configuration; nil loads the default one
	// (config.LoadDefaultConfig).
	AWS *aws.Config
	// Drift runs CloudFormation's drift detection on each stack Status
	// compares (DropletStatus.Drift).
	Drift bool
	// NoExecute creates each changed stack's change set and leaves it,
	// not executed (cdk deploy --no-execute): the droplet's outcome is
	// ChangeSetCreated. It needs Method ChangeSet.
	NoExecute bool
	// NoRollback keeps what a failed stack operation made, for a person
	// to look at (DisableRollback; cdk deploy --no-rollback).
	NoRollback bool
	// Region and Profile choose the configuration's region and shared
	// profile, as AWS_REGION and AWS_PROFILE do (--region, --profile).
	Region, Profile string
	// APIOptions are added to every AWS client (a Counter's Middleware).
	APIOptions []func(*middleware.Stack) error
	// Parameters supply stack parameters: "Droplet.Name" to value. Each
	// must name a parameter the droplet's template declares and that the
	// signer left open (a `missing` entry of the manifest) or that
	// Settable names; every `missing` stack parameter of a targeted
	// droplet needs one.
	Parameters map[string]string
	// Settable names the stack parameters ("Droplet.Name") a deployer may
	// set with Parameters beyond the `missing` ones, overriding the signed
	// value or the template's Default (a policy file's
	// deployer-parameters).
	Settable []string
	// Only limits the droplets deployed to these logical IDs (their
	// references to others are read from what is deployed).
	Only []string
	// Concurrency is how many droplets deploy at once (default 4).
	Concurrency int
	// Method is how stacks are deployed (default ChangeSet).
	Method Method
	// StagingBucket receives templates over MaxTemplateBody bytes.
	StagingBucket string
	// Capabilities granted to stacks: CAPABILITY_IAM, CAPABILITY_NAMED_IAM,
	// CAPABILITY_AUTO_EXPAND (or IAM, NAMED_IAM, AUTO_EXPAND).
	Capabilities []string
	// Force deploys droplets that carry `error` metadata.
	Force bool
	// Adopt names the stack droplets that may deploy over a stack of
	// their name that they did not make (no assemble:droplet tag naming
	// them); any other such stack is refused before anything changes.
	Adopt []string
	// Plan changes nothing: it shows what a deploy would do.
	Plan bool
	// Prune deletes the objects under a directory droplet's keyPrefix
	// that no droplet of the assembly deploys (never by default).
	Prune bool
	// Progress, when set, is told what happens, one call at a time.
	Progress func(Event)
	// Notify, when set, is given each droplet's warning and error metadata
	// before anything is deployed (the spec: runtimes SHOULD surface them).
	Notify func(Notice)
	// Keychain authenticates to registries other than ECR (default
	// authn.DefaultKeychain, the Docker credential store).
	Keychain authn.Keychain
	// Transport carries registry traffic (default http.DefaultTransport);
	// plain HTTP is refused except to a loopback host.
	Transport http.RoundTripper
	// PollInterval is how often a stack operation is polled (default 2s;
	// the first poll is immediate).
	PollInterval time.Duration
	// DockerAvailable reports whether a Docker engine answers (default:
	// `docker version` succeeds); docker-build droplets need one.
	DockerAvailable func(ctx context.Context) bool
	// RequireApproval is which changes need approval before Deploy makes
	// them (default DefaultApproval, broadening): Deploy runs Diff first
	// and, when anything needs approval, calls Approve, or refuses with
	// ErrApprovalRequired when Approve is nil. Plan asks nothing.
	RequireApproval Approval
	// Approve is asked to approve the diff; reasons say what needs
	// approval. An error stops the deploy before any change.
	Approve func(ctx context.Context, diff *DiffResult, reasons []string) error
	// Target names the manifest's target (stage) to deploy: its values,
	// tags, role and environments. An assembly that declares targets needs
	// one; one that declares none takes none.
	Target string
	// RoleARN is the role assumed in an account the caller's credentials
	// are not in (before the target's deployRole and the CDK bootstrap
	// roles); ${AWS::AccountId} and ${AWS::Region} stand for the droplet's.
	RoleARN string
	// Qualifier is the CDK bootstrap qualifier of the bootstrap roles
	// (default DefaultQualifier).
	Qualifier string
	// MaxFailures is how many account/region pairs of a target may fail
	// before the pairs not started yet are left unstarted (default 0: the
	// first failure stops the rest).
	MaxFailures int
}

// An Event is a line of progress about one droplet.
type Event struct {
	Droplet string `json:"droplet"`
	// Environment is the account/region pair, in a target of several.
	Environment string `json:"environment,omitempty"`
	Message     string `json:"message"`
	// Time is when it happened.
	Time time.Time `json:"time"`
}

// Outcome is what happened to a droplet.
type Outcome string

// Outcomes.
const (
	Created     Outcome = "created"     // a stack was created
	Updated     Outcome = "updated"     // a stack was updated (or extra objects pruned)
	Uploaded    Outcome = "uploaded"    // objects were uploaded
	Pushed      Outcome = "pushed"      // an image was pushed
	Unchanged   Outcome = "unchanged"   // what is deployed is already this
	Planned     Outcome = "planned"     // a plan: see Actions
	Failed      Outcome = "failed"      // see Error
	NotStarted  Outcome = "not-started" // a dependency failed, or interrupted first
	Interrupted Outcome = "interrupted" // in flight when interrupted
	Excluded    Outcome = "excluded"    // left out by Only
	// Deployed sums up a pair of a target's matrix whose droplets all
	// deployed or were already so (Result.Outcome).
	Deployed Outcome = "deployed"
	// ChangeSetCreated: a change set was made and left (NoExecute).
	ChangeSetCreated Outcome = "change-set-created"
)

// A Change is one resource change of a stack's change set (a plan).
type Change struct {
	Action      string `json:"action"`
	LogicalID   string `json:"logicalId"`
	Type        string `json:"type"`
	Replacement string `json:"replacement,omitempty"`
}

// A DropletResult is what deploy did, or would do, with one droplet.
type DropletResult struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	// Kind is the droplet's kind as the manifest names it (its class,
	// "StackDroplet": droplets.KindName), Alias its short name in
	// assembly.yaml ("stack"), which the text output shows.
	Kind        string  `json:"kind,omitempty"`
	Alias       string  `json:"alias,omitempty"`
	Environment string  `json:"environment"`
	Region      string  `json:"region,omitempty"`
	Outcome     Outcome `json:"outcome"`
	// Actions says in words what was or would be done, in order.
	Actions []string `json:"actions"`
	// Changes are a plan's change set contents (stacks).
	Changes []Change `json:"changes,omitempty"`
	// KnownAfterDeploy lists the references ("Id.attr") a plan cannot
	// resolve before the droplets they come from are deployed.
	KnownAfterDeploy []string `json:"knownAfterDeploy,omitempty"`
	// Attributes are the droplet's output attributes once deployed.
	Attributes map[string]string `json:"attributes,omitempty"`
	// Seconds is how long its step took (a deploy).
	Seconds float64 `json:"seconds,omitempty"`
	Err     error   `json:"-"`

	mu sync.Mutex
}

func (r *DropletResult) action(format string, args ...any) {
	r.mu.Lock()
	r.Actions = append(r.Actions, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

// A Notice is a droplet's warning or error metadata, shown before deploying.
type Notice struct {
	Droplet string `json:"droplet"`
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// A Result is what Deploy did (or, with Plan, would do).
type Result struct {
	SHA256  digest.Digest `json:"sha256"`
	Account string        `json:"account,omitempty"`
	Plan    bool          `json:"plan"`
	// Order is the deploy order of the targeted droplets.
	Order    []string         `json:"order"`
	Droplets []*DropletResult `json:"droplets"`
	Notices  []Notice         `json:"notices"`
	// InFlight names the droplets whose step was under way when the
	// context was canceled.
	InFlight []string `json:"inFlight,omitempty"`
	// Target is the target deployed ("" when the assembly has none).
	Target string `json:"target,omitempty"`
	// Environment is the account/region pair of a target's matrix this
	// result is about (in Pairs).
	Environment string `json:"environment,omitempty"`
	// Pairs are the results of a target with several account/region
	// pairs, in the target's order; the droplets above are then those
	// with an environment of their own, deployed once before the pairs.
	Pairs []*Result `json:"pairs,omitempty"`
	// Error is why this pair failed or was not started (in Pairs).
	Error string `json:"error,omitempty"`
}

// Outcome sums up one pair of a target's matrix (an element of Pairs) or
// a whole result: Failed when a droplet failed or was interrupted, or the
// pair failed after a droplet started; NotStarted when the pair was
// refused or stopped before any droplet started; Planned for a plan;
// otherwise Deployed.
func (r *Result) Outcome() Outcome {
	started := false
	for _, d := range r.Droplets {
		switch d.Outcome {
		case Failed, Interrupted:
			return Failed
		case NotStarted, Excluded, "":
		default:
			started = true
		}
	}
	switch {
	case r.Error != "" && started:
		return Failed
	case r.Error != "" || (!started && len(r.Order) > 0):
		return NotStarted
	case r.Plan:
		return Planned
	}
	return Deployed
}

// Err is why the result failed: its first droplet's error, else its
// Error; nil when it has neither.
func (r *Result) Err() error {
	for _, d := range r.Droplets {
		if d.Err != nil {
			return d.Err
		}
	}
	if r.Error != "" {
		return errors.New(r.Error)
	}
	return nil
}

// Droplet returns the result of the droplet id, or nil.
func (r *Result) Droplet(id string) *DropletResult {
	for _, d := range r.Droplets {
		if d.ID == id {
			return d
		}
	}
	return nil
}

// A droplet is one droplet being deployed, planned or compared.
type droplet struct {
	id      string
	spec    *assembly.Droplet
	kind    dropletKind
	alias   string
	account string
	region  string
	cl      *clients       // the account and region's (credentials.reach)
	props   map[string]any // resolved
	unknown []string       // a plan's references not known yet
	res     *DropletResult
	run     *runner
	doing   atomic.Pointer[string] // the last progress message: what it does
	// deployedBy is, for Status, the SHA-256 of the assembly that
	// deployed what runs, when it is not this one.
	deployedBy digest.Digest
}

func (d *droplet) progress(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	d.doing.Store(&msg)
	d.run.progress(Event{Droplet: d.id, Message: msg, Time: time.Now().UTC()})
}

// aws is the clients of the droplet's own account and region, reached
// before anything changed.
func (d *droplet) aws() *clients { return d.cl }

// setProps sets the resolved properties, as its kind adjusts them
// (dropletKind.resolved).
func (d *droplet) setProps(props map[string]any) {
	d.props = props
	d.kind.resolved(d)
}

// runner is one Deploy or Status.
type runner struct {
	src     *Source
	opts    Options
	creds   *credProvider
	account string
	// target is the chosen target (nil when the manifest declares none),
	// pair the environment its environment-agnostic droplets take.
	target *assembly.Target
	pair   string
	sc     *scope
	mu     sync.Mutex // serializes Progress

	attrMu sync.Mutex
	attrs  map[string]map[string]string // deployed (or current) attributes

	memOnce sync.Once
	mem     *semaphore.Weighted // the bytes uploads may hold (uploadMemory)

	staged sync.Map // staging key -> template URL, staged by this deploy

	// forStatus: a Status, which needs none of a deploy's own
	// prerequisites (a staging bucket, a Docker engine).
	forStatus bool
}

// uploadMemory bounds the memory of the run's uploads together.
func (r *runner) uploadMemory() *semaphore.Weighted {
	r.memOnce.Do(func() { r.mem = semaphore.NewWeighted(uploadMemory) })
	return r.mem
}

func (r *runner) progress(e Event) {
	if r.opts.Progress == nil {
		return
	}
	if r.sc != nil && r.sc.include != nil {
		e.Environment = r.sc.pair // one pair of a matrix
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opts.Progress(e)
}

func (r *runner) setAttrs(id string, a map[string]string) {
	r.attrMu.Lock()
	r.attrs[id] = a
	r.attrMu.Unlock()
}

func (r *runner) lookup(id, attr string) (string, bool, bool) {
	if r.target != nil && id == assembly.TargetDroplet && r.src.manifest.IsTargetReference(assembly.Reference{Droplet: id, Attribute: attr}) {
		v, ok := r.target.Values[attr]
		return v, true, ok
	}
	r.attrMu.Lock()
	defer r.attrMu.Unlock()
	a, known := r.attrs[id]
	if !known {
		return "", false, false
	}
	v, ok := a[attr]
	return v, true, ok
}

// prepare runs every check that needs no change: targets, deployers,
// environments, metadata, parameters and `missing`, the caller's account,
// and the attributes of droplets referenced but not targeted. It returns
// the targeted droplets in deploy order.
func prepare(ctx context.Context, src *Source, opts Options, res *Result, forStatus bool, sc *scope) (*runner, []*droplet, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if err := opts.Check(); err != nil {
		return nil, nil, err
	}
	if opts.Method == "" {
		opts.Method = ChangeSet
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 2 * time.Second
	}
	r := &runner{src: src, opts: opts, attrs: map[string]map[string]string{}, forStatus: forStatus, target: sc.target, pair: sc.pair, sc: sc}
	m := src.manifest
	order := src.order
	if order == nil {
		order = m.IDs()
	}
	targeted := map[string]bool{}
	var errs []error
	if len(opts.Only) > 0 {
		for _, id := range opts.Only {
			if m.Droplets[id] == nil {
				errs = append(errs, fmt.Errorf("%w: Options.Only %s: the assembly holds %s", ErrOnly, id, strings.Join(m.IDs(), ", ")))
				continue
			}
			targeted[id] = true
		}
	} else {
		for id := range m.Droplets {
			targeted[id] = true
		}
	}
	var ds []*droplet
	for _, id := range order {
		if sc.include != nil && !sc.include(id) {
			delete(targeted, id) // another run's (a target's other share)
			continue
		}
		spec := m.Droplets[id]
		dr := &DropletResult{ID: id, Type: spec.Type, Environment: spec.Environment, Actions: []string{}}
		res.Droplets = append(res.Droplets, dr)
		kind, alias := kindOf(spec.Type)
		dr.Kind, dr.Alias = droplets.KindName(spec.Type), alias
		if !targeted[id] {
			dr.Outcome = Excluded
			continue
		}
		res.Order = append(res.Order, id)
		for _, name := range slices.Sorted(maps.Keys(spec.Metadata)) {
			md := spec.Metadata[name]
			if md.Kind != "warning" && md.Kind != "error" {
				continue
			}
			msg, ok := md.Value.(string)
			if !ok {
				msg = fmt.Sprint(md.Value)
			}
			res.Notices = append(res.Notices, Notice{Droplet: id, Name: name, Kind: md.Kind, Message: msg})
			if md.Kind == "error" && !opts.Force && !forStatus {
				errs = append(errs, dropletErr(id, ErrMetadataError, "metadata %s: %s (Options.Force deploys it anyway)", name, msg))
			}
		}
		if kind == nil && forStatus {
			// Status compares what it can; this one it cannot.
			dr.Err = dropletErr(id, ErrUndeployable, "no deployer for its type %s: it cannot be compared", spec.Type)
			continue
		}
		if kind == nil {
			what := "no deployer for its type " + spec.Type
			if alias != "" {
				what = fmt.Sprintf("no deployer for its type %s (%s)", spec.Type, alias)
			}
			errs = append(errs, dropletErr(id, ErrUndeployable, "%s: leave it out with Options.Only, naming the droplets to deploy", what))
			continue
		}
		env, err := sc.environment(spec)
		if err != nil || env.Protocol != "aws" {
			errs = append(errs, dropletErr(id, ErrEnvironment, "environment %s: deploy supports aws://ACCOUNT/REGION only", spec.Environment))
			continue
		}
		dr.Environment = env.String()
		if err := kind.check(r, id, spec); err != nil {
			if forStatus {
				// Status says, for this droplet, that it cannot judge it.
				dr.Err = &DropletError{Droplet: id, Err: err}
				continue
			}
			errs = append(errs, &DropletError{Droplet: id, Err: err})
			continue
		}
		d := &droplet{id: id, spec: spec, kind: kind, alias: alias, account: env.Account, region: env.Region, res: dr, run: r}
		ds = append(ds, d)
	}
	if !forStatus {
		errs = append(errs, checkParameters(src, targeted, opts.Parameters, opts.Settable)...)
	}
	if opts.Notify != nil {
		for _, n := range res.Notices {
			opts.Notify(n)
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	if sc.creds == nil {
		var err error
		if sc.creds, err = newCredentials(ctx, &opts, sc.role()); err != nil {
			return nil, nil, err
		}
	}
	r.creds = sc.creds
	r.account = r.creds.caller
	res.Account = r.account
	for _, d := range ds {
		if errs = append(errs, r.place(d)...); d.res != nil {
			d.res.Region = d.region
			if d.account != assembly.UnknownAccount && d.region != assembly.UnknownRegion {
				d.res.Environment = "aws://" + d.account + "/" + d.region
			}
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	// Every droplet's calls run in its own account and region: each is
	// reached (the caller's own credentials, or a role) before any change.
	if errs = r.creds.reachAll(ctx, ds); len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	// Droplets needed but not targeted are read from what is deployed, in
	// their own account and region (nothing changes).
	if errs := r.readOutside(ctx, ds, targeted); len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	if !forStatus {
		all := map[string]*droplet{}
		for _, d := range ds {
			all[d.id] = d
		}
		if err := r.preflight(ctx, all, ds); err != nil {
			return nil, nil, err
		}
	}
	return r, ds, nil
}

// Check is the verdict on the options Deploy takes as they are (the
// others are judged against the assembly): Method is "", ChangeSet or
// Direct; NoExecute needs ChangeSet; MaxFailures is 0 or more. Its error
// is an *errcode.FieldError wrapping ErrOption. Deploy checks; a caller
// may check first, to refuse before it reads anything.
func (o Options) Check() error {
	switch o.Method {
	case "", ChangeSet, Direct:
	default:
		return &errcode.FieldError{Field: "Method", Value: fmt.Sprintf("%q", o.Method), Reason: "want change-set or direct", Err: ErrOption}
	}
	if o.NoExecute && o.Method == Direct {
		return &errcode.FieldError{Field: "Method", Value: string(o.Method), Reason: "NoExecute leaves change sets: it needs change-set", Err: ErrOption}
	}
	if o.MaxFailures < 0 {
		return &errcode.FieldError{Field: "MaxFailures", Value: strconv.Itoa(o.MaxFailures), Reason: "at least 0", Err: ErrOption}
	}
	return nil
}

// Run deploys the assembly trust.Open verified, as Deploy does, under the
// deploy section of the policy file it was verified with, if any
// (WithPolicy). This is what 'assemble deploy' does.
func Run(ctx context.Context, a *trust.Assembly, opts Options) (*Result, error) {
	o, err := opts.WithPolicy(a.Trust())
	if err != nil {
		return &Result{SHA256: a.Digest()}, err
	}
	return Deploy(ctx, FromAssembly(a), o)
}

// WithPolicy is o under the deploy section of t's policy file (none when
// t, its policy file or the section is nil; see Policy): its
// staging-bucket unless o names one, the capabilities either allows, its
// deployer-parameters unless o sets Settable, and its require-approval
// unless o sets RequireApproval. The section was checked as the file was
// read (trust.ReadPolicy); nothing is checked again here.
func (o Options) WithPolicy(t *trust.Trust) (Options, error) {
	if t == nil {
		return o, nil
	}
	p := PolicyOf(t.PolicyFile)
	if p == nil {
		return o, nil
	}
	if o.StagingBucket == "" {
		o.StagingBucket = p.StagingBucket
	}
	o.Capabilities = append(slices.Clip(o.Capabilities), p.Capabilities...)
	if o.Settable == nil {
		o.Settable = p.DeployerParameters
	}
	if o.RequireApproval == "" {
		o.RequireApproval = p.RequireApproval
	}
	return o, nil
}

// Deploy verifies nothing itself: src is what a verification gave. It runs
// every check (see the package documentation), then deploys the targeted
// droplets in dependency order, or, with opts.Plan, shows what it would
// do. The Result is returned even with an error: which droplets were
// deployed, which failed and why, which were not started.
func Deploy(ctx context.Context, src *Source, opts Options) (*Result, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	res := newResult(src, opts)
	if err := opts.Check(); err != nil {
		return res, err
	}
	name, t, err := chooseTarget(src, opts)
	if err != nil {
		return res, err
	}
	res.Target = name
	if pairs := targetPairs(src.manifest, t); len(pairs) > 1 {
		return res, deployMatrix(ctx, src, opts, res, t, pairs)
	}
	sc := &scope{target: t}
	if t != nil && len(t.Environments) > 0 {
		sc.pair = t.Environments[0]
	}
	return res, deployScope(ctx, src, opts, res, sc)
}

func newResult(src *Source, opts Options) *Result {
	return &Result{SHA256: src.SHA256, Plan: opts.Plan, Order: []string{}, Droplets: []*DropletResult{}, Notices: []Notice{}}
}

// deployScope deploys (or plans) one scope's droplets: prepare, then run.
func deployScope(ctx context.Context, src *Source, opts Options, res *Result, sc *scope) error {
	r, ds, err := prepare(ctx, src, opts, res, false, sc)
	if err != nil {
		markRefused(res, err)
		return err
	}
	if opts.Plan {
		return r.plan(ctx, ds, res)
	}
	return r.deploy(ctx, ds, res)
}

// markRefused records a refusal before any change: each targeted droplet
// is not started, with its own reason when it has one.
func markRefused(res *Result, err error) {
	for _, d := range res.Droplets {
		if d.Outcome == "" {
			d.Outcome = NotStarted
		}
	}
	for _, e := range flatten(err) {
		var de *DropletError
		if errors.As(e, &de) {
			if d := res.Droplet(de.Droplet); d != nil && d.Err == nil {
				d.Err = e
			}
		}
	}
}

// plan shows each droplet's steps, each once the droplets it depends on
// were planned (an unchanged one gives its attributes), Concurrency at a
// time; references to droplets that would change are known after deploy.
func (r *runner) plan(ctx context.Context, ds []*droplet, res *Result) error {
	return r.schedule(ctx, ds, res, false, func(ctx context.Context, d *droplet) error {
		props, unknown, err := resolve(d.id, d.spec.Properties, r.lookup)
		if err != nil {
			return err
		}
		d.setProps(props)
		d.unknown = unknown
		d.res.KnownAfterDeploy = unknown
		if err := d.kind.plan(ctx, d); err != nil {
			return err
		}
		d.res.Outcome = Planned
		return nil
	})
}

// deploy runs the droplets, each once its dependencies are deployed, up to
// Concurrency at a time. A failure stops the droplets that depend on it;
// the others go on. Canceling ctx starts no new step.
func (r *runner) deploy(ctx context.Context, ds []*droplet, res *Result) error {
	return r.schedule(ctx, ds, res, true, func(ctx context.Context, d *droplet) error {
		start := time.Now()
		defer func() { d.res.Seconds = time.Since(start).Round(time.Millisecond).Seconds() }()
		outcome, attrs, err := r.deployOne(ctx, d)
		if err != nil {
			return err
		}
		d.res.Outcome, d.res.Attributes = outcome, attrs
		r.setAttrs(d.id, attrs)
		d.progress("%s", outcome)
		return nil
	})
}

// deployOne resolves the droplet's references from the deployed
// attributes, then deploys it.
func (r *runner) deployOne(ctx context.Context, d *droplet) (Outcome, map[string]string, error) {
	props, unknown, err := resolve(d.id, d.spec.Properties, r.lookup)
	if err != nil {
		return "", nil, err
	}
	if len(unknown) > 0 {
		return "", nil, dropletErr(d.id, ErrUnresolved, "%s not deployed", strings.Join(unknown, ", "))
	}
	d.setProps(props)
	d.progress("deploying (%s)", d.alias)
	outcome, attrs, err := d.kind.deploy(ctx, d)
	if err != nil {
		var de *DropletError
		if !errors.As(err, &de) {
			err = &DropletError{Droplet: d.id, Err: err}
		}
		return "", nil, err
	}
	return outcome, attrs, nil
}

// flatten lists the errors errors.Join joined (err itself otherwise).
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
