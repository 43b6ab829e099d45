package deploy

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// matrixPairs are a target's three pairs: two regions of one account and
// a second account (reached through the target's deployRole: moto's
// AssumeRole, see target_test.go).
var matrixPairs = []string{
	"aws://" + devAccount + "/us-east-1",
	"aws://" + devAccount + "/eu-west-1",
	"aws://" + prodAccount + "/eu-west-1",
}

// matrixSource is a signed assembly with target prod over matrixPairs: App
// (no environment of its own) takes each pair, its Stage from the target
// and its Target from Shared's output; Shared lives in a third account,
// once.
func matrixSource(t *testing.T, u, appTemplate string) *Source {
	m := manifest(map[string]any{
		"Shared": stack("Shared", "aws://"+sharedAccount+"/us-east-1", "mxs-"+u, "net.yaml", nil),
		"App":    stack("App", "aws://unknown-account/unknown-region", "mxa-"+u, "app.yaml", map[string]string{"Stage": "${target.Stage}", "Target": "${Shared.output.BucketName}"}),
	})
	m["targets"] = map[string]any{"prod": map[string]any{"environments": matrixPairs, "values": map[string]string{"Stage": "prod"}, "deployRole": deployRole}}
	return signedSource(t, m, files{"net.yaml": netTemplate, "app.yaml": appTemplate})
}

func pairConfig(t *testing.T, cfg aws.Config, pair string) aws.Config {
	return inRegion(accountConfig(t, cfg, pair[6:18]), pair[19:])
}

