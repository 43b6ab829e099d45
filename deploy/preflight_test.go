package deploy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"

	"github.com/cloud-assembly/assemble/assembly"
)

// fileDroplet uploads f.txt to the bucket.
func fileDroplet(bucket string) map[string]any {
	return map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": env,
		"properties": map[string]any{"file": "f.txt", "bucketName": bucket, "objectKey": "f.txt"}}
}

// bigTemplate is over MaxTemplateBody: it needs the staging bucket.
func bigTemplate() string {
	return topics(1) + "Metadata:\n  Pad: " + strings.Repeat("x", MaxTemplateBody) + "\n"
}

// createForeignStack makes, by hand, the stack name with no assemble tags
// (or with the tags given).
func createForeignStack(t *testing.T, cfg aws.Config, name string, tags map[string]string) {
	t.Helper()
	in := &cloudformation.CreateStackInput{StackName: aws.String(name), TemplateBody: aws.String(topics(1))}
	for k, v := range tags {
		in.Tags = append(in.Tags, cfntypes.Tag{Key: aws.String(k), Value: aws.String(v)})
	}
	if _, err := cloudformation.NewFromConfig(cfg).CreateStack(context.Background(), in); err != nil {
		t.Fatal(err)
	}
}

// stackState is what a test compares to see that a stack did not change:
// its template and tags.
func stackState(t *testing.T, cfg aws.Config, name string) string {
	t.Helper()
	c := cloudformation.NewFromConfig(cfg)
	out, err := c.DescribeStacks(context.Background(), &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := c.GetTemplate(context.Background(), &cloudformation.GetTemplateInput{StackName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, tg := range out.Stacks[0].Tags {
		tags = append(tags, aws.ToString(tg.Key)+"="+aws.ToString(tg.Value))
	}
	return string(out.Stacks[0].StackStatus) + " " + strings.Join(tags, ",") + "\n" + aws.ToString(tpl.TemplateBody)
}

// Issue 27, item 7: everything the account can tell is checked before the
// first change. Each case has a droplet that would change the cloud
// first (File, with no dependencies), and, for a plan and a deploy, the
// refusal names the cause and moto holds nothing new. moto_server checks
// no permissions, so "the bucket exists but these credentials may not
// write to it" cannot be made here; a deploy stages its templates before
// any stack changes, which is where such a bucket stops it.
func TestPreflightChangesNothing(t *testing.T) {
	cfg := awsConfig(t)
	for _, tc := range []struct {
		name    string
		edit    func(u string, ds map[string]any)
		opts    func(u string, o *Options)
		foreign map[string]string // tags of a stack made by hand first, named "pre-"+u
		want    error
	}{
		{name: "staging-bucket-missing", want: ErrBucket,
			edit: func(u string, ds map[string]any) { ds["Big"] = stack("Big", env, "big-"+u, "big.yaml", nil) },
			opts: func(u string, o *Options) { o.StagingBucket = "nostage-" + u }},
		{name: "file-bucket-missing", want: ErrBucket, edit: func(u string, ds map[string]any) {
			ds["Other"] = map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": env,
				"properties": map[string]any{"file": "f.txt", "bucketName": "nobucket-" + u, "objectKey": "f.txt"}}
		}},
		{name: "directory-bucket-missing", want: ErrBucket, edit: func(u string, ds map[string]any) {
			ds["Site"] = map[string]any{"type": "npm://@aws-cdk/assets.DirectoryDroplet", "environment": env,
				"properties": map[string]any{"directory": "site", "bucketName": "nobucket-" + u + "-\\${AWS::Region}"}}
		}},
		{name: "duplicate-after-unknown-account", want: assembly.ErrDuplicateStack, edit: func(u string, ds map[string]any) {
			// Valid as written (two environments), one stack once the
			// caller's account is known.
			ds["A"] = stack("A", "aws://unknown-account/us-east-1", "dup-"+u, "t.yaml", nil)
			ds["B"] = stack("B", env, "dup-"+u, "t.yaml", nil)
		}},
		{name: "duplicate-outside-only", want: assembly.ErrDuplicateStack, edit: func(u string, ds map[string]any) {
			ds["A"] = stack("A", "aws://"+motoAccount+"/unknown-region", "dup-"+u, "t.yaml", nil)
			ds["B"] = stack("B", env, "dup-"+u, "t.yaml", nil)
		}, opts: func(u string, o *Options) { o.Only = []string{"File", "A"} }},
		{name: "foreign-stack-untagged", want: ErrForeignStack, foreign: map[string]string{"team": "sandbox"},
			edit: func(u string, ds map[string]any) { ds["S"] = stack("S", env, "pre-"+u, "t.yaml", nil) }},
		{name: "foreign-stack-other-droplet", want: ErrForeignStack, foreign: map[string]string{TagDroplet: "Other"},
			edit: func(u string, ds map[string]any) { ds["S"] = stack("S", env, "pre-"+u, "t.yaml", nil) }},
		{name: "adopt-names-no-stack", want: ErrParameter,
			edit: func(u string, ds map[string]any) { ds["S"] = stack("S", env, "s-"+u, "t.yaml", nil) },
			opts: func(u string, o *Options) { o.Adopt = []string{"File"} }},
		{name: "stack-name-from-a-reference", want: assembly.ErrStackName, edit: func(u string, ds map[string]any) {
			// Net is deployed by hand below: its output, a bucket name with
			// a dot, is not a stack name.
			ds["Net"] = stack("Net", env, "net-"+u, "net.yaml", map[string]string{"Name": "n." + u})
			ds["S"] = stack("S", env, "${Net.output.BucketName}", "t.yaml", nil)
		}, opts: func(u string, o *Options) { o.Only = []string{"File", "S"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := uniq()
			bucket := "pre-" + u
			makeBucket(t, cfg, bucket)
			ds := map[string]any{"File": fileDroplet(bucket)}
			tc.edit(u, ds)
			fs := files{"f.txt": "f", "t.yaml": topics(2), "big.yaml": bigTemplate(), "site/index.html": "<p>",
				"net.yaml": "Parameters:\n  Name:\n    Type: String\nResources:\n  T:\n    Type: AWS::SNS::Topic\nOutputs:\n  BucketName:\n    Value: !Ref Name\n"}
			src := signedSource(t, manifest(ds), fs)
			if tc.foreign != nil {
				createForeignStack(t, cfg, "pre-"+u, tc.foreign)
			}
			if tc.name == "stack-name-from-a-reference" {
				o := opts(cfg, nil)
				o.Only, o.Method = []string{"Net"}, Direct
				if _, err := Deploy(context.Background(), src, o); err != nil {
					t.Fatal(err)
				}
			}
			before := stacksNamed(t, cfg, u)
			var foreignBefore string
			if tc.foreign != nil {
				foreignBefore = stackState(t, cfg, "pre-"+u)
			}
			for _, plan := range []bool{true, false} {
				o := opts(cfg, nil)
				o.Plan = plan
				if tc.opts != nil {
					tc.opts(u, &o)
				}
				res, err := Deploy(context.Background(), src, o)
				if !errors.Is(err, tc.want) {
					t.Fatalf("plan=%v: got %v, want %v", plan, err, tc.want)
				}
				if f := res.Droplet("File"); f.Outcome != NotStarted {
					t.Errorf("plan=%v: File %s", plan, f.Outcome)
				}
			}
			if after := stacksNamed(t, cfg, u); strings.Join(after, ",") != strings.Join(before, ",") {
				t.Errorf("stacks %v, before %v", after, before)
			}
			if o := objects(t, cfg, bucket); len(o) != 0 {
				t.Errorf("objects made: %v", o)
			}
			if tc.foreign != nil {
				if after := stackState(t, cfg, "pre-"+u); after != foreignBefore {
					t.Errorf("the foreign stack changed:\n%s\nwas\n%s", after, foreignBefore)
				}
			}
		})
	}
}

// --adopt deploys over a stack the droplet did not make, and tags it as
// the droplet's: the next deploy needs no --adopt. (moto 5.2.1 leaves a
// stack's tags as they were when it executes an UPDATE change set: the
// test deploys with UpdateStack.)
func TestAdoptForeignStack(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	name := "adopt-" + u
	createForeignStack(t, cfg, name, nil)
	src := signedSource(t, manifest(map[string]any{"S": stack("S", env, name, "t.yaml", nil)}), files{"t.yaml": topics(2)})
	if _, err := Deploy(context.Background(), src, opts(cfg, nil)); !errors.Is(err, ErrForeignStack) {
		t.Fatalf("without adopt: %v", err)
	}
	o := opts(cfg, nil)
	o.Adopt, o.Method = []string{"S"}, Direct
	res, err := Deploy(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Droplet("S").Outcome; got != Updated {
		t.Errorf("adopted: %s, want updated", got)
	}
	if st := stackState(t, cfg, name); !strings.Contains(st, TagDroplet+"=S") {
		t.Errorf("adopted stack not tagged: %s", st)
	}
	c := &Counter{}
	res, err = Deploy(context.Background(), src, opts(cfg, c))
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Droplet("S").Outcome; got != Unchanged || changes(c)+c.Count("CreateChangeSet") != 0 {
		t.Errorf("rerun: %s, calls %v", got, c.Counts())
	}
}

// A stack name made by a droplet deployed in the same run is known only
// at the droplet's own step: the same rules hold there, before its first
// change. Here Net's output names a stack that exists and is not S's, and
// then one CloudFormation refuses: S fails, the stack is left as it was.
func TestStackNameFromThisRunChecked(t *testing.T) {
	cfg := awsConfig(t)
	const netTpl = "Parameters:\n  Name:\n    Type: String\nResources:\n  T:\n    Type: AWS::SNS::Topic\nOutputs:\n  BucketName:\n    Value: !Ref Name\n"
	for _, tc := range []struct {
		name string
		want error
	}{{"fx-", ErrForeignStack}, {"fx.", assembly.ErrStackName}} {
		u := uniq()
		target := tc.name + u
		if tc.want == ErrForeignStack {
			createForeignStack(t, cfg, target, nil)
		}
		var before string
		if tc.want == ErrForeignStack {
			before = stackState(t, cfg, target)
		}
		src := signedSource(t, manifest(map[string]any{
			"Net": stack("Net", env, "fxnet-"+u, "net.yaml", map[string]string{"Name": target}),
			"S":   stack("S", env, "${Net.output.BucketName}", "t.yaml", nil),
		}), files{"net.yaml": netTpl, "t.yaml": topics(2)})
		o := opts(cfg, nil)
		o.Method = Direct
		res, err := Deploy(context.Background(), src, o)
		if !errors.Is(err, tc.want) || res.Droplet("S").Outcome != Failed || res.Droplet("Net").Outcome != Created {
			t.Fatalf("%s: %v (Net %s, S %s)", tc.name, err, res.Droplet("Net").Outcome, res.Droplet("S").Outcome)
		}
		if tc.want == ErrForeignStack {
			if after := stackState(t, cfg, target); after != before {
				t.Errorf("the foreign stack changed:\n%s\nwas\n%s", after, before)
			}
		}
	}
}
