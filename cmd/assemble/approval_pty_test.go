//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"

	"github.com/cloud-assembly/assemble/internal/testenv/moto"
)

// roleCloud writes a signed assembly of one stack, a role whose trust
// policy allows principal, named name.
func roleCloud(t *testing.T, dir, name, principal string) string {
	t.Helper()
	tpl := "Resources:\n  R:\n    Type: AWS::IAM::Role\n    Properties:\n      AssumeRolePolicyDocument:\n        Statement:\n          - {Effect: Allow, Principal: " + principal + ", Action: sts:AssumeRole}\n"
	m, _ := json.Marshal(map[string]any{"schema": "cloud-assembly/1.0", "droplets": map[string]any{
		"Role": map[string]any{"type": "npm://@aws-cdk/aws-cloudformation.StackDroplet", "environment": "aws://123456789012/us-east-1",
			"properties": map[string]any{"stackName": name, "template": "r.yaml"}}}})
	sub := filepath.Join(dir, strings.NewReplacer("{", "", "}", "", "'", "", ":", "", " ", "", "*", "star").Replace(principal))
	os.MkdirAll(sub, 0o755)
	unsigned := filepath.Join(sub, "u.cloud")
	writeCloud(t, unsigned, map[string]string{"manifest.json": string(m), "r.yaml": tpl})
	return sign(t, sub, unsigned)
}

func deployedTemplate(t *testing.T, name string) string {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out, err := cloudformation.NewFromConfig(cfg).GetTemplate(context.Background(), &cloudformation.GetTemplateInput{StackName: aws.String(name), TemplateStage: cfntypes.TemplateStageOriginal})
	if err != nil {
		return ""
	}
	return aws.ToString(out.TemplateBody)
}

// runOnPTY runs assemble with a pseudo-terminal as its controlling
// terminal and standard streams; when the output shows prompt, it types
// answer. It returns the exit code and what the terminal showed.
func runOnPTY(t *testing.T, bin string, args []string, prompt, answer string) (int, string) {
	t.Helper()
	ptm, pts := openPTY(t)
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pts.Close()
	var seen bytes.Buffer
	buf := make([]byte, 4096)
	answered := false
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ptm.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		n, err := ptm.Read(buf)
		seen.Write(buf[:n])
		if !answered && strings.Contains(seen.String(), prompt) {
			ptm.Write([]byte(answer + "\n"))
			answered = true
		}
		if err != nil && !os.IsTimeout(err) {
			break // the child closed the terminal: it ended
		}
	}
	cmd.Wait()
	return cmd.ProcessState.ExitCode(), seen.String()
}

// --require-approval broadening (the default) at a terminal: the diff is
// shown and deploy asks; "n" changes nothing, "y" deploys. Without a
// terminal it refuses, naming what needs approval (deploy_artifacts.txtar
// shows that end to end).
func TestDeployApprovalOnPTY(t *testing.T) {
	moto.Env(t)
	bin, err := exec.LookPath("assemble") // testscript.Main puts the test binary on PATH
	if err != nil {
		t.Skip("assemble is not on PATH:", err)
	}
	dir := t.TempDir()
	name := "pty-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))[:20] + "-" + time.Now().Format("150405")
	keyring, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc"))
	first := roleCloud(t, dir, name, "{Service: lambda.amazonaws.com}")
	var out bytes.Buffer
	if code := run(context.Background(), []string{"assemble", "deploy", "-q", "--keyring", keyring, "--capabilities", "IAM", "--require-approval", "never", first}, nil, &out, &out); code != 0 {
		t.Fatalf("first deploy: %d %s", code, out.String())
	}
	wide := roleCloud(t, dir, name, "{AWS: '*'}")
	args := []string{"deploy", "--keyring", keyring, "--capabilities", "IAM", wide}

	code, seen := runOnPTY(t, bin, args, "deploy them (y/n)? ", "n")
	if code != 1 || !strings.Contains(seen, "changes not approved") {
		t.Fatalf("answered n: exit %d\n%s", code, seen)
	}
	for _, want := range []string{"Role (stack " + name + "): changed", "Statement[0].Principal", "security changes (allowed now and not before):",
		"+ R (AWS::IAM::Role) AssumeRolePolicyDocument.Statement[0]: * may sts:AssumeRole on role R", "these changes need approval:"} {
		if !strings.Contains(seen, want) {
			t.Errorf("the terminal did not show %q:\n%s", want, seen)
		}
	}
	if strings.Contains(deployedTemplate(t, name), "'*'") {
		t.Fatal("answered n, yet the role trusts anyone")
	}

	code, seen = runOnPTY(t, bin, args, "deploy them (y/n)? ", "y")
	if code != 0 || !strings.Contains(seen, "Role (stack): updated") {
		t.Fatalf("answered y: exit %d\n%s", code, seen)
	}
	if !strings.Contains(deployedTemplate(t, name), "'*'") {
		t.Fatal("answered y, yet the template was not deployed")
	}
}

