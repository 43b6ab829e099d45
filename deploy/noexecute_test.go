package deploy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/smithy-go/middleware"
)

// NoExecute makes the change set and leaves it (cdk deploy --no-execute):
// the stack is not created; the change set is there to execute. NoRollback
// is passed as DisableRollback (moto 5.2.1 accepts the flag; whether it
// keeps a failed stack's resources is CloudFormation's to show: moto
// fails templates before any resource).
func TestNoExecuteAndNoRollback(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	src := signedSource(t, manifest(map[string]any{"S": stack("S", env, "noexec-"+u, "t.yaml", nil)}), files{"t.yaml": topics(1)})
	o := opts(cfg, nil)
	o.NoExecute = true
	c := &Counter{}
	o.APIOptions = append(o.APIOptions, c.Middleware)
	res, err := Deploy(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Droplet("S")
	if d.Outcome != ChangeSetCreated || c.Count("ExecuteChangeSet") != 0 || !strings.Contains(strings.Join(d.Actions, "\n"), "not executed: aws cloudformation execute-change-set --change-set-name ") {
		t.Fatalf("outcome %s, actions %v, calls %v", d.Outcome, d.Actions, c.Counts())
	}
	cs, err := cloudformation.NewFromConfig(cfg).ListChangeSets(context.Background(), &cloudformation.ListChangeSetsInput{StackName: aws.String("noexec-" + u)})
	if err != nil {
		t.Fatal(err)
	}
	left := 0
	for _, s := range cs.Summaries {
		if aws.ToString(s.StackName) == "noexec-"+u && s.ExecutionStatus == cfntypes.ExecutionStatusAvailable {
			left++
		}
	}
	if left != 1 {
		t.Errorf("%d change sets left to execute, want 1", left)
	}
	o.Method = Direct
	if _, err := Deploy(context.Background(), src, o); !errors.Is(err, ErrOption) {
		t.Errorf("no-execute with method direct: %v", err)
	}

	o = opts(cfg, nil)
	o.NoRollback, o.Method = true, Direct
	var sent *bool
	o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
		return st.Initialize.Add(middleware.InitializeMiddlewareFunc("seeRollback", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if p, ok := in.Parameters.(*cloudformation.CreateStackInput); ok {
				sent = p.DisableRollback
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
	})
	res, err = Deploy(context.Background(), signedSource(t, manifest(map[string]any{"S": stack("S", env, "norb-"+u, "t.yaml", nil)}), files{"t.yaml": topics(1)}), o)
	if err != nil || res.Droplet("S").Outcome != Created {
		t.Fatalf("no-rollback: %v", err)
	}
	if sent == nil || !*sent {
		t.Errorf("CreateStack's DisableRollback: %v, want true", sent)
	}
}
