package deploy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloud-assembly/assemble/assembly"
)

const netTemplate = `Resources:
  Bucket:
    Type: AWS::S3::Bucket
Outputs:
  BucketName:
    Value: !Ref Bucket
`

const appTemplate = `Parameters:
  Target:
    Type: String
Resources:
  Topic:
    Type: AWS::SNS::Topic
Outputs:
  Seen:
    Value: !Ref Target
`

func topics(n int) string {
	var b strings.Builder
	b.WriteString("Resources:\n")
	for i := 0; i < n; i++ {
		b.WriteString("  Topic" + string(rune('A'+i)) + ":\n    Type: AWS::SNS::Topic\n")
	}
	return b.String()
}

func opts(cfg aws.Config, c *Counter) Options {
	o := Options{AWS: &cfg, PollInterval: 20 * time.Millisecond}
	if c != nil {
		o.APIOptions = append(o.APIOptions, c.Middleware)
	}
	return o
}

func changes(c *Counter) int64 {
	return c.Count("CreateStack") + c.Count("UpdateStack") + c.Count("ExecuteChangeSet") + c.Count("PutObject") + c.Count("CreateMultipartUpload") + c.Count("DeleteStack")
}

// Two stacks, the second's parameter an output of the first. moto's change
// sets publish no stack outputs, so references are tested with
// Method Direct (CreateStack/UpdateStack), as the issue says.
func TestStackOutputsFeedNextStack(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	src := signedSource(t, manifest(map[string]any{
		"Net": stack("Net", env, "net-"+u, "net.yaml", nil),
		"App": stack("App", env, "app-"+u, "app.yaml", map[string]string{"Target": "${Net.output.BucketName}"}),
	}), files{"net.yaml": netTemplate, "app.yaml": appTemplate})
	o := opts(cfg, nil)
	o.Method = Direct
	res, err := Deploy(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Order, ","); got != "Net,App" {
		t.Errorf("order %s, want Net,App", got)
	}
	net, app := res.Droplet("Net"), res.Droplet("App")
	if net.Outcome != Created || app.Outcome != Created {
		t.Fatalf("outcomes %s %s, want created", net.Outcome, app.Outcome)
	}
	bucket := net.Attributes["output.BucketName"]
	if bucket == "" || app.Attributes["output.Seen"] != bucket {
		t.Errorf("App saw %q, Net's bucket is %q", app.Attributes["output.Seen"], bucket)
	}
	if !strings.HasPrefix(app.Attributes["stackArn"], "arn:aws:cloudformation:us-east-1:"+motoAccount+":stack/app-"+u) {
		t.Errorf("stackArn %q", app.Attributes["stackArn"])
	}
	// Tagged with the assembly's SHA-256 and the droplet.
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(context.Background(), &cloudformation.DescribeStacksInput{StackName: aws.String("app-" + u)})
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]string{}
	for _, tg := range out.Stacks[0].Tags {
		tags[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
	}
	if tags[TagSHA256] != src.SHA256.Hex() || tags[TagDroplet] != "App" {
		t.Errorf("tags %v, want %s=%s %s=App", tags, TagSHA256, src.SHA256, TagDroplet)
	}

	// A rerun changes nothing.
	c := &Counter{}
	res, err = Deploy(context.Background(), src, opts(cfg, c))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Droplets {
		if d.Outcome != Unchanged {
			t.Errorf("rerun: %s %s, want unchanged", d.ID, d.Outcome)
		}
	}
	if n := changes(c) + c.Count("CreateChangeSet"); n != 0 {
		t.Errorf("rerun made %d changing calls: %v", n, c.Counts())
	}
	st, err := Status(context.Background(), src, opts(cfg, nil))
	if err != nil || !st.Match {
		t.Fatalf("status: %v %+v", err, st)
	}
}

