package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"

	"github.com/cloud-assembly/assemble/deploy"
	"github.com/cloud-assembly/assemble/internal/testenv/moto"
)

// storyCloud writes a signed assembly of two stacks with outputs (the
// second's template given) and returns its path.
func storyCloud(t *testing.T, dir, u, second string) string {
	t.Helper()
	env := "aws://123456789012/us-east-1"
	m, _ := json.Marshal(map[string]any{"schema": "cloud-assembly/1.0", "droplets": map[string]any{
		"Net": map[string]any{"type": "npm://@aws-cdk/aws-cloudformation.StackDroplet", "environment": env,
			"properties": map[string]any{"stackName": "net-" + u, "template": "net.yaml"}},
		"App": map[string]any{"type": "npm://@aws-cdk/aws-cloudformation.StackDroplet", "environment": env,
			"properties": map[string]any{"stackName": "app-" + u, "template": "app.yaml"}},
	}})
	net := "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\nOutputs:\n  TopicArn:\n    Value: !Ref Topic\n  Name:\n    Value: net-" + u + "\n"
	sub := filepath.Join(dir, strings.ReplaceAll(u, "/", ""))
	os.MkdirAll(sub, 0o755)
	unsigned := filepath.Join(sub, "u.cloud")
	writeCloud(t, unsigned, map[string]string{"manifest.json": string(m), "net.yaml": net, "app.yaml": second})
	return sign(t, sub, unsigned)
}

