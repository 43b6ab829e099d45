package deploy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/droplets"
)

// Tags and metadata deploy sets on what it deploys.
const (
	// TagSHA256 is the .cloud file's SHA-256, in hex (tagDigest reads
	// it).
	TagSHA256 = "assemble:sha256"
	// TagDroplet is the droplet's logical ID.
	TagDroplet = "assemble:droplet"
)

// Templates and stack policies are read whole (they are sent as request
// parameters or staged whole): CloudFormation takes none larger than
// these, so neither is memory unbounded.
const (
	MaxTemplateSize = 1 << 20 // a template staged in S3 (TemplateURL)
	MaxStackPolicy  = 16384   // StackPolicyBody
)

// stackKind deploys CloudFormation stacks.
type stackKind struct{}

func init() { registerKind(droplets.StackType, stackKind{}) }

// resolved puts the target's tags on the stacks that take the target's
// environment (one with its own is shared by every target); the
// droplet's own tag of a key wins.
func (stackKind) resolved(d *droplet) {
	t := d.run.target
	if t == nil || len(t.Tags) == 0 || !agnostic(d.spec) {
		return
	}
	tags, _ := d.props["tags"].(map[string]any)
	merged := make(map[string]any, len(tags)+len(t.Tags))
	for k, v := range t.Tags {
		merged[k] = v
	}
	for k, v := range tags {
		merged[k] = v
	}
	d.props["tags"] = merged
}

func (stackKind) purpose() purpose { return forStacks }

// usable: a stack is judged by current alone (a complete stack of its
// name).
func (stackKind) usable(ctx context.Context, d *droplet) ([]string, error) { return nil, nil }

func (stackKind) check(r *runner, id string, spec *assembly.Droplet) error {
	p := spec.Properties
	if str(p, "stackName") == "" {
		return fmt.Errorf("properties.stackName: a stack needs a name")
	}
	tpl := str(p, "template")
	size, ok := r.src.sizes[tpl]
	if !ok {
		return fmt.Errorf("properties.template: %q is not in the assembly", tpl)
	}
	if size > MaxTemplateSize {
		return fmt.Errorf("%w: template %s is %d bytes, over CloudFormation's %d for a template (in S3): split the stack (nested stacks), or move content out of the template", ErrUndeployable, tpl, size, MaxTemplateSize)
	}
	if size > MaxTemplateBody && r.opts.StagingBucket == "" && !r.forStatus {
		return fmt.Errorf("%w: template %s is %d bytes, over CloudFormation's %d for a template body: name a bucket to stage it in with Options.StagingBucket (or the policy file's staging-bucket)", ErrStagingBucket, tpl, size, MaxTemplateBody)
	}
	if sp := str(p, "stackPolicy"); sp != "" {
		size, ok := r.src.sizes[sp]
		if !ok {
			return fmt.Errorf("properties.stackPolicy: %q is not in the assembly", sp)
		}
		if size > MaxStackPolicy {
			return fmt.Errorf("%w: stack policy %s is %d bytes, over CloudFormation's %d for a stack policy body", ErrUndeployable, sp, size, MaxStackPolicy)
		}
	}
	if _, _, err := boolProp(p, "terminationProtection"); err != nil {
		return err
	}
	if _, err := capabilities(r.opts.Capabilities); err != nil {
		return err
	}
	return nil
}

// capabilities turns IAM, NAMED_IAM, AUTO_EXPAND (with or without the
// CAPABILITY_ prefix) into CloudFormation's names.
func capabilities(names []string) ([]cfntypes.Capability, error) {
	var out []cfntypes.Capability
	for _, n := range names {
		c := strings.ToUpper(n)
		if !strings.HasPrefix(c, "CAPABILITY_") {
			c = "CAPABILITY_" + c
		}
		switch cfntypes.Capability(c) {
		case cfntypes.CapabilityCapabilityIam, cfntypes.CapabilityCapabilityNamedIam, cfntypes.CapabilityCapabilityAutoExpand:
			out = append(out, cfntypes.Capability(c))
		default:
			return nil, fmt.Errorf("%w: capability %q: want IAM, NAMED_IAM or AUTO_EXPAND", ErrParameter, n)
		}
	}
	return out, nil
}

