package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloud-assembly/assemble/deploy/review"
	"github.com/cloud-assembly/assemble/digest"
)

// DiffOptions tune Diff: Options (Only, Parameters, Concurrency, AWS...)
// and whether to ask CloudFormation for its own analysis.
type DiffOptions struct {
	Options
	// ChangeSet creates a change set per stack that changes, to read
	// CloudFormation's replacement verdicts, and deletes it after by its
	// ID (and the stack a change set of type CREATE made). Without it,
	// Diff only reads.
	ChangeSet bool
}

// Droplet diff states.
const (
	StateNew       = "new"       // nothing deployed yet
	StateChanged   = "changed"   // deployed, and a deploy would change it
	StateUnchanged = "unchanged" // deployed as the assembly has it
	StateExcluded  = "excluded"  // left out by Only
	StateFailed    = "failed"    // could not be compared: see Error
)

// A DiffResult is what a deploy of the assembly would change.
type DiffResult struct {
	// SHA256 is the assembly under review.
	SHA256 digest.Digest `json:"sha256"`
	// Target is the manifest's target compared ("" when it has none).
	Target  string   `json:"target,omitempty"`
	Account string   `json:"account"`
	Regions []string `json:"regions"`
	// Deployed lists the assemblies (SHA-256) that deployed what runs now,
	// as their stacks' and objects' tags say.
	Deployed []digest.Digest `json:"deployed"`
	Droplets []*DropletDiff  `json:"droplets"`
	// Total droplets targeted; Changed of them change; Broadened of them
	// allow something new (their Security lists).
	Total     int `json:"total"`
	Changed   int `json:"changed"`
	Broadened int `json:"broadened"`
	// Environment is the account/region pair of a target's matrix this
	// diff is about (in Pairs); Account and Regions are then the pair's.
	Environment string `json:"environment,omitempty"`
	// Pairs are the diffs of a target with several account/region pairs,
	// in the target's order; Droplets above are then those with an
	// environment of their own, compared once, and the counts above are
	// the sums over them and every pair.
	Pairs []*DiffResult `json:"pairs,omitempty"`
	// Error is why this pair could not be compared (in Pairs).
	Error string `json:"error,omitempty"`
}

// jsonList is the set's members, sorted, never nil (JSON [], not null).
func jsonList(set map[string]bool) []string {
	return append([]string{}, slices.Sorted(maps.Keys(set))...)
}

// digestList is the set's digests, sorted, never nil (JSON [], not null).
func digestList(set map[digest.Digest]bool) []digest.Digest {
	out := slices.AppendSeq([]digest.Digest{}, maps.Keys(set))
	slices.SortFunc(out, func(a, b digest.Digest) int { return strings.Compare(a.Hex(), b.Hex()) })
	return out
}

func newDiffResult(src *Source) *DiffResult {
	return &DiffResult{SHA256: src.SHA256, Regions: []string{}, Deployed: []digest.Digest{}, Droplets: []*DropletDiff{}}
}

