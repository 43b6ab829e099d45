package deploy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/middleware"
)

// moto's limits these tests rest on (moto 5.2.1): STS AssumeRole accepts
// any role ARN (no IAM role need exist, no trust policy is checked) and
// returns credentials of the role's account; stacks, buckets and SSM
// parameters are separate per account. So a role is "reachable" whenever
// named: the refusals tested here are those where no role is named and the
// account is not bootstrapped (no /cdk-bootstrap/QUALIFIER/version).

// Accounts of these tests: the caller is motoAccount.
const (
	devAccount    = "111111111111"
	prodAccount   = "222222222222"
	sharedAccount = "333333333333"
)

const deployRole = "arn:aws:iam::${AWS::AccountId}:role/deployer"

// accountConfig is cfg with credentials of a role assumed in account.
func accountConfig(t testing.TB, cfg aws.Config, account string) aws.Config {
	t.Helper()
	c := cfg.Copy()
	c.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), "arn:aws:iam::"+account+":role/test-admin"))
	id, err := sts.NewFromConfig(c).GetCallerIdentity(context.Background(), &sts.GetCallerIdentityInput{})
	if err != nil || aws.ToString(id.Account) != account {
		t.Fatalf("moto's AssumeRole did not give account %s: %v %v", account, id, err)
	}
	return c
}

func inRegion(cfg aws.Config, region string) aws.Config {
	c := cfg.Copy()
	c.Region = region
	return c
}

const stageTemplate = `Parameters:
  Stage:
    Type: String
  Target:
    Type: String
Resources:
  Topic:
    Type: AWS::SNS::Topic
Outputs:
  Seen:
    Value: !Ref Target
  StageSeen:
    Value: !Ref Stage
`

// promotion is one signed assembly with two targets, dev and prod, each in
// its own account, reached through the target's deployRole; App takes the
// target's environment and its Stage from ${target.Stage}, and reads
// Shared's output, a stack of a third account.
func promotion(t *testing.T, u string, extra map[string]any) (*Source, map[string]any) {
	ds := map[string]any{
		"Shared": stack("Shared", "aws://"+sharedAccount+"/us-east-1", "shared-"+u, "net.yaml", nil),
		"App": stack("App", "aws://unknown-account/unknown-region", "app-"+u, "app.yaml",
			map[string]string{"Stage": "${target.Stage}", "Target": "${Shared.output.BucketName}"}),
	}
	for k, v := range extra {
		ds[k] = v
	}
	m := manifest(ds)
	m["targets"] = map[string]any{
		"dev":  map[string]any{"environments": []string{"aws://" + devAccount + "/us-east-1"}, "values": map[string]string{"Stage": "dev"}, "deployRole": deployRole, "tags": map[string]string{"stage": "dev"}},
		"prod": map[string]any{"environments": []string{"aws://" + prodAccount + "/us-east-1"}, "values": map[string]string{"Stage": "prod"}, "deployRole": deployRole, "tags": map[string]string{"stage": "prod"}},
	}
	return signedSource(t, m, files{"net.yaml": netTemplate, "app.yaml": stageTemplate}), m
}