// stackInput is what a stack is deployed with.
type stackInput struct {
	name         string
	body         []byte
	url          string // the staged template, when body is too large
	params       map[string]string
	tags         map[string]string
	policy       []byte
	protect, set bool
	notify       []string
	caps         []cfntypes.Capability
	info         *templateInfo // what the template declares (nil when it cannot be read)
	// open are the parameters the deployer may set (missing or Settable)
	// and did not this time: not sent (kept on update), not compared
	open []string
}

func (in *stackInput) cfnParams(update bool) []cfntypes.Parameter {
	var ps []cfntypes.Parameter
	for _, k := range slices.Sorted(maps.Keys(in.params)) {
		ps = append(ps, cfntypes.Parameter{ParameterKey: aws.String(k), ParameterValue: aws.String(in.params[k])})
	}
	if update {
		// open parameters not given this time keep the deployer's value
		for _, k := range in.open {
			ps = append(ps, cfntypes.Parameter{ParameterKey: aws.String(k), UsePreviousValue: aws.Bool(true)})
		}
	}
	return ps
}

func (in *stackInput) cfnTags() []cfntypes.Tag {
	var ts []cfntypes.Tag
	for _, k := range slices.Sorted(maps.Keys(in.tags)) {
		ts = append(ts, cfntypes.Tag{Key: aws.String(k), Value: aws.String(in.tags[k])})
	}
	return ts
}

func (in *stackInput) template() (body, url *string) {
	if in.url != "" {
		return nil, aws.String(in.url)
	}
	return aws.String(string(in.body)), nil
}

// input reads the template and policy from the verified assembly and
// gathers what the stack is deployed with.
func (stackKind) input(d *droplet) (*stackInput, error) {
	p, r := d.props, d.run
	in := &stackInput{name: str(p, "stackName"), params: strMap(p, "parameters"), tags: strMap(p, "tags"), notify: strList(p, "notificationArns")}
	var err error
	if in.body, err = r.src.ReadFile(str(p, "template")); err != nil {
		return nil, err
	}
	if sp := str(p, "stackPolicy"); sp != "" {
		if in.policy, err = r.src.ReadFile(sp); err != nil {
			return nil, err
		}
	}
	for k, v := range r.opts.Parameters {
		if id, name, _ := strings.Cut(k, "."); id == d.id {
			in.params[name] = v
		}
	}
	// Every parameter is sent, those left at the template's Default too,
	// so that a value changed by hand goes back to the signed one.
	if info, err := parseTemplate(in.body); err == nil {
		in.info = info
		in.params = effectiveParams(in.params, info)
	}
	in.open = openParams(r.src, d.id, r.opts)
	for _, k := range in.open {
		delete(in.params, k)
	}
	in.tags[TagSHA256] = r.src.SHA256.Hex()
	in.tags[TagDroplet] = d.id
	in.protect, in.set, _ = boolProp(p, "terminationProtection")
	in.caps, _ = capabilities(r.opts.Capabilities)
	return in, nil
}

