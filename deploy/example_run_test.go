package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloud-assembly/assemble/deploy"
	"github.com/cloud-assembly/assemble/trust"
)

// Issue 29: the example program (ExampleRun: verify an assembly at a
// location with a policy file, then deploy it; at most 12 lines) does
// what 'assemble deploy --policy FILE --json LOCATION' does. Both run
// against moto_server on the same signed assembly at an s3:// location,
// each on a cloud without the stack and the objects (they are removed
// between the runs), and give the same result: the same droplets, each
// with the same outcome and actions (but a change set's and a stack's
// generated names, and the time each took), and the same stack and objects afterwards. The stack's template is over 51,200 bytes, so both must
// take the staging bucket from the policy file's deploy section.
// moto records stacks without running their resources.
func TestExampleRunIsDeploy(t *testing.T) {
	cfg := deploy.AWSConfigForTest(t)
	bin := buildCLI(t)
	ctx := context.Background()
	u := deploy.UniqForTest()
	store, staging, objects, stackName := "store-"+u, "staging-"+u, "objects-"+u, "example-"+u
	for _, b := range []string{store, staging, objects} {
		deploy.MakeBucketForTest(t, cfg, b)
	}
	big := "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\nMetadata:\n  Pad: " + strings.Repeat("x", 60000) + "\n"
	m := deploy.ManifestForTest(map[string]any{
		"Stack": deploy.StackForTest("Stack", deploy.EnvForTest, stackName, "big.yaml", nil),
		"File": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": deploy.EnvForTest,
			"properties": map[string]any{"file": "f.txt", "bucketName": objects, "objectKey": "f.txt"}},
	})
	p := deploy.WriteAssemblyForTest(t, m, map[string]string{"big.yaml": big, "f.txt": "hello " + u})
	deploy.SignForTest(t, p, "ed25519.sec.asc", time.Now())
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	body, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(store), Key: aws.String("app.cloud"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
	keyring, _ := filepath.Abs(filepath.Join("..", "fixtures", "keys", "ed25519.pub.asc"))
	policy := filepath.Join(t.TempDir(), "release-policy.yaml")
	if err := os.WriteFile(policy, []byte("keyrings: ["+keyring+"]\nstaging-bucket: "+staging+"\ncapabilities: [IAM]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	loc := "s3://" + store + "/app.cloud"

	// cloud is what the run left: the stack's status and the objects.
	cfn := cloudformation.NewFromConfig(cfg)
	cloud := func() map[string]any {
		out := map[string]any{"objects": deploy.ObjectsForTest(t, cfg, objects), "stacks": deploy.StacksNamedForTest(t, cfg, stackName)}
		for _, b := range []string{objects, staging} {
			out[b] = len(deploy.ObjectsForTest(t, cfg, b)) > 0
		}
		return out
	}
	clear := func() {
		if _, err := cfn.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: aws.String(stackName)}); err != nil {
			t.Fatal(err)
		}
		for _, b := range []string{objects, staging} {
			for _, k := range deploy.ObjectsForTest(t, cfg, b) {
				if _, err := s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String(k)}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if s := deploy.StacksNamedForTest(t, cfg, stackName); len(s) > 0 {
			t.Fatalf("stacks left: %v", s)
		}
	}

	policyFile, location = policy, loc
	out := captureStdout(t, ExampleRun)
	exOut, exErr, _ := strings.Cut(strings.TrimSpace(out), "\n")
	if exErr != "<nil>" {
		t.Fatalf("the example failed: %s\n%s", exErr, exOut)
	}
	exCloud := cloud()
	clear()

	cmd := exec.Command(bin, "deploy", "--policy", policy, "--json", loc)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cliOut, err := cmd.Output()
	if err != nil {
		t.Fatalf("assemble deploy: %v\n%s%s", err, cliOut, stderr.String())
	}
	cliCloud := cloud()
	clear()

	// What is new on every run: a change set's name ends with the time,
	// a stack's ARN with a random ID; a droplet's seconds.
	volatile := regexp.MustCompile(`(change set assemble-[0-9a-f]+-)[0-9]+|(:stack/[^/"]+/)[0-9a-f-]+|("seconds": ?)[0-9.]+`)
	exOut = volatile.ReplaceAllString(exOut, "${1}${2}${3}0")
	cliOut = volatile.ReplaceAll(cliOut, []byte("${1}${2}${3}0"))
	var ex, cli map[string]any
	if err := json.Unmarshal([]byte(exOut), &ex); err != nil {
		t.Fatalf("the example's output: %v\n%s", err, exOut)
	}
	if err := json.Unmarshal(cliOut, &cli); err != nil {
		t.Fatalf("assemble deploy --json: %v\n%s", err, cliOut)
	}
	// The command's object adds what the verification found beside the
	// deploy's result (docs/json/deploy.json).
	for _, k := range []string{"file", "authenticated", "signer"} {
		delete(cli, k)
	}
	if !reflect.DeepEqual(ex, cli) {
		a, _ := json.MarshalIndent(ex, "", "  ")
		b, _ := json.MarshalIndent(cli, "", "  ")
		t.Errorf("the example and assemble deploy differ:\nexample: %s\ncommand: %s", a, b)
	}
	if !reflect.DeepEqual(exCloud, cliCloud) {
		t.Errorf("the cloud after the example: %v; after assemble deploy: %v", exCloud, cliCloud)
	}
	if d, _ := ex["droplets"].([]any); len(d) != 2 {
		t.Errorf("the example deployed %d droplets, want 2: %s", len(d), exOut)
	}
	if exCloud[staging] != true {
		t.Errorf("nothing was staged in the policy's staging bucket: %v", exCloud)
	}
}

// buildCLI builds cmd/assemble into a temporary folder (the test may not
// import package main).
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "assemble")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/cloud-assembly/assemble/cmd/assemble")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// captureStdout runs f with os.Stdout going to a file, and returns what
// it wrote.
func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	tmp, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Close()
	old := os.Stdout
	os.Stdout = tmp
	defer func() { os.Stdout = old }()
	f()
	os.Stdout = old
	b, err := os.ReadFile(tmp.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The example program is at most 12 lines (issue 29): its body, as
// gofmt writes it.
func TestExampleRunIsShort(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "example_test.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "ExampleRun" {
			lines := fset.Position(fd.Body.Rbrace).Line - fset.Position(fd.Body.Lbrace).Line - 1
			if lines > 12 {
				t.Errorf("ExampleRun is %d lines, want at most 12", lines)
			}
			return
		}
	}
	t.Fatal("no ExampleRun")
}