func stackParams(t *testing.T, cfg aws.Config, name string) (map[string]string, map[string]string) {
	t.Helper()
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(context.Background(), &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	params, tags := map[string]string{}, map[string]string{}
	for _, p := range out.Stacks[0].Parameters {
		params[aws.ToString(p.ParameterKey)] = aws.ToString(p.ParameterValue)
	}
	for _, tg := range out.Stacks[0].Tags {
		tags[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
	}
	return params, tags
}

// Built once, deployed to dev and to prod from the assembly's targets,
// through roles, with a reference across accounts; status --target
// matches in both; a stage's value changed in the account is drift.
func TestPromoteAcrossAccounts(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	src, _ := promotion(t, u, nil)
	dev, prod, shared := accountConfig(t, cfg, devAccount), accountConfig(t, cfg, prodAccount), accountConfig(t, cfg, sharedAccount)

	o := opts(cfg, nil)
	o.Method = Direct
	// No target: refused, naming the targets.
	if _, err := Deploy(context.Background(), src, o); !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), "dev, prod") {
		t.Fatalf("no --target: want ErrTarget naming dev, prod, got %v", err)
	}
	o.Target = "prd"
	if _, err := Deploy(context.Background(), src, o); !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), `did you mean "prod"`) {
		t.Fatalf("--target prd: want ErrTarget, got %v", err)
	}
	for _, target := range []string{"dev", "prod"} {
		o.Target = target
		res, err := Deploy(context.Background(), src, o)
		if err != nil {
			t.Fatalf("deploy --target %s: %v", target, err)
		}
		if res.Target != target {
			t.Fatalf("result target %q", res.Target)
		}
	}
	if got := stacksNamed(t, cfg, u); len(got) != 0 {
		t.Fatalf("the caller's own account got %v", got)
	}
	sharedOut, ok := outputs(t, shared, "shared-"+u)["BucketName"]
	if !ok {
		t.Fatal("Shared has no output in its account")
	}
	for acct, c := range map[string]aws.Config{"dev": dev, "prod": prod} {
		params, tags := stackParams(t, c, "app-"+u)
		if params["Stage"] != acct || params["Target"] != sharedOut {
			t.Errorf("%s: App's parameters %v, want Stage=%s Target=%s (Shared's output, read in account %s)", acct, params, acct, sharedOut, sharedAccount)
		}
		if tags["stage"] != acct || tags[TagDroplet] != "App" {
			t.Errorf("%s: tags %v", acct, tags)
		}
	}
	if got := stacksNamed(t, dev, "shared-"+u); len(got) != 0 {
		t.Fatalf("Shared deployed in dev's account too: %v", got)
	}
	// Status matches in both.
	for _, target := range []string{"dev", "prod"} {
		o.Target = target
		st, err := Status(context.Background(), src, o)
		if err != nil || !st.Match {
			for _, d := range st.Droplets {
				t.Logf("%s: %s %v %s", d.ID, d.State, d.Differences, d.Error)
			}
			t.Fatalf("status --target %s: %v %+v", target, err, st)
		}
	}
	// The stage's value changed in dev's account: dev differs, prod matches.
	_, err := cloudformation.NewFromConfig(dev).UpdateStack(context.Background(), &cloudformation.UpdateStackInput{
		StackName: aws.String("app-" + u), UsePreviousTemplate: aws.Bool(true),
		Parameters: []cfntypes.Parameter{{ParameterKey: aws.String("Stage"), ParameterValue: aws.String("prod")}, {ParameterKey: aws.String("Target"), UsePreviousValue: aws.Bool(true)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	o.Target = "dev"
	st, err := Status(context.Background(), src, o)
	if !errors.Is(err, ErrDiffers) || st.Droplet("App") == nil || st.Droplet("App").State != "differs" {
		t.Fatalf("dev after a hand edit: want App differs, got %v %+v", err, st)
	}
	o.Target = "prod"
	if st, err := Status(context.Background(), src, o); err != nil || !st.Match {
		t.Fatalf("prod: %v %+v", err, st)
	}
}

// A policy that refuses target prod: nothing is deployed there (nothing
// at all is called in prod's account).
func TestPolicyRefusesTarget(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	src, _ := promotion(t, u, nil)
	pol, _, err := readPolicyFile(t, "deploy:\n  targets: [dev]\n")
	if err != nil {
		t.Fatal(err)
	}
	src.policy = pol
	o := opts(cfg, nil)
	o.Method, o.Target = Direct, "prod"
	_, err = Deploy(context.Background(), src, o)
	if !errors.Is(err, ErrTargetRefused) {
		t.Fatalf("want ErrTargetRefused, got %v", err)
	}
	if got := stacksNamed(t, accountConfig(t, cfg, prodAccount), u); len(got) != 0 {
		t.Fatalf("prod's account got %v", got)
	}
	if got := stacksNamed(t, accountConfig(t, cfg, sharedAccount), u); len(got) != 0 {
		t.Fatalf("the shared account got %v", got)
	}
	if _, err := Status(context.Background(), src, o); !errors.Is(err, ErrTargetRefused) {
		t.Fatalf("status: want ErrTargetRefused, got %v", err)
	}
}

// Issue 27, rule 2: a reference is read in its droplet's own account. A
// sandbox copy of Shared in the caller's account (same stack name) is
// never read: Shared's account is reached through the role, where it is
// not deployed, so deploy --only App refuses before any change; and an
// account no role reaches is refused before any change too.
func TestReferenceReadInItsOwnAccount(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	// The sandbox copy, in the caller's account.
	cfn := cloudformation.NewFromConfig(cfg)
	if _, err := cfn.CreateStack(context.Background(), &cloudformation.CreateStackInput{StackName: aws.String("shared-" + u), TemplateBody: aws.String(netTemplate)}); err != nil {
		t.Fatal(err)
	}
	src, _ := promotion(t, u, nil)
	o := opts(cfg, nil)
	o.Method, o.Target, o.Only = Direct, "dev", []string{"App"}
	_, err := Deploy(context.Background(), src, o)
	if !errors.Is(err, ErrUnresolved) || !strings.Contains(err.Error(), "Shared") {
		t.Fatalf("want ErrUnresolved naming Shared (not deployed in %s), got %v", sharedAccount, err)
	}
	if got := stacksNamed(t, accountConfig(t, cfg, devAccount), u); len(got) != 0 {
		t.Fatalf("dev's account got %v", got)
	}

	// No role for Shared's account: the target names none, and the
	// account is not bootstrapped. Status says so too; nothing changes.
	src2, m := promotion(t, u, nil)
	_ = src2
	targets := m["targets"].(map[string]any)
	delete(targets["dev"].(map[string]any), "deployRole")
	m["targets"] = targets
	// dev's own account is the caller's here, so only Shared's is foreign.
	targets["dev"].(map[string]any)["environments"] = []string{env}
	src3 := signedSource(t, m, files{"net.yaml": netTemplate, "app.yaml": stageTemplate})
	o.Only = []string{"App"}
	_, err = Deploy(context.Background(), src3, o)
	if !errors.Is(err, ErrAccount) || !strings.Contains(err.Error(), "not bootstrapped") || !strings.Contains(err.Error(), "Shared") {
		t.Fatalf("want ErrAccount (no role reaches %s), got %v", sharedAccount, err)
	}
	if got := stacksNamed(t, cfg, "app-"+u); len(got) != 0 {
		t.Fatalf("App deployed from the sandbox copy's outputs: %v", got)
	}
	if _, err := Status(context.Background(), src3, o); !errors.Is(err, ErrAccount) {
		t.Fatalf("status: want ErrAccount, got %v", err)
	}
}

// The CDK bootstrap roles: with no role named, an account bootstrapped
// with the qualifier is reached through cdk-QUALIFIER-deploy-role-… (and
// the file publishing role for objects); --role-arn goes before the
// target's deployRole.
func TestBootstrapRoles(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	const acct = "444444444444"
	a := accountConfig(t, cfg, acct)
	bucket := "boot-" + u
	makeBucket(t, a, bucket)
	ds := map[string]any{
		"App":  stack("App", "aws://"+acct+"/us-east-1", "boot-"+u, "net.yaml", nil),
		"Conf": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": "aws://" + acct + "/us-east-1", "properties": map[string]any{"file": "conf.txt", "bucketName": bucket, "objectKey": "conf.txt"}},
	}
	src := signedSource(t, manifest(ds), files{"net.yaml": netTemplate, "conf.txt": "hello"})
	o := opts(cfg, nil)
	o.Method, o.Qualifier = Direct, "q"+u[:6]
	var roles []string
	o.APIOptions = append(o.APIOptions, roleRecorder(&roles))
	if _, err := Deploy(context.Background(), src, o); !errors.Is(err, ErrAccount) || !strings.Contains(err.Error(), "qualifier "+o.Qualifier) {
		t.Fatalf("not bootstrapped: want ErrAccount, got %v", err)
	}
	if _, err := ssm.NewFromConfig(a).PutParameter(context.Background(), &ssm.PutParameterInput{Name: aws.String("/cdk-bootstrap/" + o.Qualifier + "/version"), Value: aws.String("21"), Type: ssmtypes.ParameterTypeString}); err != nil {
		t.Fatal(err)
	}
	roles = nil
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"arn:aws:iam::" + acct + ":role/cdk-" + o.Qualifier + "-deploy-role-" + acct + "-us-east-1",
		"arn:aws:iam::" + acct + ":role/cdk-" + o.Qualifier + "-file-publishing-role-" + acct + "-us-east-1",
	}
	for _, w := range want {
		if !slices.Contains(roles, w) {
			t.Errorf("role %s not assumed (assumed %v)", w, roles)
		}
	}
	if got := stacksNamed(t, a, "boot-"+u); len(got) != 1 {
		t.Fatalf("stacks in %s: %v", acct, got)
	}
	if got := objects(t, a, bucket); len(got) != 1 {
		t.Fatalf("objects %v", got)
	}
	// --role-arn first.
	roles = nil
	o.RoleARN = "arn:aws:iam::${AWS::AccountId}:role/pipeline-${AWS::Region}"
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	if w := "arn:aws:iam::" + acct + ":role/pipeline-us-east-1"; len(roles) == 0 || !allEqual(roles, w) {
		t.Fatalf("--role-arn: assumed %v, want only %s", roles, w)
	}
}

func allEqual(ss []string, w string) bool {
	for _, s := range ss {
		if s != w {
			return false
		}
	}
	return true
}

// roleRecorder records the RoleArn of every AssumeRole call.
func roleRecorder(roles *[]string) func(*middlewareStack) error {
	return recordRoles(roles)
}

// A target over 2 accounts x 2 regions, one pair failing (its bucket does
// not exist): --max-failures 0 stops the pairs after it; --max-failures 1
// completes the others; each region holds the asset once; a rerun
// uploads nothing.
func TestMatrix(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	pairs := []string{
		"aws://" + devAccount + "/eu-west-1", // its bucket is missing: it fails
		"aws://" + devAccount + "/us-east-1",
		"aws://" + prodAccount + "/us-east-1",
		"aws://" + prodAccount + "/eu-west-1",
	}
	bucket := func(acct, region string) string { return "assets-" + u + "-" + acct + "-" + region }
	for _, p := range pairs[1:] {
		acct, region := p[6:18], p[19:]
		c := inRegion(accountConfig(t, cfg, acct), region)
		in := &s3.CreateBucketInput{Bucket: aws.String(bucket(acct, region))}
		if region != "us-east-1" {
			in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(region)}
		}
		if _, err := s3.NewFromConfig(c, func(o *s3.Options) { o.UsePathStyle = true }).CreateBucket(context.Background(), in); err != nil {
			t.Fatal(err)
		}
	}
	m := manifest(map[string]any{
		"Asset": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": "aws://unknown-account/unknown-region",
			"properties": map[string]any{"file": "asset.txt", "bucketName": `assets-` + u + `-\${AWS::AccountId}-\${AWS::Region}`, "objectKey": "asset-${target.Stage}.txt"}},
		"App": stack("App", "aws://unknown-account/unknown-region", "mx-"+u, "app.yaml", map[string]string{"Stage": "${target.Stage}", "Target": "${Asset.objectKey}"}),
	})
	m["targets"] = map[string]any{"prod": map[string]any{"environments": pairs, "values": map[string]string{"Stage": "prod"}, "deployRole": deployRole}}
	src := signedSource(t, m, files{"asset.txt": "signed bytes", "app.yaml": stageTemplate})

	c := &Counter{}
	o := opts(cfg, c)
	o.Method, o.Target, o.Concurrency, o.MaxFailures = Direct, "prod", 1, 0
	start := time.Now()
	res, err := Deploy(context.Background(), src, o)
	t.Logf("max-failures 0: %v", time.Since(start))
	if err == nil || !errors.Is(err, ErrPairNotStarted) {
		t.Fatalf("--max-failures 0: want ErrPairNotStarted, got %v", err)
	}
	// The missing bucket is found before any change (the preflight): that
	// pair is refused, and counts as a failure.
	if len(res.Pairs) != 4 || !errors.Is(errorsOf(res.Pairs[0]), ErrBucket) || res.Pairs[0].Droplet("Asset").Outcome != NotStarted {
		t.Fatalf("pair results %+v", res.Pairs[0])
	}
	for _, pr := range res.Pairs[1:] {
		if !errors.Is(errorsOf(pr), ErrPairNotStarted) {
			t.Fatalf("%s: %s", pr.Environment, pr.Error)
		}
		for _, d := range pr.Droplets {
			if d.Outcome != NotStarted {
				t.Fatalf("%s: %s %s", pr.Environment, d.ID, d.Outcome)
			}
		}
	}
	for _, p := range pairs[1:] {
		acct, region := p[6:18], p[19:]
		ac := inRegion(accountConfig(t, cfg, acct), region)
		if got := objects(t, ac, bucket(acct, region)); len(got) != 0 {
			t.Fatalf("%s: objects %v after the stop", p, got)
		}
		if got := stacksNamed(t, ac, "mx-"+u); len(got) != 0 {
			t.Fatalf("%s: stacks %v after the stop", p, got)
		}
	}

	o.MaxFailures, o.Concurrency = 1, 4
	start = time.Now()
	res, err = Deploy(context.Background(), src, o)
	t.Logf("max-failures 1: %v", time.Since(start))
	if err == nil || errors.Is(err, ErrPairNotStarted) || !strings.Contains(err.Error(), pairs[0]) {
		t.Fatalf("--max-failures 1: want only %s's failure, got %v", pairs[0], err)
	}
	for _, pr := range res.Pairs[1:] {
		if pr.Error != "" || pr.Droplet("Asset").Outcome != Uploaded || pr.Droplet("App").Outcome != Created {
			t.Fatalf("%s: %s %+v", pr.Environment, pr.Error, pr.Droplets)
		}
	}
	for _, p := range pairs[1:] {
		acct, region := p[6:18], p[19:]
		ac := inRegion(accountConfig(t, cfg, acct), region)
		if got := objects(t, ac, bucket(acct, region)); fmt.Sprint(got) != "[asset-prod.txt]" {
			t.Fatalf("%s: objects %v, want the asset once", p, got)
		}
		if got := stacksNamed(t, ac, "mx-"+u); len(got) != 1 {
			t.Fatalf("%s: stacks %v", p, got)
		}
	}
	// The failed pair's bucket made: the rerun deploys that pair only.
	c0 := inRegion(accountConfig(t, cfg, devAccount), "eu-west-1")
	if _, err := s3.NewFromConfig(c0, func(o *s3.Options) { o.UsePathStyle = true }).CreateBucket(context.Background(), &s3.CreateBucketInput{
		Bucket: aws.String(bucket(devAccount, "eu-west-1")), CreateBucketConfiguration: &s3types.CreateBucketConfiguration{LocationConstraint: "eu-west-1"}}); err != nil {
		t.Fatal(err)
	}
	c1 := &Counter{}
	o.APIOptions = []func(*middlewareStack) error{c1.Middleware}
	start = time.Now()
	if res, err = Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	t.Logf("failed pair's rerun: %v", time.Since(start))
	if c1.Count("PutObject") != 1 || c1.Count("CreateStack") != 1 || changes(c1) != 2 {
		t.Fatalf("the failed pair's rerun: %v", c1.Counts())
	}
	// Then a rerun changes nothing.
	c2 := &Counter{}
	o.APIOptions = []func(*middlewareStack) error{c2.Middleware}
	start = time.Now()
	res, _ = Deploy(context.Background(), src, o)
	t.Logf("rerun: %v", time.Since(start))
	if n := changes(c2); n != 0 {
		t.Fatalf("rerun: %d changing calls (%v)", n, c2.Counts())
	}
	for _, pr := range res.Pairs {
		for _, d := range pr.Droplets {
			if d.Outcome != Unchanged {
				t.Fatalf("rerun %s: %s %s", pr.Environment, d.ID, d.Outcome)
			}
		}
	}
	// Status: one result per pair, each matching.
	st, err := Status(context.Background(), src, o)
	if err != nil || len(st.Pairs) != 4 || !st.Match {
		t.Fatalf("status: %v %+v", err, st)
	}
	for i, p := range st.Pairs {
		if p.Environment != pairs[i] || !p.Match {
			t.Fatalf("status pair %d: %+v", i, p)
		}
	}
}