// stage uploads a template too large to send inline to the staging
// bucket, at a key named by its SHA-256, and returns a function that
// deletes it (for a plan).
func (in *stackInput) stage(ctx context.Context, d *droplet) (func(), error) {
	if len(in.body) <= MaxTemplateBody {
		return func() {}, nil
	}
	bucket := d.run.opts.StagingBucket
	sum := sha256.Sum256(in.body)
	key := "assemble/templates/" + hex.EncodeToString(sum[:]) + ".template"
	if d.run.opts.Plan {
		// A key of the plan's own, which it deletes: never one a deploy
		// staged (the same template at the same key) and may still need.
		key = fmt.Sprintf("assemble/plan-templates/%x-%d.template", sum[:8], time.Now().UnixNano())
	}
	c := d.aws().s3
	if url, ok := d.run.staged.Load(d.region + "/" + key); ok {
		in.url = url.(string) // staged by the preflight
		return func() {}, nil
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(in.body),
		ContentLength: aws.Int64(int64(len(in.body))), Metadata: map[string]string{"assemble-sha256": d.run.src.SHA256.Hex(), "assemble-droplet": d.id}}); err != nil {
		return nil, fmt.Errorf("%w: staging template of %d bytes at s3://%s/%s: %s", ErrUpload, len(in.body), bucket, key, apiMessage(err))
	}
	d.res.action("staged the template (%d bytes) at s3://%s/%s", len(in.body), bucket, key)
	suffix := "amazonaws.com"
	if strings.HasPrefix(d.region, "cn-") {
		suffix = "amazonaws.com.cn"
	}
	in.url = fmt.Sprintf("https://s3.%s.%s/%s/%s", d.region, suffix, bucket, key)
	if !d.run.opts.Plan {
		d.run.staged.Store(d.region+"/"+key, in.url)
	}
	return func() {
		c.DeleteObject(context.WithoutCancel(ctx), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	}, nil
}

// describe returns the stack, or nil when there is none.
func describeStack(ctx context.Context, c *cloudformation.Client, name string) (*cfntypes.Stack, error) {
	out, err := c.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		if apiCode(err) == "ValidationError" && strings.Contains(apiMessage(err), "does not exist") {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: cloudformation:DescribeStacks %s: %s", ErrAWS, name, apiMessage(err))
	}
	if len(out.Stacks) == 0 {
		return nil, nil
	}
	return &out.Stacks[0], nil
}