// A DropletDiff is what a deploy would change of one droplet.
type DropletDiff struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Kind        string `json:"kind,omitempty"`
	Alias       string `json:"alias,omitempty"`
	Environment string `json:"environment"`
	Region      string `json:"region,omitempty"`
	State       string `json:"state"`
	// DeployedSHA256 is the assembly that deployed what runs now.
	DeployedSHA256 digest.Digest     `json:"deployedSha256,omitzero"`
	StackName      string            `json:"stackName,omitempty"`
	Stack          *review.StackDiff `json:"stack,omitempty"`
	Objects        []ObjectChange    `json:"objects,omitempty"`
	Image          *ImageChange      `json:"image,omitempty"`
	// Pending lists the references ("Id.attr") known only after the
	// droplets they come from deploy.
	Pending []string `json:"pending,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	Err     error    `json:"-"`
}

// An ObjectChange is one S3 object a deploy would add or change (by its
// signed content's SHA-256), or one under a directory's prefix that the
// assembly does not hold (deploy deletes it only with Options.Prune).
type ObjectChange struct {
	URL       string `json:"url"`
	Action    string `json:"action"` // add, change, remove
	Size      int64  `json:"size,omitempty"`
	SHA256    string `json:"sha256,omitempty"`
	OldSHA256 string `json:"oldSha256,omitempty"`
}

// An ImageChange is an image tag a deploy would push.
type ImageChange struct {
	Ref       string `json:"ref"`
	Action    string `json:"action"` // add, change, unchanged
	Digest    string `json:"digest,omitempty"`
	OldDigest string `json:"oldDigest,omitempty"`
}

// Diff says what Deploy would change, droplet by droplet, after the same
// checks (see the package documentation): each stack's deployed template
// (GetTemplate), parameters, tags, settings and outputs against the
// signed ones, with the security changes (review.Broadening); each
// object's signed SHA-256 against S3's; each image's digest against the
// registry's. It only reads unless opts.ChangeSet. References to droplets
// that change are Pending. The DiffResult is returned with an error too.
func Diff(ctx context.Context, src *Source, opts DiffOptions) (*DiffResult, error) {
	res := &Result{SHA256: src.SHA256, Plan: true, Order: []string{}, Droplets: []*DropletResult{}, Notices: []Notice{}}
	out := newDiffResult(src)
	o := opts.Options
	o.Plan = true
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	name, t, err := chooseTarget(src, o)
	if err != nil {
		return out, err
	}
	out.Target = name
	if pairs := targetPairs(src.manifest, t); len(pairs) > 1 {
		return diffMatrix(ctx, src, o, res, out, t, pairs, opts.ChangeSet)
	}
	sc := &scope{target: t}
	if t != nil && len(t.Environments) > 0 {
		sc.pair = t.Environments[0]
	}
	r, ds, err := prepare(ctx, src, o, res, false, sc)
	if err != nil {
		refusedDiff(out, res)
		return out, err
	}
	return r.diff(ctx, ds, res, out, opts.ChangeSet)
}

// refusedDiff lists the droplets of a run refused before comparing.
func refusedDiff(out *DiffResult, res *Result) {
	for _, dr := range res.Droplets {
		out.Droplets = append(out.Droplets, &DropletDiff{ID: dr.ID, Type: dr.Type, Kind: dr.Kind, Alias: dr.Alias, Environment: dr.Environment, State: StateFailed, Err: dr.Err})
	}
}

// diff compares the droplets, each after those it depends on, up to
// Concurrency at a time.
func (r *runner) diff(ctx context.Context, ds []*droplet, res *Result, out *DiffResult, changeSet bool) (*DiffResult, error) {
	out.Account = r.account
	byID := map[string]*DropletDiff{}
	for _, dr := range res.Droplets {
		dd := &DropletDiff{ID: dr.ID, Type: dr.Type, Kind: dr.Kind, Alias: dr.Alias, Environment: dr.Environment, Region: dr.Region, State: StateExcluded}
		byID[dr.ID] = dd
		out.Droplets = append(out.Droplets, dd)
	}
	// The one scheduler (schedule.go): each droplet after those it
	// depends on, Concurrency at a time; a failure stops no other.
	r.schedule(ctx, ds, res, false, func(ctx context.Context, d *droplet) error {
		dd := byID[d.id]
		if err := r.diffOne(ctx, d, dd, changeSet); err != nil {
			var de *DropletError
			if !errors.As(err, &de) {
				err = &DropletError{Droplet: d.id, Err: err}
			}
			dd.State, dd.Err = StateFailed, err
			return err
		}
		return nil
	})
	for _, d := range ds {
		if dd := byID[d.id]; dd.State == StateExcluded && d.res.Err != nil {
			dd.State, dd.Err = StateFailed, d.res.Err // not started: interrupted
		}
	}
	regions, deployed := map[string]bool{}, map[digest.Digest]bool{}
	var errs []error
	for _, d := range ds {
		dd := byID[d.id]
		out.Total++
		regions[d.region] = true
		if !dd.DeployedSHA256.IsZero() {
			deployed[dd.DeployedSHA256] = true
		}
		switch dd.State {
		case StateNew, StateChanged:
			out.Changed++
		case StateFailed:
			errs = append(errs, dd.Err)
		}
		if dd.Stack != nil && dd.Stack.Broadened() {
			out.Broadened++
		}
	}
	out.Regions, out.Deployed = jsonList(regions), digestList(deployed)
	if ctx.Err() != nil {
		return out, fmt.Errorf("%w: %v", ErrInterrupted, ctx.Err())
	}
	return out, errors.Join(errs...)
}

// diffOne compares one droplet; its attributes are known to those that
// reference it when it does not change.
func (r *runner) diffOne(ctx context.Context, d *droplet, dd *DropletDiff, changeSet bool) error {
	props, unknown, err := resolve(d.id, d.spec.Properties, r.lookup)
	if err != nil {
		return err
	}
	d.setProps(props)
	d.unknown = unknown
	dd.Pending = unknown
	dd.Region = d.region
	return d.kind.diff(ctx, d, dd, changeSet)
}

func (k stackKind) diff(ctx context.Context, d *droplet, dd *DropletDiff, changeSet bool) error {
	r := d.run
	in, err := k.input(d)
	if err != nil {
		return err
	}
	dd.StackName = in.name
	tname := str(d.props, "template")
	tpl, err := review.Parse(tname, in.body)
	if err != nil {
		return err
	}
	next := &review.Stack{Template: tpl, Parameters: withDefaults(tpl, in.params), Tags: in.tags, Settings: map[string]string{}}
	c := d.aws().cfn
	s, err := describeStack(ctx, c, in.name)
	if err != nil {
		return err
	}
	var prev *review.Stack
	if s != nil {
		switch s.StackStatus {
		case cfntypes.StackStatusReviewInProgress:
			s = nil
		case cfntypes.StackStatusRollbackComplete:
			dd.Notes = append(dd.Notes, fmt.Sprintf("stack %s is ROLLBACK_COMPLETE (a failed creation): deploy deletes it, then creates it", in.name))
			s = nil
		}
	}
	if s != nil {
		if strings.HasSuffix(string(s.StackStatus), "_IN_PROGRESS") || strings.HasSuffix(string(s.StackStatus), "_FAILED") {
			dd.Notes = append(dd.Notes, fmt.Sprintf("stack %s is %s", in.name, s.StackStatus))
		}
		got, err := c.GetTemplate(ctx, &cloudformation.GetTemplateInput{StackName: s.StackId, TemplateStage: cfntypes.TemplateStageOriginal})
		if err != nil {
			return fmt.Errorf("%w: cloudformation:GetTemplate %s: %s", ErrAWS, in.name, apiMessage(err))
		}
		ptpl, err := review.Parse("the deployed template of stack "+in.name, []byte(aws.ToString(got.TemplateBody)))
		if err != nil {
			return err
		}
		prev = &review.Stack{Template: ptpl, Parameters: map[string]string{}, Tags: map[string]string{}, Settings: map[string]string{}, Outputs: map[string]string{}}
		for _, p := range s.Parameters {
			k, v := aws.ToString(p.ParameterKey), aws.ToString(p.ParameterValue)
			if v == "****" { // NoEcho: cannot be compared
				if nv, ok := next.Parameters[k]; ok {
					v = nv
				}
			}
			prev.Parameters[k] = v
		}
		for _, t := range s.Tags {
			prev.Tags[aws.ToString(t.Key)] = aws.ToString(t.Value)
		}
		for _, o := range s.Outputs {
			prev.Outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
		}
		dd.DeployedSHA256 = tagDigest(prev.Tags[TagSHA256])
	}
	// Settings: those the droplet sets.
	if in.set {
		next.Settings["terminationProtection"] = fmt.Sprint(in.protect)
		if prev != nil {
			prev.Settings["terminationProtection"] = fmt.Sprint(aws.ToBool(s.EnableTerminationProtection))
		}
	}
	if _, ok := d.props["notificationArns"]; ok {
		next.Settings["notificationArns"] = strings.Join(sorted(in.notify), ",")
		if prev != nil {
			prev.Settings["notificationArns"] = strings.Join(sorted(s.NotificationARNs), ",")
		}
	}
	if in.policy != nil {
		next.Settings["stackPolicy"] = compactJSON(in.policy)
		if prev != nil {
			sp, err := c.GetStackPolicy(ctx, &cloudformation.GetStackPolicyInput{StackName: s.StackId})
			if err != nil {
				return fmt.Errorf("%w: cloudformation:GetStackPolicy %s: %s", ErrAWS, in.name, apiMessage(err))
			}
			prev.Settings["stackPolicy"] = compactJSON([]byte(aws.ToString(sp.StackPolicyBody)))
		}
	}
	diff, err := review.DiffStack(prev, next, "assemble:")
	if err != nil {
		return &DropletError{Droplet: d.id, Err: err}
	}
	dd.Stack = diff
	switch {
	case prev == nil:
		dd.State = StateNew
	case diff.Changed():
		dd.State = StateChanged
	default:
		dd.State = StateUnchanged
		d.run.setAttrs(d.id, stackAttrs(s))
	}
	if changeSet && dd.State != StateUnchanged {
		return r.replacements(ctx, d, in, s, dd)
	}
	return nil
}

// replacements makes a change set to read CloudFormation's verdicts,
// then deletes it by its ID (and the stack, for a new one).
func (r *runner) replacements(ctx context.Context, d *droplet, in *stackInput, s *cfntypes.Stack, dd *DropletDiff) error {
	if len(d.unknown) > 0 {
		dd.Notes = append(dd.Notes, "no change set: its parameters use "+strings.Join(d.unknown, ", ")+", known after deploy")
		return nil
	}
	c := d.aws().cfn
	cleanup, err := in.stage(ctx, d)
	if err != nil {
		return err
	}
	defer cleanup()
	typ := cfntypes.ChangeSetTypeUpdate
	if s == nil {
		typ = cfntypes.ChangeSetTypeCreate
	}
	// What it made goes after, by ID (plancleanup.go): the change set,
	// and the review stack a CREATE change set made.
	var made madeChangeSet
	cs, _, err := createChangeSet(ctx, d, c, in, typ, &made)
	defer made.remove(context.WithoutCancel(ctx), d, c, typ == cfntypes.ChangeSetTypeCreate && s == nil)
	if err != nil {
		return err
	}
	if cs == nil {
		dd.Notes = append(dd.Notes, "CloudFormation's change set holds no resource changes")
		return nil
	}
	byID := map[string]int{}
	for i, rc := range dd.Stack.Resources {
		byID[rc.LogicalID] = i
	}
	for _, ch := range cs.Changes {
		rc := ch.ResourceChange
		if rc == nil {
			continue
		}
		id := aws.ToString(rc.LogicalResourceId)
		i, ok := byID[id]
		if !ok {
			// A change the templates do not show (a dynamic reference, a
			// nested stack): CloudFormation's word for it.
			dd.Stack.Resources = append(dd.Stack.Resources, review.ResourceChange{LogicalID: id, Type: aws.ToString(rc.ResourceType), Action: strings.ToLower(string(rc.Action))})
			i = len(dd.Stack.Resources) - 1
			byID[id] = i
		}
		dd.Stack.Resources[i].Replacement = string(rc.Replacement)
	}
	sort.SliceStable(dd.Stack.Resources, func(i, j int) bool { return dd.Stack.Resources[i].LogicalID < dd.Stack.Resources[j].LogicalID })
	return nil
}

// withDefaults adds, to the parameters given, the template's declared
// defaults for those not given: what the stack will run with.
func withDefaults(tpl review.Template, given map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range given {
		out[k] = v
	}
	decl, _ := tpl["Parameters"].(map[string]any)
	for name, v := range decl {
		if _, ok := out[name]; ok {
			continue
		}
		m, _ := v.(map[string]any)
		if def, ok := m["Default"]; ok {
			switch def := def.(type) {
			case string:
				out[name] = def
			case []any:
				var parts []string
				for _, e := range def {
					parts = append(parts, fmt.Sprint(e))
				}
				out[name] = strings.Join(parts, ",")
			default:
				out[name] = fmt.Sprint(def)
			}
		}
	}
	return out
}

func compactJSON(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return strings.TrimSpace(string(b))
	}
	c, _ := json.Marshal(v)
	return string(c)
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// maxListed bounds the keys read under a directory's prefix.
const maxListed = 10000

func (k objectKind) diff(ctx context.Context, d *droplet, dd *DropletDiff, _ bool) error {
	if diffAfterDeploy(d, dd) {
		return nil
	}
	r := d.run
	objs, err := k.objects(d)
	if err != nil {
		return err
	}
	defer releaseAll(objs)
	c := d.aws().s3
	changed, anyDeployed := false, false
	have := map[string]bool{}
	for _, o := range objs {
		have[o.key] = true
		head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.key)})
		if err != nil {
			switch apiCode(err) {
			case "NotFound", "NoSuchKey", "404", "NoSuchBucket":
				dd.Objects = append(dd.Objects, ObjectChange{URL: o.url(), Action: review.Add, Size: o.size, SHA256: o.hexSum()})
				changed = true
				continue
			}
			return fmt.Errorf("%w: s3:HeadObject %s: %s", ErrAWS, o.url(), apiMessage(err))
		}
		anyDeployed = true
		if sha := tagDigest(head.Metadata[MetaSHA256]); !sha.IsZero() && dd.DeployedSHA256.IsZero() {
			dd.DeployedSHA256 = sha
		}
		old := head.Metadata[MetaContentSHA256]
		// The verdict is deploy's own (objectmatch.go): what deploy would
		// upload is what changes.
		verdict, _, err := o.compare(ctx, c, forDeploy)
		if err != nil {
			return err
		}
		if verdict != "" {
			dd.Objects = append(dd.Objects, ObjectChange{URL: o.url(), Action: "change", Size: o.size, SHA256: o.hexSum(), OldSHA256: old})
			changed = true
		}
	}
	if prefix, ok := dirPrefix(k, d); ok {
		// The prefix is the droplet's (prune.go): objects under it that
		// the assembly does not hold; deploy deletes them only with Prune.
		extra, err := extraObjects(ctx, d, prefix, objs)
		if err != nil {
			return err
		}
		for _, key := range extra {
			dd.Objects = append(dd.Objects, ObjectChange{URL: "s3://" + objs[0].bucket + "/" + key, Action: review.Remove})
		}
		if len(extra) > 0 {
			what := plural(len(extra), "object") + " under the prefix not in the assembly"
			if r.opts.Prune {
				changed = true
				dd.Notes = append(dd.Notes, what+": deploy with prune deletes them")
			} else {
				dd.Notes = append(dd.Notes, what+": deploy leaves them (prune deletes them)")
			}
		}
	}
	switch {
	case !anyDeployed:
		dd.State = StateNew
	case changed:
		dd.State = StateChanged
	default:
		dd.State = StateUnchanged
	}
	d.run.setAttrs(d.id, k.attrs(d))
	return nil
}

func (k imageKind) diff(ctx context.Context, d *droplet, dd *DropletDiff, _ bool) error {
	if diffAfterDeploy(d, dd) {
		return nil
	}
	ref, digest, have, ok, err := k.compare(ctx, d)
	if err != nil {
		return err
	}
	ic := &ImageChange{Ref: ref.String(), Digest: digest.String()}
	switch {
	case !ok:
		ic.Action, dd.State = review.Add, StateNew
	case have != digest:
		ic.Action, ic.OldDigest, dd.State = "change", have.String(), StateChanged
	default:
		ic.Action, dd.State = "unchanged", StateUnchanged
	}
	dd.Image = ic
	d.run.setAttrs(d.id, imageAttrs(ref, digest))
	return nil
}

func (k buildKind) diff(ctx context.Context, d *droplet, dd *DropletDiff, _ bool) error {
	if diffAfterDeploy(d, dd) {
		return nil
	}
	attrs, ok, err := k.current(ctx, d)
	if err != nil {
		return err
	}
	ref, err := k.ref(d)
	if err != nil {
		return err
	}
	if ok {
		dd.State, dd.Image = StateUnchanged, &ImageChange{Ref: ref.String(), Action: "unchanged", Digest: strings.TrimPrefix(attrs["exactImageId"], ref.Context().Name()+"@")}
		d.run.setAttrs(d.id, attrs)
		return nil
	}
	dd.State, dd.Image = StateNew, &ImageChange{Ref: ref.String(), Action: review.Add}
	dd.Notes = append(dd.Notes, "built from "+str(d.props, "directory")+": its digest is known after the build")
	return nil
}

// Err is why a pair's diff failed: its first droplet's error, else its
// Error; nil when it has neither (as Result.Err).
func (d *DiffResult) Err() error {
	for _, dd := range d.Droplets {
		if dd.Err != nil {
			return dd.Err
		}
	}
	if d.Error != "" {
		return errors.New(d.Error)
	}
	return nil
}