// The change-set path: create, update, and an assembly with nothing new
// for the stack (its change set holds no changes and is not executed).
func TestChangeSetCreateUpdateNoChange(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	name := "cs-" + u
	m := manifest(map[string]any{"Topics": stack("Topics", env, name, "t.yaml", nil)})
	run := func(fs files) (*Result, *Counter) {
		t.Helper()
		c := &Counter{}
		res, err := Deploy(context.Background(), signedSource(t, m, fs), opts(cfg, c))
		if err != nil {
			t.Fatal(err)
		}
		return res, c
	}
	res, c := run(files{"t.yaml": topics(1)})
	if o := res.Droplet("Topics").Outcome; o != Created || c.Count("ExecuteChangeSet") != 1 || c.Count("CreateStack") != 0 {
		t.Fatalf("create: %s, calls %v", o, c.Counts())
	}
	res, c = run(files{"t.yaml": topics(2)})
	if o := res.Droplet("Topics").Outcome; o != Updated || c.Count("ExecuteChangeSet") != 1 || c.Count("UpdateStack") != 0 {
		t.Fatalf("update: %s, calls %v", o, c.Counts())
	}
	// Another assembly (another file, so another SHA-256), the same
	// template: no change set is made (issue 27, item 9).
	res, c = run(files{"t.yaml": topics(2), "notes.txt": "new"})
	if o := res.Droplet("Topics").Outcome; o != Unchanged || c.Count("ExecuteChangeSet") != 0 || c.Count("CreateChangeSet") != 0 || c.Count("UpdateStack") != 0 {
		t.Fatalf("no change: %s, calls %v", o, c.Counts())
	}
}

func TestFilesAndDirectories(t *testing.T) {
	cfg := awsConfig(t)
	bucket := "files-" + uniq()
	makeBucket(t, cfg, bucket)
	src := signedSource(t, manifest(map[string]any{
		"Logo": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": env,
			"properties": map[string]any{"file": "assets/logo.txt", "bucketName": bucket, "objectKey": "logo.txt"}},
		"Site": map[string]any{"type": "npm://@aws-cdk/assets.DirectoryDroplet", "environment": env,
			"properties": map[string]any{"directory": "site", "bucketName": bucket, "keyPrefix": "www/"}},
		"Zip": map[string]any{"type": "npm://@aws-cdk/assets.DirectoryDroplet", "environment": env,
			"properties": map[string]any{"directory": "site", "bucketName": bucket, "objectKey": "site.zip"}},
	}), files{"assets/logo.txt": "logo", "site/index.html": "<h1>hi</h1>", "site/css/style.css": "h1{}"})
	res, err := Deploy(context.Background(), src, opts(cfg, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"Logo", "Site", "Zip"} {
		if o := res.Droplet(id).Outcome; o != Uploaded {
			t.Errorf("%s: %s, want uploaded", id, o)
		}
	}
	if got := strings.Join(objects(t, cfg, bucket), ","); got != "logo.txt,site.zip,www/css/style.css,www/index.html" {
		t.Errorf("objects %s", got)
	}
	if a := res.Droplet("Site").Attributes; a["bucketName"] != bucket || a["keyPrefix"] != "www/" {
		t.Errorf("Site attributes %v", a)
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	head, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("logo.txt")})
	if err != nil {
		t.Fatal(err)
	}
	if head.Metadata[MetaSHA256] != src.SHA256.Hex() || head.Metadata[MetaDroplet] != "Logo" ||
		head.Metadata[MetaContentSHA256] != hexSHA256([]byte("logo")) {
		t.Errorf("metadata %v", head.Metadata)
	}

	// A rerun uploads nothing.
	cnt := &Counter{}
	res, err = Deploy(context.Background(), src, opts(cfg, cnt))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Droplets {
		if d.Outcome != Unchanged {
			t.Errorf("rerun: %s %s", d.ID, d.Outcome)
		}
	}
	if n := cnt.Count("PutObject"); n != 0 {
		t.Errorf("rerun: %d PutObject", n)
	}

	// Status: all match, then one object changed behind our back.
	if st, err := Status(context.Background(), src, opts(cfg, nil)); err != nil || !st.Match {
		t.Fatalf("status: %v %+v", err, st)
	}
	if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("www/index.html"), Body: strings.NewReader("defaced")}); err != nil {
		t.Fatal(err)
	}
	st, err := Status(context.Background(), src, opts(cfg, nil))
	if !errors.Is(err, ErrDiffers) || st.Match {
		t.Fatalf("status after change: %v", err)
	}
	for _, d := range st.Droplets {
		want := "match"
		if d.ID == "Site" {
			want = "differs"
		}
		if d.State != want {
			t.Errorf("%s: %s %v, want %s", d.ID, d.State, d.Differences, want)
		}
	}
	if d := st.Droplets[len(st.Droplets)-2]; d.ID == "Site" && !strings.Contains(strings.Join(d.Differences, "\n"), "s3://"+bucket+"/www/index.html holds other bytes") {
		t.Errorf("Site differences %v", d.Differences)
	}
}