// stackAttrs are a deployed stack's attributes: output.<Name>, stackArn.
func stackAttrs(s *cfntypes.Stack) map[string]string {
	a := map[string]string{"stackArn": aws.ToString(s.StackId)}
	for _, o := range s.Outputs {
		a["output."+aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	return a
}

func stackReady(s *cfntypes.Stack) bool {
	switch s.StackStatus {
	case cfntypes.StackStatusCreateComplete, cfntypes.StackStatusUpdateComplete, cfntypes.StackStatusImportComplete,
		cfntypes.StackStatusUpdateRollbackComplete:
		return true
	}
	return false
}

func (stackKind) current(ctx context.Context, d *droplet) (map[string]string, bool, error) {
	s, err := describeStack(ctx, d.aws().cfn, str(d.props, "stackName"))
	if err != nil || s == nil || !stackReady(s) {
		return nil, false, err
	}
	return stackAttrs(s), true, nil
}

// sameStack reports whether the stack already runs what the droplet
// signs (stackDrift finds nothing): nothing to do, whichever assembly
// deployed it. The skip rests on the droplet's own content (template,
// parameters, settings), never on the assembly's SHA-256: a release that
// leaves a stack as it was makes no call that changes it, and the stack's
// assemble:sha256 tag goes on naming the assembly whose deploy made what
// runs (Status shows it).
func sameStack(ctx context.Context, d *droplet, c *cloudformation.Client, s *cfntypes.Stack, in *stackInput) (bool, error) {
	switch s.StackStatus {
	case cfntypes.StackStatusCreateComplete, cfntypes.StackStatusUpdateComplete:
	default:
		return false, nil
	}
	diff, err := stackDrift(ctx, d, c, s, in)
	return len(diff) == 0, err
}

// deployedByNote is " (deployed by assembly sha256:...)" when the stack's
// assemble:sha256 tag names another assembly than this one, else "".
func deployedByNote(d *droplet, s *cfntypes.Stack) string {
	if sha := tagDigest(tagValue(s.Tags, TagSHA256)); !sha.IsZero() && sha != d.run.src.SHA256 {
		return " (deployed by assembly " + sha.String() + ")"
	}
	return ""
}

// tagDigest reads the assembly digest of a TagSHA256 tag or MetaSHA256
// metadata value: hex, as deploy writes it, or "sha256:HEX"; zero when
// there is none or it is no digest (someone else's tag).
func tagDigest(v string) digest.Digest {
	d, err := digest.Parse(v)
	if err != nil {
		d, _ = digest.FromHex(v)
	}
	return d
}

// paramDiff lists the parameters whose deployed value differs from want
// (a NoEcho value, shown as ****, cannot be compared and is not listed).
func paramDiff(s *cfntypes.Stack, want map[string]string) []string {
	have := map[string]string{}
	for _, p := range s.Parameters {
		have[aws.ToString(p.ParameterKey)] = aws.ToString(p.ParameterValue)
	}
	var diff []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		v, ok := have[k]
		switch {
		case !ok:
			diff = append(diff, fmt.Sprintf("parameter %s is not set (want %q)", k, want[k]))
		case v == "****":
		case v != want[k]:
			diff = append(diff, fmt.Sprintf("parameter %s is %q, want %q", k, v, want[k]))
		}
	}
	return diff
}

func (k stackKind) deploy(ctx context.Context, d *droplet) (Outcome, map[string]string, error) {
	in, err := k.input(d)
	if err != nil {
		return "", nil, err
	}
	if err := checkStackName(d, in.name); err != nil {
		return "", nil, err
	}
	c := d.aws().cfn
	s, err := describeStack(ctx, c, in.name)
	if err != nil {
		return "", nil, err
	}
	if err := foreignStack(d, s, in.name, d.run.adopts(d.id)); err != nil {
		return "", nil, err
	}
	if s != nil {
		if same, err := sameStack(ctx, d, c, s, in); err != nil {
			return "", nil, err
		} else if same {
			d.res.action("stack %s already runs what the droplet signs%s", in.name, deployedByNote(d, s))
			return Unchanged, stackAttrs(s), nil
		}
		switch st := s.StackStatus; {
		case st == cfntypes.StackStatusRollbackComplete:
			// A failed creation leaves a stack that can only be deleted.
			d.progress("deleting stack %s, left in %s by a failed creation", in.name, st)
			d.res.action("deleted stack %s, left in %s by a failed creation", in.name, st)
			if _, err := c.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: s.StackId}); err != nil {
				return "", nil, fmt.Errorf("%w: cloudformation:DeleteStack: %s", ErrAWS, apiMessage(err))
			}
			if err := waitDeleted(ctx, d, c, aws.ToString(s.StackId)); err != nil {
				return "", nil, err
			}
			s = nil
		case st == cfntypes.StackStatusReviewInProgress:
			// A change set was made and never executed: create anew.
		case strings.HasSuffix(string(st), "_IN_PROGRESS"):
			return "", nil, fmt.Errorf("%w: stack %s is %s: wait until it ends, then deploy again", ErrStackFailed, in.name, st)
		case strings.HasSuffix(string(st), "_FAILED"):
			return "", nil, fmt.Errorf("%w: stack %s is %s: fix it in CloudFormation (continue-update-rollback or delete), then deploy again", ErrStackFailed, in.name, st)
		}
	}
	cleanup, err := in.stage(ctx, d)
	if err != nil {
		return "", nil, err
	}
	_ = cleanup // the staged template stays: CloudFormation may read it again on rollback
	creating := s == nil || s.StackStatus == cfntypes.StackStatusReviewInProgress
	start := time.Now().Add(-2 * time.Second)
	var stackID string
	body, url := in.template()
	if d.run.opts.Method == Direct {
		if creating && s != nil {
			// A review stack cannot be created over: delete it first.
			if _, err := c.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: s.StackId}); err != nil {
				return "", nil, fmt.Errorf("%w: cloudformation:DeleteStack: %s", ErrAWS, apiMessage(err))
			}
			if err := waitDeleted(ctx, d, c, aws.ToString(s.StackId)); err != nil {
				return "", nil, err
			}
		}
		if creating {
			d.progress("creating stack %s", in.name)
			var policy *string
			if in.policy != nil {
				policy = aws.String(string(in.policy))
			}
			out, err := c.CreateStack(ctx, &cloudformation.CreateStackInput{StackName: aws.String(in.name), TemplateBody: body, TemplateURL: url,
				Parameters: in.cfnParams(false), Tags: in.cfnTags(), Capabilities: in.caps, NotificationARNs: in.notify,
				StackPolicyBody: policy, EnableTerminationProtection: aws.Bool(in.protect), DisableRollback: noRollback(d)})
			if err != nil {
				return "", nil, stackCallError("CreateStack", in.name, err)
			}
			stackID = aws.ToString(out.StackId)
			d.res.action("created stack %s", in.name)
		} else {
			d.progress("updating stack %s", in.name)
			out, err := c.UpdateStack(ctx, &cloudformation.UpdateStackInput{StackName: s.StackId, TemplateBody: body, TemplateURL: url,
				Parameters: in.cfnParams(true), Tags: in.cfnTags(), Capabilities: in.caps, NotificationARNs: in.notify, DisableRollback: noRollback(d)})
			if err != nil {
				if strings.Contains(apiMessage(err), "No updates are to be performed") {
					d.res.action("stack %s: no changes", in.name)
					return settled(ctx, d, c, s, in)
				}
				return "", nil, stackCallError("UpdateStack", in.name, err)
			}
			stackID = aws.ToString(out.StackId)
			d.res.action("updated stack %s", in.name)
		}
	} else {
		typ := cfntypes.ChangeSetTypeUpdate
		if creating {
			typ = cfntypes.ChangeSetTypeCreate
		}
		var made madeChangeSet
		cs, id, err := createChangeSet(ctx, d, c, in, typ, &made)
		if err != nil {
			// Never executed (interrupted, or it failed): it goes, and the
			// review stack it made.
			made.remove(context.WithoutCancel(ctx), d, c, s == nil)
			return "", nil, err
		}
		if cs == nil { // no changes
			d.res.action("stack %s: the change set holds no changes", in.name)
			return settled(ctx, d, c, s, in)
		}
		if d.run.opts.NoExecute {
			// cdk deploy --no-execute: the change set stays, for a person
			// to execute (or delete).
			d.res.action("created change set %s on stack %s (%s), not executed: aws cloudformation execute-change-set --change-set-name %s",
				aws.ToString(cs.ChangeSetName), in.name, summarize(cs.Changes), aws.ToString(cs.ChangeSetId))
			attrs := map[string]string{}
			if s != nil {
				attrs = stackAttrs(s)
			}
			return ChangeSetCreated, attrs, nil
		}
		d.progress("executing change set %s (%s)", aws.ToString(cs.ChangeSetName), summarize(cs.Changes))
		if _, err := c.ExecuteChangeSet(ctx, &cloudformation.ExecuteChangeSetInput{ChangeSetName: cs.ChangeSetId, DisableRollback: noRollback(d)}); err != nil {
			return "", nil, stackCallError("ExecuteChangeSet", in.name, err)
		}
		stackID = id
		d.res.action("executed change set %s on stack %s (%s)", aws.ToString(cs.ChangeSetName), in.name, summarize(cs.Changes))
	}
	final, err := waitStack(ctx, d, c, stackID, start)
	if err != nil {
		return "", nil, err
	}
	if _, err := settle(ctx, d, c, stackID, in); err != nil {
		return "", nil, err
	}
	if creating {
		return Created, stackAttrs(final), nil
	}
	return Updated, stackAttrs(final), nil
}