// matrixRoleCloud writes a signed assembly whose target prod deploys a
// role trusting anyone to two regions of account 111111111111 (through
// the target's deployRole: moto's AssumeRole).
func matrixRoleCloud(t *testing.T, dir, name string) string {
	t.Helper()
	tpl := "Resources:\n  R:\n    Type: AWS::IAM::Role\n    Properties:\n      AssumeRolePolicyDocument:\n        Statement:\n          - {Effect: Allow, Principal: {AWS: '*'}, Action: sts:AssumeRole}\n"
	m, _ := json.Marshal(map[string]any{"schema": "cloud-assembly/1.0",
		"droplets": map[string]any{"Role": map[string]any{"type": "npm://@aws-cdk/aws-cloudformation.StackDroplet", "environment": "aws://unknown-account/unknown-region",
			"properties": map[string]any{"stackName": name, "template": "r.yaml"}}},
		"targets": map[string]any{"prod": map[string]any{"environments": []string{"aws://111111111111/us-east-1", "aws://111111111111/eu-west-1"},
			"deployRole": "arn:aws:iam::${AWS::AccountId}:role/release-deployer"}}})
	unsigned := filepath.Join(dir, "u.cloud")
	writeCloud(t, unsigned, map[string]string{"manifest.json": string(m), "r.yaml": tpl})
	return sign(t, dir, unsigned)
}

// A target over two account/region pairs is approved once: at a terminal
// the diff of both pairs is shown and deploy asks one question; without a
// terminal it refuses, naming what needs approval in each pair, and
// changes nothing.
func TestMatrixApprovalOnPTY(t *testing.T) {
	moto.Env(t)
	bin, err := exec.LookPath("assemble") // testscript.Main puts the test binary on PATH
	if err != nil {
		t.Skip("assemble is not on PATH:", err)
	}
	dir := t.TempDir()
	name := "ptymx-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "-")
	keyring, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc"))
	cloud := matrixRoleCloud(t, dir, name)
	args := []string{"deploy", "--keyring", keyring, "--capabilities", "IAM", "--target", "prod", "--method", "direct", cloud}

	// No terminal: a session of its own, without a controlling terminal.
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("no terminal: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"changes need approval", "aws://111111111111/us-east-1: Role: R (AWS::IAM::Role) AssumeRolePolicyDocument.Statement[0]: * may sts:AssumeRole",
		"aws://111111111111/eu-west-1: Role: R (AWS::IAM::Role) AssumeRolePolicyDocument.Statement[0]: * may sts:AssumeRole"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("no terminal: stderr lacks %q:\n%s", want, stderr.String())
		}
	}

	code, seen := runOnPTY(t, bin, args, "deploy them (y/n)? ", "y")
	if code != 0 || strings.Count(seen, "deploy them (y/n)? ") != 1 {
		t.Fatalf("answered y: exit %d, asked %d times\n%s", code, strings.Count(seen, "deploy them (y/n)? "), seen)
	}
	for _, want := range []string{"aws://111111111111/us-east-1 (account 111111111111, region us-east-1):", "aws://111111111111/eu-west-1 (account 111111111111, region eu-west-1):",
		"these changes need approval:", "deployed target prod from " + cloud + " to 2 account/region pairs: 2 deployed"} {
		if !strings.Contains(seen, want) {
			t.Errorf("the terminal did not show %q:\n%s", want, seen)
		}
	}
}