// --outputs-file writes what `cdk deploy --outputs-file` writes: by
// stack name, each output's key and value (the CDK CLI's
// stackOutputs[stack.stackName] = outputs, JSON with 2 spaces); --json
// stays one object on standard output (--method direct: moto's change
// sets publish no outputs), the events go to --events as JSON
// lines, and the text mode ends with the per-droplet table.
func TestDeployOutputsFileAndEvents(t *testing.T) {
	moto.Env(t)
	dir := t.TempDir()
	u := strings.ToLower(time.Now().Format("150405.000"))
	u = strings.ReplaceAll(u, ".", "")
	keyring, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc"))
	app := "Resources:\n  Queue:\n    Type: AWS::SQS::Queue\nOutputs:\n  QueueUrl:\n    Value: !Ref Queue\n"
	cloud := storyCloud(t, dir, u, app)
	outputs, events := filepath.Join(dir, "outputs.json"), filepath.Join(dir, "events.jsonl")
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"assemble", "deploy", "--json", "--method", "direct", "--keyring", keyring, "--outputs-file", outputs, "--events", events, cloud}, nil, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	var obj map[string]any
	dec := json.NewDecoder(&stdout)
	if err := dec.Decode(&obj); err != nil || dec.More() {
		t.Fatalf("stdout is not one object: %v", err)
	}
	if stderr.Len() != 0 {
		t.Errorf("with --events FILE and --json, stderr: %s", stderr.String())
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]string{}
	for _, name := range []string{"net-" + u, "app-" + u} {
		out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(context.Background(), &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		want[name] = map[string]string{}
		for _, o := range out.Stacks[0].Outputs {
			want[name][aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
		}
	}
	b, err := os.ReadFile(outputs)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]string
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	wb, _ := json.Marshal(want)
	gb, _ := json.Marshal(got)
	if string(wb) != string(gb) || len(got["net-"+u]) != 2 || !strings.HasPrefix(string(b), "{\n  \"") {
		t.Errorf("outputs file:\n%s\nwant (DescribeStacks) %s", b, wb)
	}
	f, err := os.Open(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sawStackEvent := false
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		var e struct {
			Droplet, Message string
			Time             time.Time
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Droplet == "" || e.Time.IsZero() {
			t.Fatalf("event line %q: %v", sc.Text(), err)
		}
		sawStackEvent = sawStackEvent || strings.Contains(e.Message, "CREATE_COMPLETE AWS::CloudFormation::Stack app-"+u) // moto reports the stack's events only
	}
	if n == 0 || !sawStackEvent {
		t.Errorf("%d events, a stack event among them: %v", n, sawStackEvent)
	}

	// A failed deploy in text mode ends with the table too; the outputs
	// file is written with what did deploy.
	broken := storyCloud(t, dir, u+"b", "Resources:\n  Broken:\n    Type: AWS::SNS::Topic\n    Properties: [\n")
	stdout.Reset()
	stderr.Reset()
	code = run(context.Background(), []string{"assemble", "deploy", "--method", "direct", "--keyring", keyring, "--require-approval", "never", "--outputs-file", outputs, broken}, nil, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	for _, re := range []string{`(?m)^DROPLET +KIND +OUTCOME +TIME +OUTPUTS$`, `(?m)^Net +stack +created +[0-9.]+s +Name=net-` + u + `b TopicArn=`, `(?m)^App +stack +failed +[0-9.]+s *$`} {
		if !regexp.MustCompile(re).MatchString(stdout.String()) {
			t.Errorf("no %s in\n%s", re, stdout.String())
		}
	}
	b, _ = os.ReadFile(outputs)
	if !strings.Contains(string(b), `"net-`+u+`b"`) || strings.Contains(string(b), `"app-`+u+`b"`) {
		t.Errorf("outputs after a failure:\n%s", b)
	}
}

// The default text on standard error: one upload is one line; the
// aws CLI's and cdk's flag names get our names as hints.
func TestDeployQuietAndForeignFlags(t *testing.T) {
	for _, e := range []deploy.Event{{Droplet: "F", Message: "deploying (file)"}, {Droplet: "F", Message: "uploading s3://b/k (5 bytes)"}, {Droplet: "F", Message: "uploaded"}} {
		if !chatter(e) {
			t.Errorf("%q is shown", e.Message)
		}
	}
	for _, e := range []deploy.Event{{Droplet: "F", Message: "uploaded s3://b/k (5 bytes)"}, {Droplet: "S", Message: "CREATE_FAILED AWS::SNS::Topic T: denied"}} {
		if chatter(e) {
			t.Errorf("%q is hidden", e.Message)
		}
	}
	for _, tc := range []struct{ cmd, flag, want string }{
		{"deploy", "--parameter-overrides", "did you mean --parameter? (--parameter-overrides is aws cloudformation deploy's"},
		{"diff", "--stack-name", "did you mean --only?"},
		{"deploy", "--exclusively", "did you mean --only? (--exclusively is cdk deploy's"},
		{"deploy", "--s3-bucket", "did you mean --staging-bucket?"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"assemble", tc.cmd, tc.flag, "x", "app.cloud"}, nil, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%s %s: exit %d\n%s", tc.cmd, tc.flag, code, stderr.String())
		}
	}
}

// --profile and --region are taken as AWS_PROFILE and AWS_REGION would be:
// a profile the configuration lacks is refused naming it; a region is the
// one the diff's header names.
func TestDiffRegionAndProfile(t *testing.T) {
	moto.Env(t)
	dir := t.TempDir()
	keyring, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc"))
	m, _ := json.Marshal(map[string]any{"schema": "cloud-assembly/1.0", "droplets": map[string]any{
		"S": map[string]any{"type": "npm://@aws-cdk/aws-cloudformation.StackDroplet", "environment": "aws://unknown-account/unknown-region",
			"properties": map[string]any{"stackName": "region-profile", "template": "t.yaml"}}}})
	unsigned := filepath.Join(dir, "u.cloud")
	writeCloud(t, unsigned, map[string]string{"manifest.json": string(m), "t.yaml": "Resources:\n  T:\n    Type: AWS::SNS::Topic\n"})
	cloud := sign(t, dir, unsigned)
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"assemble", "diff", "--keyring", keyring, "--profile", "no-such-profile", cloud}, nil, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "no-such-profile") {
		t.Errorf("--profile: exit %d\n%s", code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := run(context.Background(), []string{"assemble", "diff", "--keyring", keyring, "--region", "eu-west-3", cloud}, nil, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "region eu-west-3;") {
		t.Errorf("--region: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
}