// noRollback is DisableRollback's value: true with Options.NoRollback,
// else unset (CloudFormation's default, roll back).
func noRollback(d *droplet) *bool {
	if d.run.opts.NoRollback {
		return aws.Bool(true)
	}
	return nil
}

func stackCallError(op, name string, err error) error {
	msg := apiMessage(err)
	if apiCode(err) == "InsufficientCapabilitiesException" || strings.Contains(msg, "Requires capabilities") {
		return fmt.Errorf("%w: stack %s: cloudformation:%s: %s: grant them with Options.Capabilities (or the policy file's capabilities)", ErrStackFailed, name, op, msg)
	}
	return fmt.Errorf("%w: stack %s: cloudformation:%s: %s", ErrStackFailed, name, op, msg)
}

// changeSetName is unique per deploy: the assembly's hash and the time.
func changeSetName(sha string, plan bool) string {
	prefix := "assemble-"
	if plan {
		prefix = "assemble-plan-"
	}
	if len(sha) > 12 {
		sha = sha[:12]
	}
	return fmt.Sprintf("%s%s-%d", prefix, sha, time.Now().UnixNano())
}

// createChangeSet creates a change set and waits until it is ready. It
// returns nil (and deletes the change set) when it holds no changes. The
// stack's id is returned whenever the change set was made, and made, when
// not nil, is told the ids as soon as CloudFormation gives them.
func createChangeSet(ctx context.Context, d *droplet, c *cloudformation.Client, in *stackInput, typ cfntypes.ChangeSetType, made *madeChangeSet) (*cloudformation.DescribeChangeSetOutput, string, error) {
	body, url := in.template()
	name := changeSetName(d.run.src.SHA256.Hex(), d.run.opts.Plan)
	out, err := c.CreateChangeSet(ctx, &cloudformation.CreateChangeSetInput{StackName: aws.String(in.name), ChangeSetName: aws.String(name),
		ChangeSetType: typ, TemplateBody: body, TemplateURL: url, Parameters: in.cfnParams(typ == cfntypes.ChangeSetTypeUpdate), Tags: in.cfnTags(),
		Capabilities: in.caps, NotificationARNs: in.notify, Description: aws.String("assemble deploy of droplet " + d.id)})
	if err != nil {
		if strings.Contains(apiMessage(err), "No updates are to be performed") {
			return nil, "", nil // said at once (moto), not by a FAILED change set
		}
		return nil, "", stackCallError("CreateChangeSet", in.name, err)
	}
	id, stackID := aws.ToString(out.Id), aws.ToString(out.StackId)
	if made != nil {
		*made = madeChangeSet{id: id, stackID: stackID}
	}
	d.progress("created change set %s", name)
	for wait := time.Duration(0); ; wait = d.run.opts.PollInterval {
		if err := sleep(ctx, wait); err != nil {
			return nil, stackID, err
		}
		cs, err := c.DescribeChangeSet(ctx, &cloudformation.DescribeChangeSetInput{ChangeSetName: aws.String(id)})
		if err != nil {
			return nil, stackID, fmt.Errorf("%w: cloudformation:DescribeChangeSet: %s", ErrAWS, apiMessage(err))
		}
		switch cs.Status {
		case cfntypes.ChangeSetStatusCreateComplete:
			// Every page of changes.
			next := cs.NextToken
			for next != nil {
				more, err := c.DescribeChangeSet(ctx, &cloudformation.DescribeChangeSetInput{ChangeSetName: aws.String(id), NextToken: next})
				if err != nil {
					return nil, stackID, fmt.Errorf("%w: cloudformation:DescribeChangeSet: %s", ErrAWS, apiMessage(err))
				}
				cs.Changes = append(cs.Changes, more.Changes...)
				next = more.NextToken
			}
			return cs, stackID, nil
		case cfntypes.ChangeSetStatusFailed:
			reason := aws.ToString(cs.StatusReason)
			c.DeleteChangeSet(context.WithoutCancel(ctx), &cloudformation.DeleteChangeSetInput{ChangeSetName: aws.String(id)})
			if strings.Contains(reason, "didn't contain changes") || strings.Contains(reason, "No updates are to be performed") {
				return nil, stackID, nil
			}
			return nil, stackID, fmt.Errorf("%w: stack %s: change set %s failed: %s", ErrStackFailed, in.name, name, reason)
		}
	}
}

