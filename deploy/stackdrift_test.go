package deploy

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/cloud-assembly/assemble/internal/testenv/moto"
)

const defaultsTemplate = `Parameters:
  Mode:
    Type: String
    Default: safe
Resources:
  Topic:
    Type: AWS::SNS::Topic
Outputs:
  Seen:
    Value: !Ref Mode
`

const (
	allowPolicy = `{"Statement":[{"Effect":"Allow","Action":"Update:*","Principal":"*","Resource":"*"}]}`
	denyPolicy  = `{"Statement":[{"Effect":"Deny","Action":"Update:*","Principal":"*","Resource":"*"}]}`
)

// settingsStack is a stack droplet that signs every setting.
func settingsStack(name, template string, topic string) map[string]any {
	d := stack("S", env, name, template, nil)
	p := d["properties"].(map[string]any)
	p["stackPolicy"] = "policy.json"
	p["terminationProtection"] = true
	p["tags"] = map[string]any{"team": "core"}
	if topic != "" {
		p["notificationArns"] = []any{topic}
	}
	return d
}

// topic makes an SNS topic in moto (which runs CloudFormation's
// notifications to it) and returns its ARN. The SNS API is called by hand,
// a Query request moto routes by its credential scope: the SDK's SNS
// module is not a dependency of the project.
func topic(t *testing.T, cfg aws.Config, name string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, moto.Endpoint(t)+"/", strings.NewReader(url.Values{"Action": {"CreateTopic"}, "Name": {name}, "Version": {"2010-03-31"}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=testing/20260101/"+cfg.Region+"/sns/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("sns:CreateTopic: %s", resp.Status)
	}
	return "arn:aws:sns:" + cfg.Region + ":" + motoAccount + ":" + name
}

// statusSays runs Status and checks that it differs, for the droplet id,
// with a difference that holds want.
func statusSays(t *testing.T, src *Source, cfg aws.Config, id, want string) {
	t.Helper()
	st, err := Status(context.Background(), src, opts(cfg, nil))
	if !errors.Is(err, ErrDiffers) || st.Match {
		t.Fatalf("status: %v, want ErrDiffers naming %q", err, want)
	}
	for _, d := range st.Droplets {
		if d.ID == id {
			if d.State != "differs" || !strings.Contains(strings.Join(d.Differences, "\n"), want) {
				t.Fatalf("status of %s: %s %q, want a difference saying %q", id, d.State, d.Differences, want)
			}
			return
		}
	}
	t.Fatalf("no status for %s", id)
}

func statusMatches(t *testing.T, src *Source, cfg aws.Config) {
	t.Helper()
	st, err := Status(context.Background(), src, opts(cfg, nil))
	if err != nil || !st.Match {
		var diffs []string
		for _, d := range st.Droplets {
			diffs = append(diffs, d.ID+": "+d.State+" "+strings.Join(d.Differences, "; ")+d.Error)
		}
		t.Fatalf("status: %v %v", err, diffs)
	}
}

// Everything a stack droplet signs is compared and restored: each setting
// changed by hand makes status differ naming it, and the next deploy puts
// it back. moto 5.2.1 applies neither parameters nor tags when it executes
// an update change set, and UpdateStack there refuses an update whose
// template and parameters are unchanged ("No updates are to be
// performed") whatever else changed, so the restores go by UpdateStack
// (Method Direct) and the tag case uses a stack without parameters; moto's
// UpdateStack ignores NotificationARNs and it has no
// UpdateTerminationProtection, so those hand changes cannot be made there:
// a droplet signing another value stands for each.
func TestStackSettingsDriftAndRestore(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	name := "drift-" + u
	c := cloudformation.NewFromConfig(cfg)
	arn := topic(t, cfg, "drift-"+u)
	fs := files{"stack.yaml": defaultsTemplate, "plain.yaml": topics(1), "policy.json": allowPolicy}
	src := signedSource(t, manifest(map[string]any{"S": settingsStack(name, "stack.yaml", arn)}), fs)
	o := opts(cfg, nil)
	o.Method = Direct
	if res, err := Deploy(context.Background(), src, o); err != nil || res.Droplet("S").Outcome != Created {
		t.Fatalf("create: %v", err)
	}
	statusMatches(t, src, cfg)

	for _, tc := range []struct {
		name string
		hand func(t *testing.T)
		want string
	}{
		{"stack policy", func(t *testing.T) {
			_, err := c.SetStackPolicy(context.Background(), &cloudformation.SetStackPolicyInput{StackName: aws.String(name), StackPolicyBody: aws.String(denyPolicy)})
			if err != nil {
				t.Fatal(err)
			}
		}, "the stack policy is not policy.json"},
		{"parameter left at its default", func(t *testing.T) {
			_, err := c.UpdateStack(context.Background(), &cloudformation.UpdateStackInput{StackName: aws.String(name), UsePreviousTemplate: aws.Bool(true),
				Parameters: []cfntypes.Parameter{{ParameterKey: aws.String("Mode"), ParameterValue: aws.String("unsafe")}}})
			if err != nil {
				t.Fatal(err)
			}
		}, `parameter Mode is "unsafe", want "safe"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.hand(t)
			statusSays(t, src, cfg, "S", tc.want)
			res, err := Deploy(context.Background(), src, o)
			if err != nil || res.Droplet("S").Outcome != Updated {
				t.Fatalf("deploy: %v %+v", err, res.Droplet("S"))
			}
			statusMatches(t, src, cfg)
		})
	}

	t.Run("termination protection", func(t *testing.T) {
		d := settingsStack(name, "stack.yaml", arn)
		d["properties"].(map[string]any)["terminationProtection"] = false
		statusSays(t, signedSource(t, manifest(map[string]any{"S": d}), fs), cfg, "S", "termination protection is on, want off")
	})

	t.Run("notification ARNs", func(t *testing.T) {
		other := signedSource(t, manifest(map[string]any{"S": settingsStack(name, "stack.yaml", topic(t, cfg, "other-"+u))}), fs)
		statusSays(t, other, cfg, "S", "notification ARNs are ["+arn+"], want [")
	})

	t.Run("tags", func(t *testing.T) {
		tname := "tags-" + u
		d := stack("T", env, tname, "plain.yaml", nil)
		d["properties"].(map[string]any)["tags"] = map[string]any{"team": "core"}
		src := signedSource(t, manifest(map[string]any{"T": d}), fs)
		if _, err := Deploy(context.Background(), src, o); err != nil {
			t.Fatal(err)
		}
		statusMatches(t, src, cfg)
		for _, hand := range []struct {
			tags []cfntypes.Tag
			want string
		}{
			{[]cfntypes.Tag{{Key: aws.String("team"), Value: aws.String("other")}, {Key: aws.String(TagDroplet), Value: aws.String("T")}}, `tag team is "other", want "core"`},
			{[]cfntypes.Tag{{Key: aws.String("team"), Value: aws.String("core")}, {Key: aws.String(TagDroplet), Value: aws.String("T")}, {Key: aws.String("extra"), Value: aws.String("x")}}, `tag extra is set ("x"), which the droplet does not sign`},
			{[]cfntypes.Tag{{Key: aws.String(TagDroplet), Value: aws.String("T")}}, `tag team is not set (want "core")`},
		} {
			if _, err := c.UpdateStack(context.Background(), &cloudformation.UpdateStackInput{StackName: aws.String(tname), UsePreviousTemplate: aws.Bool(true), Tags: hand.tags}); err != nil {
				t.Fatal(err)
			}
			statusSays(t, src, cfg, "T", hand.want)
			if res, err := Deploy(context.Background(), src, o); err != nil || res.Droplet("T").Outcome != Updated {
				t.Fatalf("deploy: %v %+v", err, res.Droplet("T"))
			}
			statusMatches(t, src, cfg)
		}
	})
}

// A nested stack's template is compared with the signed file its parent's
// TemplateURL names; changed by hand, status names it and deploy puts the
// signed template back.
func TestNestedTemplateDriftAndRestore(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	bucket := "nested-" + u
	makeBucket(t, cfg, bucket)
	parent := "Resources:\n  Child:\n    Type: AWS::CloudFormation::Stack\n    Properties:\n      TemplateURL: !Sub https://s3.${AWS::Region}.${AWS::URLSuffix}/" + bucket + "/app/child.template\n"
	src := signedSource(t, manifest(map[string]any{
		"ChildTemplate": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": env,
			"properties": map[string]any{"file": "child.yaml", "bucketName": bucket, "objectKey": "app/child.template"}},
		"Parent": stack("Parent", env, "parent-"+u, "parent.yaml", nil, "ChildTemplate"),
	}), files{"parent.yaml": parent, "child.yaml": topics(2)})
	o := opts(cfg, nil)
	o.Method = Direct
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	statusMatches(t, src, cfg)
	c := cloudformation.NewFromConfig(cfg)
	res, err := c.ListStackResources(context.Background(), &cloudformation.ListStackResourcesInput{StackName: aws.String("parent-" + u)})
	if err != nil || len(res.StackResourceSummaries) != 1 {
		t.Fatalf("resources: %v %+v", err, res)
	}
	nested := aws.ToString(res.StackResourceSummaries[0].PhysicalResourceId)
	if _, err := c.UpdateStack(context.Background(), &cloudformation.UpdateStackInput{StackName: aws.String(nested), TemplateBody: aws.String(topics(3))}); err != nil {
		t.Fatal(err)
	}
	statusSays(t, src, cfg, "Parent", "nested stack Child ("+nested+") runs another template than child.yaml")
	dr, err := Deploy(context.Background(), src, o)
	if err != nil || dr.Droplet("Parent").Outcome != Updated {
		t.Fatalf("deploy: %v %+v", err, dr.Droplet("Parent"))
	}
	statusMatches(t, src, cfg)
	got, err := c.GetTemplate(context.Background(), &cloudformation.GetTemplateInput{StackName: aws.String(nested)})
	if err != nil || aws.ToString(got.TemplateBody) != topics(2) {
		t.Errorf("nested template after deploy: %v %q", err, aws.ToString(got.TemplateBody))
	}
}

// failing makes every call of the operation op fail, as AWS refusing it.
func failing(op string) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("assembleTestFail",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if middleware.GetOperationName(ctx) == op {
					return middleware.InitializeOutput{}, middleware.Metadata{}, errors.New("injected: access denied")
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	}
}

// A settings step that fails after the change set fails the droplet, and
// the rerun does not call the stack unchanged: it applies the step. Here
// SetStackPolicy is refused once; UpdateTerminationProtection is not
// implemented by moto 5.2.1 (a 500), so every try fails, and none may end
// "unchanged".
func TestSettingsStepFailureFailsTheDroplet(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	for _, tc := range []struct {
		op      string
		protect bool
	}{{"SetStackPolicy", false}, {"UpdateTerminationProtection", true}} {
		t.Run(tc.op, func(t *testing.T) {
			name := "settle-" + strings.ToLower(tc.op[:6]) + "-" + u
			d := settingsStack(name, "stack.yaml", "")
			d["properties"].(map[string]any)["terminationProtection"] = tc.protect
			src := signedSource(t, manifest(map[string]any{"S": d}), files{"stack.yaml": defaultsTemplate, "policy.json": allowPolicy})
			o := opts(cfg, nil)
			o.APIOptions = append(o.APIOptions, failing(tc.op))
			res, err := Deploy(context.Background(), src, o) // change sets: neither setting goes with CreateChangeSet
			if !errors.Is(err, ErrStackFailed) || !strings.Contains(err.Error(), "settings step cloudformation:"+tc.op+" failed") || res.Droplet("S").Outcome != Failed {
				t.Fatalf("deploy with %s failing: %v %+v", tc.op, err, res.Droplet("S"))
			}
			if st, err := Status(context.Background(), src, opts(cfg, nil)); !errors.Is(err, ErrDiffers) {
				t.Fatalf("status after the failed step: %v %+v", err, st.Droplets)
			}
			if tc.protect {
				res, err = Deploy(context.Background(), src, o) // moto would answer 500, retried

				if res.Droplet("S").Outcome == Unchanged || !errors.Is(err, ErrStackFailed) {
					t.Fatalf("rerun: %v %+v, want the step tried again (and failing on moto)", err, res.Droplet("S"))
				}
				return
			}
			res, err = Deploy(context.Background(), src, opts(cfg, nil))
			if err != nil || res.Droplet("S").Outcome != Updated {
				t.Fatalf("rerun: %v %+v", err, res.Droplet("S"))
			}
			statusMatches(t, src, cfg)
		})
	}
}

// When CloudFormation makes no update although something signed differs
// (moto 5.2.1 answers "No updates are to be performed" to an UpdateStack
// whose template and parameters are unchanged, though its tags are not),
// deploy fails the droplet naming what still differs, never "unchanged".
func TestNoUpdateWithDriftIsNotUnchanged(t *testing.T) {
	cfg := awsConfig(t)
	name := "noupdate-" + uniq()
	d := stack("S", env, name, "stack.yaml", nil)
	d["properties"].(map[string]any)["tags"] = map[string]any{"team": "core"}
	src := signedSource(t, manifest(map[string]any{"S": d}), files{"stack.yaml": defaultsTemplate})
	o := opts(cfg, nil)
	o.Method = Direct
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	c := cloudformation.NewFromConfig(cfg)
	if _, err := c.UpdateStack(context.Background(), &cloudformation.UpdateStackInput{StackName: aws.String(name), UsePreviousTemplate: aws.Bool(true),
		Tags: []cfntypes.Tag{{Key: aws.String("team"), Value: aws.String("other")}, {Key: aws.String(TagDroplet), Value: aws.String("S")}}}); err != nil {
		t.Fatal(err)
	}
	statusSays(t, src, cfg, "S", `tag team is "other", want "core"`)
	res, err := Deploy(context.Background(), src, o)
	if res.Droplet("S").Outcome == Unchanged || !errors.Is(err, ErrStackFailed) || !strings.Contains(err.Error(), `it still differs from the droplet: tag team is "other", want "core"`) {
		t.Fatalf("deploy: %v %+v", err, res.Droplet("S"))
	}
}