// Every refusal happens before anything changes: no stack, no object.
func TestRefusalsChangeNothing(t *testing.T) {
	cfg := awsConfig(t)
	for _, tc := range []struct {
		name string
		edit func(ds map[string]any, m map[string]any)
		opts func(*Options)
		want error
	}{
		{name: "wrong-account", want: ErrAccount, edit: func(ds, m map[string]any) {
			ds["Stack"].(map[string]any)["environment"] = "aws://111111111111/us-east-1"
		}},
		{name: "missing-parameter", want: ErrMissing, edit: func(ds, m map[string]any) {
			m["missing"] = map[string]any{"stack-parameter:Stack:Email": map[string]any{"provider": "stack-parameter", "props": map[string]any{"droplet": "Stack", "parameter": "Email"}}}
		}},
		{name: "undeployable", want: ErrUndeployable, edit: func(ds, m map[string]any) {
			ds["Blue"] = map[string]any{"type": "npm://@cloud-assembly/blueprint.BlueprintDroplet", "environment": env, "properties": map[string]any{"blueprint": "bp.yaml"}}
		}},
		{name: "error-metadata", want: ErrMetadataError, edit: func(ds, m map[string]any) {
			ds["Stack"].(map[string]any)["metadata"] = map[string]any{"synth": map[string]any{"kind": "error", "value": "lookup failed"}}
		}},
		{name: "parameter-the-assembly-sets", want: ErrParameter, opts: func(o *Options) { o.Parameters = map[string]string{"Stack.Target": "x"} }},
		{name: "only-unknown", want: ErrOnly, opts: func(o *Options) { o.Only = []string{"Nope"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := uniq()
			bucket := "refuse-" + u
			makeBucket(t, cfg, bucket)
			ds := map[string]any{
				"Stack": stack("Stack", env, "refuse-"+u, "app.yaml", map[string]string{"Target": "t"}),
				"File": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": env,
					"properties": map[string]any{"file": "f.txt", "bucketName": bucket, "objectKey": "f.txt"}},
			}
			m := manifest(ds)
			if tc.edit != nil {
				tc.edit(ds, m)
			}
			src := signedSource(t, m, files{"app.yaml": appTemplate, "f.txt": "f", "bp.yaml": "resources: {}\n"})
			o := opts(cfg, nil)
			if tc.opts != nil {
				tc.opts(&o)
			}
			for _, plan := range []bool{true, false} {
				o.Plan = plan
				_, err := Deploy(context.Background(), src, o)
				if !errors.Is(err, tc.want) {
					t.Fatalf("plan=%v: got %v, want %v", plan, err, tc.want)
				}
			}
			if s := stacksNamed(t, cfg, u); len(s) != 0 {
				t.Errorf("stacks made: %v", s)
			}
			if o := objects(t, cfg, bucket); len(o) != 0 {
				t.Errorf("objects made: %v", o)
			}
		})
	}
}