// summarize counts a change set's changes by action: "2 Add, 1 Modify".
func summarize(changes []cfntypes.Change) string {
	n := map[string]int{}
	for _, ch := range changes {
		if rc := ch.ResourceChange; rc != nil {
			n[string(rc.Action)]++
		}
	}
	if len(n) == 0 {
		return "no resource changes"
	}
	var parts []string
	for _, a := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%d %s", n[a], a))
	}
	return strings.Join(parts, ", ")
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

var errDeleted = errors.New("stack deleted")

// waitDeleted polls a stack being deleted until it is gone.
func waitDeleted(ctx context.Context, d *droplet, c *cloudformation.Client, stackID string) error {
	for wait := time.Duration(0); ; wait = d.run.opts.PollInterval {
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		s, err := describeStack(ctx, c, stackID)
		switch {
		case err != nil:
			return err
		case s == nil || s.StackStatus == cfntypes.StackStatusDeleteComplete:
			return nil
		case s.StackStatus == cfntypes.StackStatusDeleteFailed:
			return fmt.Errorf("%w: deleting stack %s failed: %s", ErrStackFailed, aws.ToString(s.StackName), aws.ToString(s.StackStatusReason))
		}
	}
}

// waitStack polls the stack until its operation ends, telling progress its
// new events. A failure names each resource that failed and why.
func waitStack(ctx context.Context, d *droplet, c *cloudformation.Client, stackID string, since time.Time) (*cfntypes.Stack, error) {
	seen := map[string]bool{}
	var failures []string
	events := func() {
		out, err := c.DescribeStackEvents(ctx, &cloudformation.DescribeStackEventsInput{StackName: aws.String(stackID)})
		if err != nil {
			return
		}
		var fresh []cfntypes.StackEvent
		for _, e := range out.StackEvents {
			if e.Timestamp != nil && e.Timestamp.Before(since) || seen[aws.ToString(e.EventId)] {
				continue
			}
			seen[aws.ToString(e.EventId)] = true
			fresh = append(fresh, e)
		}
		// Newest first from the API: report oldest first.
		sort.SliceStable(fresh, func(i, j int) bool { return i > j })
		for _, e := range fresh {
			line := fmt.Sprintf("%s %s %s", e.ResourceStatus, aws.ToString(e.ResourceType), aws.ToString(e.LogicalResourceId))
			if r := aws.ToString(e.ResourceStatusReason); r != "" {
				line += ": " + r
			}
			d.progress("%s", line)
			if strings.HasSuffix(string(e.ResourceStatus), "_FAILED") && aws.ToString(e.ResourceStatusReason) != "" {
				failures = append(failures, fmt.Sprintf("%s (%s): %s", aws.ToString(e.LogicalResourceId), aws.ToString(e.ResourceType), aws.ToString(e.ResourceStatusReason)))
			}
		}
	}
	for wait := time.Duration(0); ; wait = d.run.opts.PollInterval {
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
		out, err := c.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(stackID)})
		if err != nil {
			return nil, fmt.Errorf("%w: cloudformation:DescribeStacks: %s", ErrAWS, apiMessage(err))
		}
		if len(out.Stacks) == 0 {
			return nil, errDeleted
		}
		s := &out.Stacks[0]
		st := string(s.StackStatus)
		if strings.HasSuffix(st, "_IN_PROGRESS") && s.StackStatus != cfntypes.StackStatusReviewInProgress {
			events()
			continue
		}
		events()
		switch s.StackStatus {
		case cfntypes.StackStatusCreateComplete, cfntypes.StackStatusUpdateComplete, cfntypes.StackStatusImportComplete:
			return s, nil
		case cfntypes.StackStatusDeleteComplete:
			return s, errDeleted
		}
		msg := fmt.Sprintf("stack %s is %s", aws.ToString(s.StackName), st)
		if r := aws.ToString(s.StackStatusReason); r != "" {
			msg += " (" + r + ")"
		}
		if len(failures) > 0 {
			msg += ": " + strings.Join(failures, "; ")
		}
		return nil, fmt.Errorf("%w: %s", ErrStackFailed, msg)
	}
}

