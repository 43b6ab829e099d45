package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cloud-assembly/assemble/deploy/review"
)

// writes lists the calls a counter saw that are not reads (Get*,
// Describe*, List*, Head*).
func writes(c *Counter) []string {
	var w []string
	for op, n := range c.Counts() {
		if n == 0 {
			continue
		}
		read := false
		for _, p := range []string{"Get", "Describe", "List", "Head"} {
			read = read || strings.HasPrefix(op, p)
		}
		if !read {
			w = append(w, op)
		}
	}
	return w
}

const queueTemplate = `Parameters:
  Timeout: {Type: Number, Default: 30}
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: !Ref Timeout
      DelaySeconds: 0
Outputs:
  QueueUrl:
    Value: !Ref Queue
`

// TestDiffStacksAndObjects: a new, an unchanged and a changed stack
// (property, parameter, tag, output), a file and a directory that change,
// a stack whose parameter is another's output not deployed yet: all read
// only (moto_server).
func TestDiffStacksAndObjects(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	bucket := "diff-" + u
	makeBucket(t, cfg, bucket)
	withTags := func(d map[string]any, tags map[string]string) map[string]any {
		d["properties"].(map[string]any)["tags"] = tags
		return d
	}
	fileDroplet := func(file string) map[string]any {
		return map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": env,
			"properties": map[string]any{"file": file, "bucketName": bucket, "objectKey": "logo.txt"}}
	}
	dirDroplet := map[string]any{"type": "npm://@aws-cdk/assets.DirectoryDroplet", "environment": env,
		"properties": map[string]any{"directory": "site", "bucketName": bucket, "keyPrefix": "www/"}}
	first := signedSource(t, manifest(map[string]any{
		"Same":    stack("Same", env, "same-"+u, "q.yaml", nil),
		"Changed": withTags(stack("Changed", env, "changed-"+u, "q.yaml", map[string]string{"Timeout": "30"}), map[string]string{"team": "a"}),
		"Logo":    fileDroplet("logo.txt"),
		"Site":    dirDroplet,
	}), files{"q.yaml": queueTemplate, "logo.txt": "logo", "site/index.html": "<h1>hi</h1>", "site/old.css": "x"})
	o := opts(cfg, nil)
	o.Method = Direct
	if _, err := Deploy(context.Background(), first, o); err != nil {
		t.Fatal(err)
	}

	changedTemplate := strings.Replace(queueTemplate, "DelaySeconds: 0", "DelaySeconds: 5", 1)
	changedTemplate = strings.Replace(changedTemplate, "Value: !Ref Queue", "Value: !GetAtt Queue.Arn", 1)
	second := signedSource(t, manifest(map[string]any{
		"Same":    stack("Same", env, "same-"+u, "q.yaml", nil),
		"Changed": withTags(stack("Changed", env, "changed-"+u, "q2.yaml", map[string]string{"Timeout": "60"}), map[string]string{"team": "b"}),
		"New":     stack("New", env, "new-"+u, "net.yaml", nil),
		"Uses":    stack("Uses", env, "uses-"+u, "app.yaml", map[string]string{"Target": "${New.output.BucketName}"}),
		"Logo":    fileDroplet("logo2.txt"),
		"Site":    dirDroplet,
	}), files{"q.yaml": queueTemplate, "q2.yaml": changedTemplate, "net.yaml": netTemplate, "app.yaml": appTemplate,
		"logo2.txt": "logo, changed", "site/index.html": "<h1>hello</h1>", "site/new.css": "y"})
	c := &Counter{}
	res, err := Diff(context.Background(), second, DiffOptions{Options: opts(cfg, c)})
	if err != nil {
		t.Fatal(err)
	}
	if w := writes(c); len(w) > 0 {
		t.Errorf("diff made write calls: %v", w)
	}
	validDiffDroplets(t, res)
	state := map[string]*DropletDiff{}
	for _, d := range res.Droplets {
		state[d.ID] = d
	}
	for id, want := range map[string]string{"Same": StateUnchanged, "Changed": StateChanged, "New": StateNew, "Uses": StateNew, "Logo": StateChanged, "Site": StateChanged} {
		if got := state[id].State; got != want {
			t.Errorf("%s: %s, want %s (%v)", id, got, want, state[id].Err)
		}
	}
	if res.Total != 6 || res.Changed != 5 || res.Account != motoAccount || strings.Join(res.Regions, ",") != "us-east-1" {
		t.Errorf("summary: %d of %d change, account %s, regions %v", res.Changed, res.Total, res.Account, res.Regions)
	}
	if len(res.Deployed) != 1 || res.Deployed[0] != first.SHA256 || res.SHA256 != second.SHA256 {
		t.Errorf("deployed %v (want %s), reviewed %s", res.Deployed, first.SHA256, res.SHA256)
	}
	ch := state["Changed"].Stack
	got, _ := json.Marshal(map[string]any{"resources": ch.Resources, "parameters": ch.Parameters, "tags": ch.Tags, "outputs": ch.Outputs})
	want := `{"outputs":[{"path":"QueueUrl","old":"` + stackOutput(t, cfg, "changed-"+u, "QueueUrl") + `","new":{"Fn::GetAtt":["Queue","Arn"]}}],` +
		`"parameters":[{"path":"Timeout","old":"30","new":"60"}],` +
		`"resources":[{"logicalId":"Queue","type":"AWS::SQS::Queue","action":"modify","changes":[{"path":"Properties.DelaySeconds","old":0,"new":5}]}],` +
		`"tags":[{"path":"team","old":"a","new":"b"}]}`
	if string(got) != want {
		t.Errorf("changed stack:\n%s\nwant\n%s", got, want)
	}
	if d := state["Same"].Stack; d.Changed() || d.New {
		t.Errorf("unchanged stack shows changes: %+v", d)
	}
	uses := state["Uses"]
	if strings.Join(uses.Pending, ",") != "New.output.BucketName" || len(uses.Stack.Parameters) != 1 || !uses.Stack.Parameters[0].Pending || uses.Stack.Parameters[0].New != review.Pending {
		t.Errorf("pending parameter: %v %+v", uses.Pending, uses.Stack.Parameters)
	}
	if len(state["New"].Stack.Resources) != 1 || state["New"].Stack.Resources[0].Action != review.Add {
		t.Errorf("new stack resources: %+v", state["New"].Stack.Resources)
	}
	objs := func(id string) string {
		var s []string
		for _, o := range state[id].Objects {
			s = append(s, o.Action+" "+strings.TrimPrefix(o.URL, "s3://"+bucket+"/"))
		}
		return strings.Join(s, ", ")
	}
	if got := objs("Logo"); got != "change logo.txt" {
		t.Errorf("file: %s", got)
	}
	if got := objs("Site"); got != "change www/index.html, add www/new.css, remove www/old.css" {
		t.Errorf("directory: %s", got)
	}
	if lo := state["Logo"].Objects[0]; lo.SHA256 != hexSHA256([]byte("logo, changed")) || lo.OldSHA256 != hexSHA256([]byte("logo")) {
		t.Errorf("file hashes: %+v", lo)
	}
}

