package deploy

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/smithy-go/middleware"
)

// TestLiveAWS deploys two free stacks (WaitConditionHandle resources; the
// second's parameter the first's output, through real change sets, which
// publish outputs) to the account of the credentials in the environment,
// checks status and a rerun, then deletes them. It runs only with
// ASSEMBLE_LIVE_AWS=1 and AWS credentials and a region configured the
// standard way (AWS_PROFILE, AWS_REGION, ...).
func TestLiveAWS(t *testing.T) {
	if os.Getenv("ASSEMBLE_LIVE_AWS") != "1" {
		t.Skip("set ASSEMBLE_LIVE_AWS=1 (with AWS credentials and a region) to deploy to a real account")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u := uniq()
	first, second := "assemble-live-first-"+u, "assemble-live-second-"+u
	cfn := cloudformation.NewFromConfig(cfg)
	t.Cleanup(func() {
		for _, name := range []string{second, first} {
			cfn.DeleteStack(context.Background(), &cloudformation.DeleteStackInput{StackName: aws.String(name)})
			w := cloudformation.NewStackDeleteCompleteWaiter(cfn)
			w.Wait(context.Background(), &cloudformation.DescribeStacksInput{StackName: aws.String(name)}, 10*time.Minute)
		}
	})
	const agnostic = "aws://unknown-account/unknown-region"
	src := signedSource(t, manifest(map[string]any{
		"First":  stack("First", agnostic, first, "first.yaml", nil),
		"Second": stack("Second", agnostic, second, "second.yaml", map[string]string{"Given": "${First.output.Name}"}),
	}), files{
		"first.yaml":  "Resources:\n  Handle:\n    Type: AWS::CloudFormation::WaitConditionHandle\nOutputs:\n  Name:\n    Value: !Ref AWS::StackName\n",
		"second.yaml": "Parameters:\n  Given:\n    Type: String\nResources:\n  Handle:\n    Type: AWS::CloudFormation::WaitConditionHandle\nOutputs:\n  Seen:\n    Value: !Ref Given\n",
	})
	o := Options{AWS: &cfg, Progress: func(e Event) { t.Logf("%s: %s", e.Droplet, e.Message) }}
	res, err := Deploy(ctx, src, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Droplet("Second").Attributes["output.Seen"]; got != first {
		t.Errorf("Second saw %q, want %q", got, first)
	}
	if st, err := Status(ctx, src, o); err != nil || !st.Match {
		t.Fatalf("status: %v %+v", err, st)
	}
	c := &Counter{}
	o.APIOptions = []func(*middleware.Stack) error{c.Middleware}
	if _, err := Deploy(ctx, src, o); err != nil {
		t.Fatal(err)
	}
	if n := c.Count("ExecuteChangeSet") + c.Count("CreateChangeSet"); n != 0 {
		t.Errorf("rerun made %d change sets", n)
	}
}