func (k stackKind) plan(ctx context.Context, d *droplet) error {
	in, err := k.input(d)
	if err != nil {
		return err
	}
	known := !strings.Contains(in.name, KnownAfterDeploy)
	if known {
		if err := checkStackName(d, in.name); err != nil {
			return err
		}
	}
	c := d.aws().cfn
	s, err := describeStack(ctx, c, in.name)
	if err != nil {
		return err
	}
	if known {
		if err := foreignStack(d, s, in.name, d.run.adopts(d.id)); err != nil {
			return err
		}
	}
	if s != nil {
		if same, err := sameStack(ctx, d, c, s, in); err != nil {
			return err
		} else if same {
			d.res.action("stack %s: unchanged (it runs what the droplet signs%s)", in.name, deployedByNote(d, s))
			d.run.setAttrs(d.id, stackAttrs(s))
			return nil
		}
	}
	verb := "update"
	if s == nil || s.StackStatus == cfntypes.StackStatusReviewInProgress || s.StackStatus == cfntypes.StackStatusRollbackComplete {
		verb = "create"
	}
	if len(d.unknown) > 0 {
		d.res.action("%s stack %s: no change set made, its parameters use %s, known after deploy", verb, in.name, strings.Join(d.unknown, ", "))
		return nil
	}
	if s != nil && s.StackStatus == cfntypes.StackStatusRollbackComplete {
		d.res.action("delete stack %s (left in ROLLBACK_COMPLETE by a failed creation), then create it", in.name)
		return nil
	}
	if len(in.body) > MaxTemplateBody {
		d.res.action("stage the template (%d bytes) in s3://%s", len(in.body), d.run.opts.StagingBucket)
	}
	cleanup, err := in.stage(ctx, d)
	if err != nil {
		return err
	}
	defer cleanup()
	typ := cfntypes.ChangeSetTypeUpdate
	if verb == "create" {
		typ = cfntypes.ChangeSetTypeCreate
	}
	var made madeChangeSet
	cs, _, err := createChangeSet(ctx, d, c, in, typ, &made)
	// What the plan made goes, by id: the change set, and the review stack
	// a CREATE change set made when there was no stack.
	defer made.remove(context.WithoutCancel(ctx), d, c, typ == cfntypes.ChangeSetTypeCreate && s == nil)
	if err != nil {
		return err
	}
	if cs == nil {
		d.res.action("stack %s: no changes", in.name)
		if s != nil {
			d.run.setAttrs(d.id, stackAttrs(s))
		}
		return nil
	}
	d.res.action("%s stack %s: %s", verb, in.name, summarize(cs.Changes))
	for _, ch := range cs.Changes {
		if rc := ch.ResourceChange; rc != nil {
			d.res.Changes = append(d.res.Changes, Change{Action: string(rc.Action), LogicalID: aws.ToString(rc.LogicalResourceId), Type: aws.ToString(rc.ResourceType), Replacement: string(rc.Replacement)})
		}
	}
	return nil
}

func (k stackKind) status(ctx context.Context, d *droplet) ([]string, error) {
	in, err := k.input(d)
	if err != nil {
		return nil, err
	}
	c := d.aws().cfn
	s, err := describeStack(ctx, c, in.name)
	if err != nil {
		return nil, err
	}
	if s == nil || s.StackStatus == cfntypes.StackStatusReviewInProgress {
		return nil, absent("stack %s does not exist", in.name)
	}
	var diff []string
	if sha := tagDigest(tagValue(s.Tags, TagSHA256)); sha != d.run.src.SHA256 {
		d.deployedBy = sha
	}
	if !stackReady(s) {
		diff = append(diff, fmt.Sprintf("stack %s is %s", in.name, s.StackStatus))
	}
	drift, err := stackDrift(ctx, d, c, s, in)
	if err != nil {
		return nil, err
	}
	diff = append(diff, drift...)
	d.run.setAttrs(d.id, stackAttrs(s))
	return diff, nil
}