func stackOutput(t *testing.T, cfg aws.Config, name, key string) string {
	t.Helper()
	s, err := describeStack(context.Background(), cfnClient(cfg), name)
	if err != nil || s == nil {
		t.Fatalf("stack %s: %v", name, err)
	}
	return stackAttrs(s)["output."+key]
}

func cfnClient(cfg aws.Config) *cloudformation.Client { return cloudformation.NewFromConfig(cfg) }

// TestDiffChangeSet: --change-set asks CloudFormation, then deletes the
// change sets (by ID) and the review stack a new stack's change set made.
func TestDiffChangeSet(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	first := signedSource(t, manifest(map[string]any{"Q": stack("Q", env, "cs-"+u, "q.yaml", nil)}), files{"q.yaml": queueTemplate})
	o := opts(cfg, nil)
	o.Method = Direct
	if _, err := Deploy(context.Background(), first, o); err != nil {
		t.Fatal(err)
	}
	second := signedSource(t, manifest(map[string]any{
		"Q":   stack("Q", env, "cs-"+u, "q.yaml", map[string]string{"Timeout": "90"}),
		"New": stack("New", env, "csnew-"+u, "net.yaml", nil),
	}), files{"q.yaml": queueTemplate, "net.yaml": netTemplate})
	c := &Counter{}
	res, err := Diff(context.Background(), second, DiffOptions{Options: opts(cfg, c), ChangeSet: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Count("CreateChangeSet") != 2 || c.Count("DeleteChangeSet") < 1 || c.Count("DeleteStack") != 1 || c.Count("ExecuteChangeSet") != 0 {
		t.Errorf("calls: %v", c.Counts())
	}
	if got := stacksNamed(t, cfg, "csnew-"+u); len(got) != 0 {
		t.Errorf("the review stack is left: %v", got)
	}
	// moto lists every stack's change sets, executed ones too: those of
	// this stack still there are the ones left.
	cs, err := cfnClient(cfg).ListChangeSets(context.Background(), &cloudformation.ListChangeSetsInput{StackName: aws.String("cs-" + u)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range cs.Summaries {
		if aws.ToString(s.StackName) == "cs-"+u && s.ExecutionStatus == cfntypes.ExecutionStatusAvailable {
			t.Errorf("change set left on the stack: %s", aws.ToString(s.ChangeSetId))
		}
	}
	if res.Changed != 2 {
		t.Errorf("changed %d, want 2", res.Changed)
	}
}

// TestDiffSecurity: a role that trusts anyone is listed as broadening.
func TestDiffSecurity(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	role := "Resources:\n  R:\n    Type: AWS::IAM::Role\n    Properties:\n      AssumeRolePolicyDocument:\n        Statement:\n          - {Effect: Allow, Principal: {Service: lambda.amazonaws.com}, Action: sts:AssumeRole}\n"
	first := signedSource(t, manifest(map[string]any{"R": stack("R", env, "role-"+u, "r.yaml", nil)}), files{"r.yaml": role})
	o := opts(cfg, nil)
	o.Method, o.Capabilities, o.RequireApproval = Direct, []string{"IAM"}, ApproveNever
	if _, err := Deploy(context.Background(), first, o); err != nil {
		t.Fatal(err)
	}
	wide := strings.Replace(role, "{Service: lambda.amazonaws.com}", "{AWS: '*'}", 1)
	second := signedSource(t, manifest(map[string]any{"R": stack("R", env, "role-"+u, "r.yaml", nil)}), files{"r.yaml": wide})
	res, err := Diff(context.Background(), second, DiffOptions{Options: opts(cfg, nil)})
	if err != nil {
		t.Fatal(err)
	}
	validDiffDroplets(t, res)
	sec := res.Droplets[0].Stack.Security
	if res.Broadened != 1 || len(sec) != 1 || sec[0].Principal != "*" || sec[0].Kind != review.KindTrust {
		t.Errorf("security: %d broadened, %+v", res.Broadened, sec)
	}
}

// validDiffDroplets checks each droplet of a diff against
// docs/json/diff.json's droplet schema (what --json prints of it).
func validDiffDroplets(t *testing.T, res *DiffResult) {
	t.Helper()
	dir := filepath.Join("..", "docs", "json")
	c := jsonschema.NewCompiler()
	names, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, p := range names {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource("https://github.com/cloud-assembly/assemble/docs/json/"+filepath.Base(p), doc); err != nil {
			t.Fatal(err)
		}
	}
	sch, err := c.Compile("https://github.com/cloud-assembly/assemble/docs/json/diff.json#/$defs/droplet")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Droplets {
		b, _ := json.Marshal(d)
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("droplet %s: %v\n%s", d.ID, err, b)
		}
	}
}
