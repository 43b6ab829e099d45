package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"

	"github.com/cloud-assembly/assemble/internal/testenv/moto"
)

// outputsApp is a CDK app of two stacks, each a queue of a fixed name, a
// bucket whose name CloudFormation makes, and outputs; the stacks use the
// LegacyStackSynthesizer, so that they deploy into an account that was
// never bootstrapped (no bootstrap version parameter, no asset to
// publish, the template given inline). The stacks and their outputs are
// declared in sorted order, the order the CDK CLI writes them in.
const outputsApp = `'use strict';
const cdk = require('aws-cdk-lib');
const s3 = require('aws-cdk-lib/aws-s3');
const sqs = require('aws-cdk-lib/aws-sqs');
const app = new cdk.App();
const prefix = app.node.tryGetContext('prefix');
class Out extends cdk.Stack {
  constructor(scope, id, props) {
    super(scope, id, props);
    const b = new s3.Bucket(this, 'Data');
    const q = new sqs.Queue(this, 'Q', { queueName: id + '-queue' });
    new cdk.CfnOutput(this, 'Bucket', { value: b.bucketName });
    new cdk.CfnOutput(this, 'Greeting', { value: 'hello' });
    new cdk.CfnOutput(this, 'Query', { value: 'a=1&b=<2>' });
    new cdk.CfnOutput(this, 'QueueArn', { value: q.queueArn });
    new cdk.CfnOutput(this, 'QueueName', { value: q.queueName });
  }
}
for (const s of ['A', 'B']) {
  new Out(app, prefix + s, { synthesizer: new cdk.LegacyStackSynthesizer() });
}
`

// TestOutputsFileMatchesCDK deploys one cdk.out twice into moto: with the
// real CDK CLI (cdk deploy --outputs-file), then, the stacks deleted, with
// assemble deploy --outputs-file; the two files must be the same bytes,
// but for the values CloudFormation makes up (physical IDs), which differ
// between two creations: there only the keys are compared, and the value
// must be non-empty in both.
//
// moto's limits (moto 5.2.1): a change set publishes no stack outputs, so
// both deploy with CreateStack (cdk deploy --method=direct, assemble
// deploy --method direct); CDK's default synthesizer would need a
// bootstrapped account (an SSM bootstrap version and a staging bucket), so
// the stacks use the LegacyStackSynthesizer.
func TestOutputsFileMatchesCDK(t *testing.T) {
	cli, nodePath := cdkToolkit(t)
	moto.Env(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	work := t.TempDir()
	app := filepath.Join(work, "app")
	os.MkdirAll(app, 0o755)
	if err := os.WriteFile(filepath.Join(app, "app.js"), []byte(outputsApp), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(app, "cdk.json"), []byte(`{"app": "node app.js"}`), 0o644)
	prefix := "cdkout" + time.Now().Format("150405") + "-"
	// cdk deploy synthesizes the app into app/cdk.out, then deploys it;
	// assemble deploys that cdk.out below.
	cdkOut := filepath.Join(app, "cdk.out")
	stacks := []string{prefix + "A", prefix + "B"}
	cdkFile := filepath.Join(work, "cdk-outputs.json")
	start := time.Now()
	if out, err := cdkCommand(ctx, cli, nodePath, app, "deploy", "-c", "prefix="+prefix, "--all", "--method=direct", "--require-approval", "never", "--outputs-file", cdkFile).CombinedOutput(); err != nil {
		t.Fatalf("cdk deploy: %v\n%s", err, out)
	}
	t.Logf("cdk deploy (synth included) took %v", time.Since(start).Round(time.Millisecond))
	start = time.Now()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfn := cloudformation.NewFromConfig(cfg)
	for _, s := range stacks {
		if _, err := cfn.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: aws.String(s)}); err != nil {
			t.Fatal(err)
		}
	}

	cloud := filepath.Join(work, "app.cloud")
	assemble(t, "build", "-q", "-o", cloud, cdkOut)
	keys := filepath.Join("..", "..", "fixtures", "keys")
	assemble(t, "sign", "-q", "--key", filepath.Join(keys, "ed25519.sec.asc"), cloud)
	ours := filepath.Join(work, "assemble-outputs.json")
	assemble(t, "deploy", "-q", "--keyring", filepath.Join(keys, "trusted.asc"), "--method", "direct", "--require-approval", "never", "--outputs-file", ours, cloud)

	t.Logf("assemble build, sign and deploy took %v", time.Since(start).Round(time.Millisecond))
	want, got := readFile(t, cdkFile), readFile(t, ours)
	var w, g map[string]map[string]string
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("cdk's outputs file: %v\n%s", err, want)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("our outputs file: %v\n%s", err, got)
	}
	// The physical IDs: the bucket's name. Each is taken into cdk's file
	// as ours has it; the rest must be the same bytes.
	for _, s := range stacks {
		if len(w[s]) != 5 {
			t.Fatalf("cdk wrote %d outputs for %s, want the app's 5:\n%s", len(w[s]), s, want)
		}
		cv, ov := w[s]["Bucket"], g[s]["Bucket"]
		if cv == "" || ov == "" {
			t.Fatalf("stack %s's Bucket output: cdk %q, assemble %q", s, cv, ov)
		}
		q, _ := json.Marshal(cv)
		o, _ := json.Marshal(ov)
		want = bytes.Replace(want, q, o, 1)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("the outputs files differ (beyond the buckets' names):\n--- cdk deploy --outputs-file\n%s--- assemble deploy --outputs-file\n%s", want, got)
	}
	if !strings.Contains(string(got), `"a=1&b=<2>"`) {
		t.Errorf("the Query output is escaped, as JSON.stringify does not:\n%s", got)
	}
}
