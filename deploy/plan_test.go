package deploy

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/smithy-go/middleware"
)

// Issue 27, item 8: a plan deletes only what it made, by id. Here a real
// deploy creates the stack while the plan of that new stack is under way
// (right after the plan's change set is made): the plan must not delete
// the stack the deploy made. Before, it deleted the stack by name.
func TestPlanKeepsStackADeployMade(t *testing.T) {
	cfg := awsConfig(t)
	for _, method := range []Method{ChangeSet, Direct} {
		t.Run(string(method), func(t *testing.T) {
			u := uniq()
			name := "race-" + u
			src := signedSource(t, manifest(map[string]any{"S": stack("S", env, name, "t.yaml", nil)}), files{"t.yaml": topics(2)})
			var once sync.Once
			var deployErr error
			o := opts(cfg, nil)
			o.Plan = true
			o.Progress = func(e Event) {
				if strings.HasPrefix(e.Message, "created change set ") {
					once.Do(func() {
						real := opts(cfg, nil)
						real.Method = method
						_, deployErr = Deploy(context.Background(), src, real)
					})
				}
			}
			res, err := Deploy(context.Background(), src, o)
			if deployErr != nil {
				t.Fatalf("the deploy during the plan: %v", deployErr)
			}
			if err != nil {
				t.Logf("plan: %v (%v)", err, res.Droplet("S").Actions)
			}
			// moto 5.2.1 makes a second stack of the name when a CREATE
			// change set is made on a stack in REVIEW_IN_PROGRESS (CloudFormation
			// uses that stack): the deployed one is found by its status.
			out, lerr := cloudformation.NewFromConfig(cfg).ListStacks(context.Background(), &cloudformation.ListStacksInput{})
			if lerr != nil {
				t.Fatal(lerr)
			}
			var live []string
			for _, s := range out.StackSummaries {
				if aws.ToString(s.StackName) == name && s.StackStatus != cfntypes.StackStatusDeleteComplete {
					live = append(live, string(s.StackStatus))
				}
			}
			if strings.Join(live, ",") != string(cfntypes.StackStatusCreateComplete) {
				t.Errorf("stacks named %s after the plan: %v, want the deployed one, %s", name, live, cfntypes.StackStatusCreateComplete)
			}
		})
	}
}

// A plan deletes its own change set and no other: one made by someone
// else on the same stack stays.
func TestPlanDeletesOnlyItsChangeSet(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	name := "own-" + u
	m := manifest(map[string]any{"S": stack("S", env, name, "t.yaml", nil)})
	if _, err := Deploy(context.Background(), signedSource(t, m, files{"t.yaml": topics(1)}), opts(cfg, nil)); err != nil {
		t.Fatal(err)
	}
	c := cloudformation.NewFromConfig(cfg)
	if _, err := c.CreateChangeSet(context.Background(), &cloudformation.CreateChangeSetInput{StackName: aws.String(name), ChangeSetName: aws.String("theirs"),
		TemplateBody: aws.String(topics(3)), ChangeSetType: cfntypes.ChangeSetTypeUpdate}); err != nil {
		t.Fatal(err)
	}
	o := opts(cfg, nil)
	o.Plan = true
	res, err := Deploy(context.Background(), signedSource(t, m, files{"t.yaml": topics(2)}), o)
	if err != nil {
		t.Fatal(err)
	}
	if ch := res.Droplet("S").Changes; len(ch) == 0 {
		t.Errorf("plan shows no change: %v", res.Droplet("S").Actions)
	}
	out, err := c.ListChangeSets(context.Background(), &cloudformation.ListChangeSetsInput{StackName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	// moto 5.2.1 lists every stack's change sets, and keeps those it
	// executed: the plan's is what must be gone, theirs what must stay.
	var theirs, plans []string
	for _, cs := range out.Summaries {
		switch n := aws.ToString(cs.ChangeSetName); {
		case aws.ToString(cs.StackName) != name:
		case n == "theirs":
			theirs = append(theirs, n)
		case strings.HasPrefix(n, "assemble-plan-"):
			plans = append(plans, n)
		}
	}
	if len(theirs) != 1 || len(plans) != 0 {
		t.Errorf("change sets after the plan: theirs %v, the plan's %v", theirs, plans)
	}
}

// A plan runs up to Concurrency droplets at once, as a deploy does: the
// most CreateChangeSet calls seen under way at once (each held 150 ms)
// is 1 with Concurrency 1, and more with 3. Before, a plan went one
// droplet at a time whatever Concurrency said.
func TestPlanHonoursConcurrency(t *testing.T) {
	cfg := awsConfig(t)
	ds := map[string]any{}
	u := uniq()
	for _, id := range []string{"A", "B", "C", "D", "E", "F"} {
		ds[id] = stack(id, env, "pc-"+strings.ToLower(id)+"-"+u, "t.yaml", nil)
	}
	src := signedSource(t, manifest(ds), files{"t.yaml": topics(1)})
	for _, conc := range []int{1, 3} {
		var now, most atomic.Int64
		hold := func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("hold", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if middleware.GetOperationName(ctx) != "CreateChangeSet" {
					return next.HandleInitialize(ctx, in)
				}
				n := now.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(150 * time.Millisecond)
				now.Add(-1)
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
		}
		o := opts(cfg, nil)
		o.Plan, o.Concurrency = true, conc
		o.APIOptions = append(o.APIOptions, hold)
		res, err := Deploy(context.Background(), src, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range res.Droplets {
			if d.Outcome != Planned {
				t.Errorf("concurrency %d: %s %s", conc, d.ID, d.Outcome)
			}
		}
		switch m := most.Load(); {
		case conc == 1 && m != 1:
			t.Errorf("concurrency 1: %d change sets under way at once", m)
		case conc > 1 && (m < 2 || m > int64(conc)):
			t.Errorf("concurrency %d: at most %d change sets under way at once", conc, m)
		}
	}
	if s := stacksNamed(t, cfg, u); len(s) != 0 {
		t.Errorf("stacks left: %v", s)
	}
}
