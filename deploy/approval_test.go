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
	"github.com/aws/aws-sdk-go-v2/service/sts"
)

const lambdaRole = `Resources:
  R:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Statement:
          - {Effect: Allow, Principal: {Service: lambda.amazonaws.com}, Action: sts:AssumeRole}
`

var anyoneRole = strings.Replace(lambdaRole, "{Service: lambda.amazonaws.com}", "{AWS: '*'}", 1)

func roleSource(t *testing.T, name, tpl string) *Source {
	return signedSource(t, manifest(map[string]any{"R": stack("R", env, name, "r.yaml", nil)}), files{"r.yaml": tpl})
}

func trustOf(t *testing.T, cfg aws.Config, name string) string {
	t.Helper()
	out, err := cloudformation.NewFromConfig(cfg).GetTemplate(context.Background(), &cloudformation.GetTemplateInput{StackName: aws.String(name), TemplateStage: cfntypes.TemplateStageOriginal})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.TemplateBody)
}

// TestApprovalBroadening: a role that comes to trust anyone needs
// approval (the default level); with no one to ask, nothing changes;
// approved, or with ApproveNever, it deploys. A role not deployed yet
// needs approval too: all it grants is new.
func TestApprovalBroadening(t *testing.T) {
	cfg := awsConfig(t)
	name := "appr-" + uniq()
	o := opts(cfg, nil)
	o.Capabilities = []string{"IAM"}
	c := &Counter{}
	first := o
	first.APIOptions = append(first.APIOptions, c.Middleware)
	_, err := Deploy(context.Background(), roleSource(t, name, lambdaRole), first)
	var ae *ApprovalError
	if !errors.Is(err, ErrApprovalRequired) || !errors.As(err, &ae) || len(ae.Reasons) != 1 || !strings.Contains(ae.Reasons[0], "Service:lambda.amazonaws.com may sts:AssumeRole") {
		t.Fatalf("a new role: err = %v", err)
	}
	if w := writes(c); len(w) > 0 || len(stacksNamed(t, cfg, name)) != 0 {
		t.Fatalf("refused, yet calls %v made stacks %v", w, stacksNamed(t, cfg, name))
	}
	first.RequireApproval = ApproveNever
	if _, err := Deploy(context.Background(), roleSource(t, name, lambdaRole), first); err != nil {
		t.Fatal(err)
	}

	// Refused: nothing changes.
	c2 := &Counter{}
	refused := o
	refused.APIOptions = append(refused.APIOptions, c2.Middleware)
	res, err := Deploy(context.Background(), roleSource(t, name, anyoneRole), refused)
	if !errors.Is(err, ErrApprovalRequired) || !errors.As(err, &ae) || ae.Level != ApproveBroadening || !strings.Contains(ae.Reasons[0], "R: R (AWS::IAM::Role) AssumeRolePolicyDocument.Statement[0]: * may sts:AssumeRole on role R") {
		t.Fatalf("err = %v", err)
	}
	if w := writes(c2); len(w) > 0 {
		t.Errorf("refused, yet write calls %v", w)
	}
	if res.Droplet("R").Outcome != NotStarted || strings.Contains(trustOf(t, cfg, name), "'*'") {
		t.Errorf("refused, yet %s", res.Droplet("R").Outcome)
	}

	// Said no: nothing changes.
	no := o
	no.Approve = func(context.Context, *DiffResult, []string) error { return ErrNotApproved }
	if _, err := Deploy(context.Background(), roleSource(t, name, anyoneRole), no); !errors.Is(err, ErrNotApproved) {
		t.Fatalf("err = %v", err)
	}

	// Approved: it deploys, the diff asked about being this one.
	yes := o
	var asked *DiffResult
	yes.Approve = func(_ context.Context, d *DiffResult, reasons []string) error { asked = d; return nil }
	res, err = Deploy(context.Background(), roleSource(t, name, anyoneRole), yes)
	if err != nil {
		t.Fatal(err)
	}
	if asked == nil || asked.Broadened != 1 || asked.Account != motoAccount || res.Droplet("R").Outcome != Updated {
		t.Errorf("approved: asked %+v, outcome %s", asked, res.Droplet("R").Outcome)
	}
	if !strings.Contains(trustOf(t, cfg, name), "'*'") {
		t.Error("approved, yet the template was not deployed")
	}
	// Narrowing needs no approval.
	if _, err := Deploy(context.Background(), roleSource(t, name, lambdaRole), o); err != nil {
		t.Fatalf("narrowing: %v", err)
	}
}

// TestApprovalAnyChange: at any-change a new file needs approval; an
// unchanged assembly does not.
func TestApprovalAnyChange(t *testing.T) {
	cfg := awsConfig(t)
	bucket := "appr-" + uniq()
	makeBucket(t, cfg, bucket)
	src := signedSource(t, manifest(map[string]any{"F": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": env,
		"properties": map[string]any{"file": "f.txt", "bucketName": bucket, "objectKey": "f.txt"}}}), files{"f.txt": "f"})
	o := opts(cfg, nil)
	o.RequireApproval = ApproveAnyChange
	_, err := Deploy(context.Background(), src, o)
	var ae *ApprovalError
	if !errors.As(err, &ae) || strings.Join(ae.Reasons, ";") != "F: new" || len(objects(t, cfg, bucket)) != 0 {
		t.Fatalf("err = %v", err)
	}
	o.RequireApproval = ApproveBroadening // a file grants nothing
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	o.RequireApproval = ApproveAnyChange
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatalf("unchanged: %v", err)
	}
}

// TestApprovalAccountChanged: the approval is for the diff of one
// account; when the credentials answer for another after it, nothing
// deploys. The credentials change to a role of another account
// (sts:AssumeRole, which moto grants without checking the role).
func TestApprovalAccountChanged(t *testing.T) {
	cfg := awsConfig(t)
	name := "acct-" + uniq()
	var creds atomic.Value
	creds.Store(aws.Credentials{AccessKeyID: "testing", SecretAccessKey: "testing"})
	cfg.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return creds.Load().(aws.Credentials), nil
	})
	o := opts(cfg, nil)
	o.Capabilities = []string{"IAM"}
	o.Approve = func(ctx context.Context, _ *DiffResult, _ []string) error {
		out, err := sts.NewFromConfig(cfg).AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::111122223333:role/other"), RoleSessionName: aws.String("t")})
		if err != nil {
			return err
		}
		creds.Store(aws.Credentials{AccessKeyID: aws.ToString(out.Credentials.AccessKeyId), SecretAccessKey: aws.ToString(out.Credentials.SecretAccessKey), SessionToken: aws.ToString(out.Credentials.SessionToken)})
		return nil
	}
	c := &Counter{}
	o.APIOptions = append(o.APIOptions, c.Middleware)
	_, err := Deploy(context.Background(), roleSource(t, name, anyoneRole), o)
	if !errors.Is(err, ErrAccountChanged) {
		t.Fatalf("err = %v", err)
	}
	if w := writes(c); len(w) > 0 {
		t.Errorf("write calls %v", w)
	}
}

func TestParseApproval(t *testing.T) {
	for in, want := range map[string]Approval{"": ApproveBroadening, "never": ApproveNever, "any-change": ApproveAnyChange, "broadening": ApproveBroadening} {
		if got, err := ParseApproval(in); err != nil || got != want {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := ParseApproval("always"); !errors.Is(err, ErrApprovalLevel) {
		t.Errorf("err = %v", err)
	}
}