// A plan creates nothing that remains: the change set and the stack it
// made for review are deleted; uploads are listed, not made; references to
// droplets that would change are known after deploy.
func TestPlanLeavesNothing(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	bucket := "plan-" + u
	makeBucket(t, cfg, bucket)
	src := signedSource(t, manifest(map[string]any{
		"Net": stack("Net", env, "plannet-"+u, "net.yaml", nil),
		"App": stack("App", env, "planapp-"+u, "app.yaml", map[string]string{"Target": "${Net.output.BucketName}"}),
		"File": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": env,
			"properties": map[string]any{"file": "f.txt", "bucketName": bucket, "objectKey": "f.txt"}},
	}), files{"net.yaml": netTemplate, "app.yaml": appTemplate, "f.txt": "f"})
	o := opts(cfg, nil)
	o.Plan = true
	res, err := Deploy(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	net, app, file := res.Droplet("Net"), res.Droplet("App"), res.Droplet("File")
	if len(net.Changes) != 1 || net.Changes[0].Action != "Add" || net.Changes[0].LogicalID != "Bucket" {
		t.Errorf("Net changes %+v", net.Changes)
	}
	if strings.Join(app.KnownAfterDeploy, ",") != "Net.output.BucketName" {
		t.Errorf("App known after deploy: %v", app.KnownAfterDeploy)
	}
	if !strings.Contains(strings.Join(file.Actions, "\n"), "upload s3://"+bucket+"/f.txt (1 bytes)") {
		t.Errorf("File actions %v", file.Actions)
	}
	if s := stacksNamed(t, cfg, u); len(s) != 0 {
		t.Errorf("stacks left: %v", s)
	}
	if o := objects(t, cfg, bucket); len(o) != 0 {
		t.Errorf("objects left: %v", o)
	}
}

// A failed stack stops what depends on it; the message names the stack; a
// rerun after the fix continues.
func TestFailureStopsDependents(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	m := manifest(map[string]any{
		"Base": stack("Base", env, "base-"+u, "base.yaml", nil),
		"Top":  stack("Top", env, "top-"+u, "top.yaml", nil, "Base"),
		"Side": stack("Side", env, "side-"+u, "side.yaml", nil),
	})
	bad := "Resources:\n  Broken:\n    Type: AWS::SNS::Topic\n    Properties: [\n"
	// A template that cannot be read cannot be reviewed: deploy it
	// unreviewed, for CloudFormation to refuse.
	o := opts(cfg, nil)
	o.RequireApproval = ApproveNever
	res, err := Deploy(context.Background(), signedSource(t, m, files{"base.yaml": bad, "top.yaml": topics(1), "side.yaml": topics(1)}), o)
	if !errors.Is(err, ErrStackFailed) || !errors.Is(err, ErrDependency) {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(err.Error(), "base-"+u) {
		t.Errorf("error does not name the stack: %v", err)
	}
	if res.Droplet("Base").Outcome != Failed || res.Droplet("Top").Outcome != NotStarted || res.Droplet("Side").Outcome != Created {
		t.Errorf("outcomes %s %s %s", res.Droplet("Base").Outcome, res.Droplet("Top").Outcome, res.Droplet("Side").Outcome)
	}
	if s := stacksNamed(t, cfg, "top-"+u); len(s) != 0 {
		t.Errorf("dependent deployed: %v", s)
	}
	res, err = Deploy(context.Background(), signedSource(t, m, files{"base.yaml": topics(1), "top.yaml": topics(1), "side.yaml": topics(1)}), opts(cfg, nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.Droplet("Base").Outcome != Created || res.Droplet("Top").Outcome != Created || res.Droplet("Side").Outcome != Unchanged {
		t.Errorf("rerun outcomes %s %s %s", res.Droplet("Base").Outcome, res.Droplet("Top").Outcome, res.Droplet("Side").Outcome)
	}
}

// A CDK file asset's destination keeps CDK's ${AWS::AccountId} and
// ${AWS::Region} (escaped in the manifest): they are the droplet's.
func TestCDKAssetPlaceholders(t *testing.T) {
	cfg := awsConfig(t)
	bucket := "cdk-" + motoAccount + "-us-east-1"
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}) // shared: may exist
	key := uniq() + ".zip"
	src := signedSource(t, manifest(map[string]any{
		"Asset": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": "aws://unknown-account/unknown-region",
			"properties": map[string]any{"file": "a.zip", "bucketName": `cdk-\${AWS::AccountId}-\${AWS::Region}`, "objectKey": key}},
	}), files{"a.zip": "zip"})
	res, err := Deploy(context.Background(), src, opts(cfg, nil))
	if err != nil {
		t.Fatal(err)
	}
	if a := res.Droplet("Asset").Attributes; a["bucketName"] != bucket {
		t.Errorf("bucketName %q, want %q", a["bucketName"], bucket)
	}
	if _, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
		t.Errorf("not uploaded: %v", err)
	}
}