// diff of a target over several account/region pairs compares Shared once
// and App in every pair, each pair in its own section (account, region,
// counts), reading only; Shared's output is pending while Shared changes,
// and read once it is deployed; a change in one pair's stack shows in
// that pair alone.
func TestDiffMatrix(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	src := matrixSource(t, u, stageTemplate)
	c := &Counter{}
	o := opts(cfg, c)
	o.Target, o.Method = "prod", Direct

	d, err := Diff(context.Background(), src, DiffOptions{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	if w := cloudWrites(c); len(w) > 0 {
		t.Fatalf("diff wrote: %v", w)
	}
	if d.Target != "prod" || d.Account != motoAccount || len(d.Pairs) != 3 || d.Total != 4 || d.Changed != 4 || strings.Join(d.Regions, ",") != "eu-west-1,us-east-1" {
		t.Fatalf("new: %+v", d)
	}
	if len(d.Droplets) != 1 || d.Droplets[0].ID != "Shared" || d.Droplets[0].State != StateNew {
		t.Fatalf("the shared droplets: %+v", d.Droplets)
	}
	for i, p := range d.Pairs {
		acct, region := matrixPairs[i][6:18], matrixPairs[i][19:]
		if p.Environment != matrixPairs[i] || p.Account != acct || strings.Join(p.Regions, ",") != region || p.Total != 1 || p.Changed != 1 || p.Error != "" || len(p.Pairs) != 0 {
			t.Fatalf("pair %d: %+v", i, p)
		}
		app := p.Droplets[0]
		if app.ID != "App" || app.State != StateNew || app.Region != region || strings.Join(app.Pending, ",") != "Shared.output.BucketName" {
			t.Fatalf("pair %d's App: %+v", i, app)
		}
	}

	deployed := o
	deployed.RequireApproval = ApproveNever
	if _, err := Deploy(context.Background(), src, deployed); err != nil {
		t.Fatal(err)
	}
	// One pair's stack changed by hand: its Stage.
	changed := pairConfig(t, cfg, matrixPairs[1])
	cfn := cloudformation.NewFromConfig(changed)
	s, err := cfn.DescribeStacks(context.Background(), &cloudformation.DescribeStacksInput{StackName: aws.String("mxa-" + u)})
	if err != nil {
		t.Fatal(err)
	}
	var params []cfntypes.Parameter
	for _, p := range s.Stacks[0].Parameters {
		v := aws.ToString(p.ParameterValue)
		if aws.ToString(p.ParameterKey) == "Stage" {
			v = "by-hand"
		}
		params = append(params, cfntypes.Parameter{ParameterKey: p.ParameterKey, ParameterValue: aws.String(v)})
	}
	if _, err := cfn.UpdateStack(context.Background(), &cloudformation.UpdateStackInput{StackName: aws.String("mxa-" + u), UsePreviousTemplate: aws.Bool(true), Parameters: params}); err != nil {
		t.Fatal(err)
	}

	c2 := &Counter{}
	o.APIOptions = []func(*middlewareStack) error{c2.Middleware}
	d, err = Diff(context.Background(), src, DiffOptions{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	if w := cloudWrites(c2); len(w) > 0 {
		t.Fatalf("diff wrote: %v", w)
	}
	if d.Total != 4 || d.Changed != 1 || d.Droplets[0].State != StateUnchanged {
		t.Fatalf("after the deploy: %+v %+v", d, d.Droplets[0])
	}
	for i, p := range d.Pairs {
		app := p.Droplets[0]
		if len(app.Pending) != 0 {
			t.Errorf("pair %d: Shared is deployed, yet pending %v", i, app.Pending)
		}
		want := StateUnchanged
		if i == 1 {
			want = StateChanged
			if p.Changed != 1 || app.Stack == nil || len(app.Stack.Parameters) != 1 || app.Stack.Parameters[0].Path != "Stage" || app.Stack.Parameters[0].Old != "by-hand" || app.Stack.Parameters[0].New != "prod" {
				t.Errorf("the changed pair: %+v %+v", p, app.Stack)
			}
		}
		if app.State != want {
			t.Errorf("pair %d (%s): App %s, want %s", i, p.Environment, app.State, want)
		}
	}
}

// A matrix deploy asks one approval for every pair: the diff asked about
// holds each pair's changes, what needs approval names every pair, and
// nothing is written before the answer; without anyone to ask it refuses,
// naming every pair, and changes nothing in any of them.
func TestMatrixApprovedOnce(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	anyone := strings.Replace(stageTemplate, "Resources:\n", "Resources:\n  Role:\n    Type: AWS::IAM::Role\n    Properties:\n      AssumeRolePolicyDocument:\n        Statement:\n          - {Effect: Allow, Principal: {AWS: '*'}, Action: sts:AssumeRole}\n", 1)
	src := matrixSource(t, u, anyone)
	c := &Counter{}
	o := opts(cfg, c)
	o.Target, o.Method, o.Capabilities = "prod", Direct, []string{"IAM"}

	res, err := Deploy(context.Background(), src, o)
	var ae *ApprovalError
	if !errors.Is(err, ErrApprovalRequired) || !errors.As(err, &ae) || len(ae.Reasons) != 3 {
		t.Fatalf("no one to ask: %v", err)
	}
	for i, r := range ae.Reasons {
		if !strings.HasPrefix(r, matrixPairs[i]+": App: Role (AWS::IAM::Role) AssumeRolePolicyDocument.Statement[0]: * may sts:AssumeRole") {
			t.Errorf("reason %d: %s", i, r)
		}
	}
	if w := cloudWrites(c); len(w) > 0 {
		t.Fatalf("refused, yet it wrote: %v", w)
	}
	if res.Droplet("Shared").Outcome != NotStarted || len(res.Pairs) != 3 {
		t.Fatalf("refused: %+v", res)
	}
	for _, p := range res.Pairs {
		if p.Droplet("App").Outcome != NotStarted || !strings.Contains(p.Error, "changes need approval") {
			t.Errorf("%s: %s %s", p.Environment, p.Droplet("App").Outcome, p.Error)
		}
	}
	for _, p := range matrixPairs {
		if got := stacksNamed(t, pairConfig(t, cfg, p), "mxa-"+u); len(got) != 0 {
			t.Fatalf("%s: refused, yet stacks %v", p, got)
		}
	}

	// Asked once; "no" changes nothing.
	var asked atomic.Int32
	var seen *DiffResult
	var seenReasons []string
	o.Approve = func(_ context.Context, d *DiffResult, reasons []string) error {
		asked.Add(1)
		seen, seenReasons = d, reasons
		if w := cloudWrites(c); len(w) > 0 {
			t.Errorf("asked after writes %v", w)
		}
		return ErrNotApproved
	}
	if _, err := Deploy(context.Background(), src, o); !errors.Is(err, ErrNotApproved) {
		t.Fatalf("said no: %v", err)
	}
	if asked.Load() != 1 || seen == nil || len(seen.Pairs) != 3 || seen.Broadened != 3 || len(seenReasons) != 3 || len(cloudWrites(c)) > 0 {
		t.Fatalf("asked %d times, about %+v (%v); writes %v", asked.Load(), seen, seenReasons, cloudWrites(c))
	}
	for i, p := range seen.Pairs {
		if p.Environment != matrixPairs[i] || p.Broadened != 1 || p.Droplets[0].Stack == nil || len(p.Droplets[0].Stack.Security) != 1 {
			t.Errorf("the diff asked about, pair %d: %+v", i, p)
		}
	}

	// Asked once; "yes" deploys every pair.
	asked.Store(0)
	o.Approve = func(context.Context, *DiffResult, []string) error { asked.Add(1); return nil }
	res, err = Deploy(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	if asked.Load() != 1 {
		t.Fatalf("asked %d times", asked.Load())
	}
	for i, p := range res.Pairs {
		if p.Droplet("App").Outcome != Created {
			t.Errorf("pair %d: %s", i, p.Droplet("App").Outcome)
		}
		if got := stacksNamed(t, pairConfig(t, cfg, matrixPairs[i]), "mxa-"+u); len(got) != 1 {
			t.Errorf("%s: stacks %v", matrixPairs[i], got)
		}
	}
	// Unchanged: nothing to approve, no one asked.
	asked.Store(0)
	if _, err := Deploy(context.Background(), src, o); err != nil || asked.Load() != 0 {
		t.Fatalf("unchanged: asked %d times, %v", asked.Load(), err)
	}
}

// cloudWrites are writes(c) but AssumeRole, which only takes credentials
// for another account (it changes nothing there).
func cloudWrites(c *Counter) []string {
	var w []string
	for _, op := range writes(c) {
		if op != "AssumeRole" {
			w = append(w, op)
		}
	}
	return w
}

// A pair refused before comparing (its bucket is missing: the checks a
// deploy makes first) is named with why in its own section; the other
// pairs are compared all the same, and the error names the pair.
func TestDiffMatrixRefusedPair(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	for _, p := range matrixPairs[1:] {
		in := &s3.CreateBucketInput{Bucket: aws.String("mxb-" + u + "-" + p[6:18] + "-" + p[19:])}
		if p[19:] != "us-east-1" {
			in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(p[19:])}
		}
		if _, err := s3.NewFromConfig(pairConfig(t, cfg, p), func(o *s3.Options) { o.UsePathStyle = true }).CreateBucket(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
	m := manifest(map[string]any{
		"Asset": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": "aws://unknown-account/unknown-region",
			"properties": map[string]any{"file": "asset.txt", "bucketName": `mxb-` + u + `-\${AWS::AccountId}-\${AWS::Region}`, "objectKey": "asset.txt"}},
	})
	m["targets"] = map[string]any{"prod": map[string]any{"environments": matrixPairs, "deployRole": deployRole}}
	src := signedSource(t, m, files{"asset.txt": "signed bytes"})
	o := opts(cfg, nil)
	o.Target = "prod"
	d, err := Diff(context.Background(), src, DiffOptions{Options: o})
	if !errors.Is(err, ErrBucket) || !strings.Contains(err.Error(), matrixPairs[0]+": ") {
		t.Fatalf("err = %v", err)
	}
	if len(d.Pairs) != 3 || !strings.Contains(d.Pairs[0].Error, "mxb-"+u) || d.Pairs[0].Droplets[0].State != StateFailed || !errors.Is(d.Pairs[0].Droplets[0].Err, ErrBucket) {
		t.Fatalf("the refused pair: %+v", d.Pairs[0])
	}
	for _, p := range d.Pairs[1:] {
		if p.Error != "" || p.Droplets[0].State != StateNew || len(p.Droplets[0].Objects) != 1 {
			t.Errorf("%s: %+v", p.Environment, p)
		}
	}
	if d.Total != 2 || d.Changed != 2 {
		t.Errorf("counts: %d of %d", d.Changed, d.Total)
	}
}