func errorsOf(r *Result) error {
	if r.Error == "" {
		return nil
	}
	for _, d := range r.Droplets {
		if d.Err != nil {
			return d.Err
		}
	}
	return errors.New(r.Error)
}

type middlewareStack = middleware.Stack

// recordRoles is SDK middleware that records AssumeRole's RoleArn.
func recordRoles(roles *[]string) func(*middleware.Stack) error {
	var mu sync.Mutex
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("recordRoles",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if ar, ok := in.Parameters.(*sts.AssumeRoleInput); ok {
					mu.Lock()
					*roles = append(*roles, aws.ToString(ar.RoleArn))
					mu.Unlock()
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	}
}

// outputs are a live stack's outputs.
func outputs(t *testing.T, cfg aws.Config, name string) map[string]string {
	t.Helper()
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(context.Background(), &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	o := map[string]string{}
	for _, x := range out.Stacks[0].Outputs {
		o[aws.ToString(x.OutputKey)] = aws.ToString(x.OutputValue)
	}
	return o
}

// A role of one account used for a pair of another is refused before any
// change. moto 5.2.1 cannot refuse the role itself: its STS AssumeRole
// accepts any role ARN (no role need exist, no trust policy is read) and
// returns credentials of the account the ARN names. So the refusal tested
// here is ours: after assuming the role, deploy asks STS
// GetCallerIdentity whose credentials it holds, and a role that gives
// account A's credentials for a pair in account B is refused
// (ErrRoleAccount, a kind of ErrAccount), naming the role, both accounts
// and the pair. Over a matrix with --max-failures 0, the other pair does
// not start either; status refuses the same way; nothing changes in any
// account (no changing call at all).
func TestRoleOfAnotherAccountRefused(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	wrongRole := "arn:aws:iam::" + devAccount + ":role/deployer"
	dev := "aws://" + devAccount + "/us-east-1"
	prod := "aws://" + prodAccount + "/us-east-1"
	cases := []struct {
		name    string
		envs    []string
		role    string // the target's deployRole
		roleARN string // Options.RoleARN
	}{
		{"deployRole", []string{prod}, wrongRole, ""},
		{"role option", []string{prod}, "", wrongRole},
		{"matrix", []string{dev, prod}, wrongRole, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := buildWrongRole(t, u, tc.envs, tc.role)
			c := &Counter{}
			o := opts(cfg, c)
			o.Method, o.Target, o.RoleARN, o.MaxFailures = Direct, "prod", tc.roleARN, 0
			res, err := Deploy(context.Background(), src, o)
			if !errors.Is(err, ErrRoleAccount) || !errors.Is(err, ErrAccount) {
				t.Fatalf("want ErrRoleAccount, got %v", err)
			}
			msg := err.Error()
			for _, w := range []string{wrongRole, "credentials of account " + devAccount, prod, "App"} {
				if !strings.Contains(msg, w) {
					t.Errorf("the refusal does not name %q: %s", w, msg)
				}
			}
			if len(tc.envs) > 1 {
				if len(res.Pairs) != 2 || !errors.Is(errorsOf(res.Pairs[0]), ErrPairNotStarted) || !errors.Is(errorsOf(res.Pairs[1]), ErrRoleAccount) {
					t.Fatalf("pairs %+v", res.Pairs)
				}
			}
			if n := changes(c); n != 0 {
				t.Fatalf("%d changing calls (%v)", n, c.Counts())
			}
			for _, acct := range []string{devAccount, prodAccount} {
				if got := stacksNamed(t, accountConfig(t, cfg, acct), "wrongrole-"+u); len(got) != 0 {
					t.Fatalf("account %s got %v", acct, got)
				}
			}
			if _, err := Status(context.Background(), src, o); !errors.Is(err, ErrRoleAccount) {
				t.Fatalf("status: want ErrRoleAccount, got %v", err)
			}
		})
	}
	// The role of the pair's own account (the placeholder) deploys.
	src := buildWrongRole(t, u, []string{prod}, deployRole)
	o := opts(cfg, nil)
	o.Method, o.Target = Direct, "prod"
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	if got := stacksNamed(t, accountConfig(t, cfg, prodAccount), "wrongrole-"+u); len(got) != 1 {
		t.Fatalf("prod's account holds %v", got)
	}
}

func buildWrongRole(t *testing.T, u string, envs []string, role string) *Source {
	m := manifest(map[string]any{
		"App": stack("App", "aws://unknown-account/unknown-region", "wrongrole-"+u, "app.yaml", map[string]string{"Stage": "${target.Stage}", "Target": "t"}),
	})
	tg := map[string]any{"environments": envs, "values": map[string]string{"Stage": "prod"}}
	if role != "" {
		tg["deployRole"] = role
	}
	m["targets"] = map[string]any{"prod": tg}
	return signedSource(t, m, files{"app.yaml": stageTemplate})
}