// Status compares what it can: a droplet with no deployer is "unknown",
// and the whole does not match.
func TestStatusUndeployable(t *testing.T) {
	cfg := awsConfig(t)
	bucket := "st-" + uniq()
	makeBucket(t, cfg, bucket)
	src := signedSource(t, manifest(map[string]any{
		"Blue": map[string]any{"type": "npm://@cloud-assembly/blueprint.BlueprintDroplet", "environment": env, "properties": map[string]any{"blueprint": "bp.yaml"}},
		"File": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": env,
			"properties": map[string]any{"file": "f.txt", "bucketName": bucket, "objectKey": "f.txt"}},
	}), files{"bp.yaml": "resources: {}\n", "f.txt": "f"})
	o := opts(cfg, nil)
	o.Only = []string{"File"}
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	st, err := Status(context.Background(), src, opts(cfg, nil))
	if !errors.Is(err, ErrDiffers) || st.Droplets[0].ID != "Blue" || st.Droplets[0].State != "unknown" || st.Droplets[1].State != "match" {
		t.Fatalf("%v %+v %+v", err, st.Droplets[0], st.Droplets[1])
	}
}

// --method direct updates a stack in place; the stack policy, termination
// protection and notification ARNs come from the droplet; status names a
// parameter changed behind deploy's back.
func TestDirectUpdateAndStackSettings(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	name := "settings-" + u
	props := func(tpl string) map[string]any {
		d := stack("S", env, name, tpl, map[string]string{"Target": "one"})
		p := d["properties"].(map[string]any)
		p["stackPolicy"] = "policy.json"
		p["terminationProtection"] = true
		p["tags"] = map[string]any{"team": "web"}
		return d
	}
	policy := `{"Statement":[{"Effect":"Allow","Action":"Update:*","Principal":"*","Resource":"*"}]}`
	fs := files{"app.yaml": appTemplate, "app2.yaml": appTemplate + "  Extra:\n    Value: x\n", "policy.json": policy}
	o := opts(cfg, nil)
	o.Method = Direct
	res, err := Deploy(context.Background(), signedSource(t, manifest(map[string]any{"S": props("app.yaml")}), fs), o)
	if err != nil || res.Droplet("S").Outcome != Created {
		t.Fatalf("create: %v %s", err, res.Droplet("S").Outcome)
	}
	src := signedSource(t, manifest(map[string]any{"S": props("app2.yaml")}), fs)
	res, err = Deploy(context.Background(), src, o)
	if err != nil || res.Droplet("S").Outcome != Updated {
		t.Fatalf("update: %v %s", err, res.Droplet("S").Outcome)
	}
	c := cloudformation.NewFromConfig(cfg)
	out, err := c.DescribeStacks(context.Background(), &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	s := out.Stacks[0]
	if !aws.ToBool(s.EnableTerminationProtection) {
		t.Error("termination protection not set")
	}
	tags := map[string]string{}
	for _, tg := range s.Tags {
		tags[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
	}
	if tags["team"] != "web" || tags[TagSHA256] != src.SHA256.Hex() {
		t.Errorf("tags %v", tags)
	}
	pol, err := c.GetStackPolicy(context.Background(), &cloudformation.GetStackPolicyInput{StackName: aws.String(name)})
	if err != nil || aws.ToString(pol.StackPolicyBody) != policy {
		t.Errorf("stack policy %q, %v", aws.ToString(pol.StackPolicyBody), err)
	}
	// A parameter changed outside deploy: status names it.
	if _, err := c.UpdateStack(context.Background(), &cloudformation.UpdateStackInput{StackName: aws.String(name), UsePreviousTemplate: aws.Bool(true),
		Parameters: []cfntypes.Parameter{{ParameterKey: aws.String("Target"), ParameterValue: aws.String("two")}}}); err != nil {
		t.Fatal(err)
	}
	st, err := Status(context.Background(), src, opts(cfg, nil))
	if !errors.Is(err, ErrDiffers) || len(st.Droplets[0].Differences) != 1 || st.Droplets[0].Differences[0] != `parameter Target is "two", want "one"` {
		t.Fatalf("status: %v %+v", err, st.Droplets)
	}
}

// A file over S3's 5 TiB object limit is refused before anything changes
// (up to it, objects go in parts: see TestLargeFileStreams).
func TestObjectTooLarge(t *testing.T) {
	r := &runner{src: &Source{sizes: map[string]int64{"big.bin": MaxObjectSize + 1, "d/a": 3 << 40, "d/b": 3 << 40}, names: []string{"big.bin", "d/a", "d/b"}}}
	file := &assembly.Droplet{Properties: map[string]any{"file": "big.bin", "bucketName": "b", "objectKey": "k"}}
	if err := (fileKind{}).check(r, "F", file); !errors.Is(err, ErrUpload) {
		t.Errorf("file: %v", err)
	}
	zip := &assembly.Droplet{Properties: map[string]any{"directory": "d", "bucketName": "b", "objectKey": "d.zip"}}
	if err := (directoryKind{}).check(r, "D", zip); !errors.Is(err, ErrUpload) {
		t.Errorf("zip: %v", err)
	}
	perFile := &assembly.Droplet{Properties: map[string]any{"directory": "d", "bucketName": "b"}}
	if err := (directoryKind{}).check(r, "D", perFile); err != nil {
		t.Errorf("per file: %v", err)
	}
}

// A template or stack policy larger than CloudFormation takes is refused
// before anything is read whole or changed.
func TestTemplateTooLarge(t *testing.T) {
	r := &runner{opts: Options{StagingBucket: "stage"}, src: &Source{sizes: map[string]int64{"big.yaml": MaxTemplateSize + 1, "ok.yaml": MaxTemplateSize, "p.json": MaxStackPolicy + 1}}}
	spec := func(tpl, policy string) *assembly.Droplet {
		p := map[string]any{"stackName": "s", "template": tpl}
		if policy != "" {
			p["stackPolicy"] = policy
		}
		return &assembly.Droplet{Properties: p}
	}
	if err := (stackKind{}).check(r, "S", spec("big.yaml", "")); !errors.Is(err, ErrUndeployable) {
		t.Errorf("template: %v", err)
	}
	if err := (stackKind{}).check(r, "S", spec("ok.yaml", "p.json")); !errors.Is(err, ErrUndeployable) {
		t.Errorf("policy: %v", err)
	}
	if err := (stackKind{}).check(r, "S", spec("ok.yaml", "")); err != nil {
		t.Errorf("a template of %d bytes, staged: %v", MaxTemplateSize, err)
	}
}

// A refusal leaves every targeted droplet not started, each with its own
// reason when it has one.
func TestRefusalPerDroplet(t *testing.T) {
	cfg := awsConfig(t)
	src := signedSource(t, manifest(map[string]any{
		"Blue": map[string]any{"type": "npm://@cloud-assembly/blueprint.BlueprintDroplet", "environment": env, "properties": map[string]any{"blueprint": "bp.yaml"}},
		"S":    stack("S", env, "never-"+uniq(), "app.yaml", map[string]string{"Target": "t"}),
	}), files{"bp.yaml": "resources: {}\n", "app.yaml": appTemplate})
	res, err := Deploy(context.Background(), src, opts(cfg, nil))
	if !errors.Is(err, ErrUndeployable) {
		t.Fatal(err)
	}
	if b := res.Droplet("Blue"); b.Outcome != NotStarted || !errors.Is(b.Err, ErrUndeployable) {
		t.Errorf("Blue: %s %v", b.Outcome, b.Err)
	}
	if s := res.Droplet("S"); s.Outcome != NotStarted || s.Err != nil {
		t.Errorf("S: %s %v", s.Outcome, s.Err)
	}
}