// The policy file's deploy section applies under the options: its
// staging bucket unless one is given, its capabilities beside theirs;
// no trust, or a trust without a policy file, changes nothing.
func TestOptionsWithPolicy(t *testing.T) {
	o := deploy.Options{Capabilities: []string{"NAMED_IAM"}}
	if got, err := o.WithPolicy(nil); err != nil || !reflect.DeepEqual(got, o) {
		t.Errorf("no trust: %+v %v", got, err)
	}
	if got, err := o.WithPolicy(&trust.Trust{}); err != nil || !reflect.DeepEqual(got, o) {
		t.Errorf("no policy file: %+v %v", got, err)
	}
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte("deploy:\n  staging-bucket: policy-bucket\n  capabilities: [IAM]\n  require-approval: any-change\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pf, err := trust.ReadPolicy(file)
	if err != nil {
		t.Fatal(err)
	}
	tr := &trust.Trust{PolicyFile: pf}
	got, err := o.WithPolicy(tr)
	if err != nil || got.StagingBucket != "policy-bucket" || !reflect.DeepEqual(got.Capabilities, []string{"NAMED_IAM", "IAM"}) || got.RequireApproval != deploy.ApproveAnyChange {
		t.Errorf("with a policy: %+v %v", got, err)
	}
	if !reflect.DeepEqual(o.Capabilities, []string{"NAMED_IAM"}) {
		t.Errorf("the options given changed: %+v", o)
	}
	o.StagingBucket, o.RequireApproval = "flag-bucket", deploy.ApproveNever
	if got, _ := o.WithPolicy(tr); got.StagingBucket != "flag-bucket" || got.RequireApproval != deploy.ApproveNever {
		t.Errorf("what the options give is replaced: %+v", got)
	}
}
