package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
)

// cdkToolkit finds the CDK CLI and libraries the round-trip test runs:
// $ASSEMBLE_CDK_DIR, else $HOME/.cache/assemble-ci/cdk (where .ci/run
// installs them), a folder whose node_modules holds aws-cdk, aws-cdk-lib and
// constructs. It skips the test, saying why, when they or Node.js are
// missing.
func cdkToolkit(t *testing.T) (cli, nodePath string) {
	t.Helper()
	dir := os.Getenv("ASSEMBLE_CDK_DIR")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Skipf("no CDK toolkit: $ASSEMBLE_CDK_DIR is unset and there is no home folder (%v)", err)
		}
		dir = filepath.Join(home, ".cache", "assemble-ci", "cdk")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("Node.js is not installed (node not on PATH): .ci/run installs it with the CDK toolkit")
	}
	// aws-cdk-lib needs Node.js 20 or later (its package.json's engines).
	if out, err := exec.Command("node", "-p", "process.versions.node").Output(); err != nil {
		t.Skipf("node does not run (%v): the CDK toolkit needs Node.js 20 or later", err)
	} else if major, _, _ := strings.Cut(strings.TrimSpace(string(out)), "."); atoi(major) < 20 {
		t.Skipf("Node.js %s is older than the 20 aws-cdk-lib needs: install a newer Node.js", strings.TrimSpace(string(out)))
	}
	nodePath = filepath.Join(dir, "node_modules")
	cli = filepath.Join(nodePath, ".bin", "cdk")
	for _, p := range []string{cli, filepath.Join(nodePath, "aws-cdk-lib", "package.json"), filepath.Join(nodePath, "constructs", "package.json")} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("the CDK toolkit is not installed in %s (%v): run .ci/run, or set ASSEMBLE_CDK_DIR to a folder whose node_modules holds aws-cdk, aws-cdk-lib and constructs", dir, err)
		}
	}
	return cli, nodePath
}

// cdkCommand runs the real cdk CLI, offline (no version check, notices or
// telemetry), in dir.
func cdkCommand(ctx context.Context, cli, nodePath, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, cli, append(args, "--no-notices")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath, "CDK_DISABLE_VERSION_CHECK=1", "CDK_DISABLE_CLI_TELEMETRY=true", "CI=true")
	return cmd
}

// assemble runs the CLI in process and fails the test on a non-zero exit.
func assemble(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(context.Background(), append([]string{"assemble"}, args...), bytes.NewReader(nil), &out, &errb); code != 0 {
		t.Fatalf("assemble %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// TestCDKRoundTrip synthesizes fixtures/cdk-app with the real CDK CLI (two
// stacks with a cross-stack reference, a Lambda function's directory
// asset, a file asset, a Docker image asset, a stage with one stack and a
// stage of its own, an annotation warning), builds, signs, verifies and extracts it with
// --cdk-out, and checks the extracted folder is the synthesized one byte
// for byte, modes included, and that the CDK CLI reads it alike: the same
// stacks from cdk ls, the same templates from cdk synth.
func TestCDKRoundTrip(t *testing.T) {
	cli, nodePath := cdkToolkit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	work := t.TempDir()
	app := filepath.Join(work, "app")
	if err := os.CopyFS(app, os.DirFS(filepath.Join("..", "..", "fixtures", "cdk-app"))); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if out, err := cdkCommand(ctx, cli, nodePath, app, "synth", "-q").CombinedOutput(); err != nil {
		t.Fatalf("cdk synth: %v\n%s", err, out)
	}
	t.Logf("cdk synth took %v", time.Since(start).Round(time.Millisecond))
	orig := filepath.Join(app, "cdk.out")

	cloud := filepath.Join(work, "app.cloud")
	assemble(t, "build", "-o", cloud, app)
	again := filepath.Join(work, "again.cloud")
	assemble(t, "build", "-o", again, orig)
	if a, b := readFile(t, cloud), readFile(t, again); !bytes.Equal(a, b) {
		t.Error("building the app folder and its cdk.out gave different bytes")
	}
	checkCDKDroplets(t, cloud)

	keys := filepath.Join("..", "..", "fixtures", "keys")
	assemble(t, "sign", "--key", filepath.Join(keys, "ed25519.sec.asc"), cloud)
	assemble(t, "verify", "--keyring", filepath.Join(keys, "trusted.asc"), cloud)
	back := filepath.Join(work, "deploy")
	assemble(t, "extract", "--keyring", filepath.Join(keys, "trusted.asc"), "--cdk-out", back, cloud)
	if a, b := treeOf(t, orig), treeOf(t, back); a != b {
		t.Fatalf("the extracted cdk.out differs from the synthesized one:\n--- synthesized\n%s--- extracted\n%s", a, b)
	}

	// The CDK CLI reads both alike. Each command runs on both folders at
	// once; the stacks' templates are printed in parallel.
	cdkOut := func(dir string, args ...string) (string, error) {
		var out, errb bytes.Buffer
		cmd := cdkCommand(ctx, cli, nodePath, work, append(args, "--app", dir)...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("cdk %s --app %s: %v\n%s", strings.Join(args, " "), dir, err, errb.String())
		}
		return out.String(), nil
	}
	both := func(args ...string) (a, b string) {
		var wg sync.WaitGroup
		var errA, errB error
		wg.Add(2)
		go func() { defer wg.Done(); a, errA = cdkOut(orig, args...) }()
		go func() { defer wg.Done(); b, errB = cdkOut(back, args...) }()
		wg.Wait()
		for _, err := range []error{errA, errB} {
			if err != nil {
				t.Fatal(err)
			}
		}
		return a, b
	}
	lsOrig, lsBack := both("ls")
	if lsOrig != lsBack {
		t.Fatalf("cdk ls differs:\n%s\nvs\n%s", lsOrig, lsBack)
	}
	var stacks []string
	for _, line := range strings.Split(strings.TrimSpace(lsOrig), "\n") {
		stacks = append(stacks, strings.Fields(line)[0])
	}
	if got := strings.Join(stacks, " "); got != "Storage Service Prod/Queues Prod/Eu/DeadLetters" {
		t.Fatalf("cdk ls lists %q, want the app's four stacks", got)
	}
	for _, s := range stacks {
		a, b := both("synth", s)
		if a != b || !strings.Contains(a, "Resources:") {
			t.Errorf("cdk synth %s differs or prints no template:\n%s\nvs\n%s", s, a, b)
		}
	}
}

// checkCDKDroplets checks the droplets built from fixtures/cdk-app.
func checkCDKDroplets(t *testing.T, cloud string) {
	t.Helper()
	rc, err := assembly.Open(cloud)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rep, err := rc.Check(assembly.CheckOptions{Writing: true})
	if err != nil {
		t.Fatalf("the assembly is invalid: %v", err)
	}
	m := rep.Manifest
	byType := map[string][]string{}
	for _, id := range m.IDs() {
		byType[m.Droplets[id].Type] = append(byType[m.Droplets[id].Type], id)
	}
	stacks := strings.Join(byType[droplets.StackType], " ")
	if stacks != "Prod/Eu/ProdEuDeadLetters6F0F26C8 Prod/ProdQueues890F56DA Service Storage" {
		t.Errorf("stack droplets %q", stacks)
	}
	svc := m.Droplets["Service"]
	if svc == nil || !contains(svc.DependsOn, "Storage") || svc.Environment != "aws://unknown-account/unknown-region" {
		t.Errorf("Service: %+v, want it to depend on Storage (the cross-stack reference), environment-agnostic", svc)
	}
	if w := m.Droplets["Storage"].Metadata["/Storage/Data"]; w == nil || w.Kind != "warning" || !strings.Contains(fmt.Sprint(w.Value), "lifecycle rule") {
		t.Errorf("Storage's annotation warning: %+v", w)
	}
	img := m.Droplets["Service-assets/Image"]
	if img == nil || img.Type != droplets.DockerBuildType || img.Properties["platform"] != "linux/arm64" ||
		fmt.Sprint(img.Properties["buildArgs"]) != "map[GREETING:hello]" || fmt.Sprint(img.Properties["executables"]) != "[entrypoint.sh]" {
		t.Errorf("the Docker image asset: %+v", img)
	}
	if img != nil && (img.Properties["dockerFile"] != "Dockerfile" || !strings.Contains(fmt.Sprint(img.Properties["repositoryName"]), `\${AWS::AccountId}`) || img.Properties["imageTag"] == "") {
		t.Errorf("the Docker image asset's Dockerfile, repository and tag: %+v", img.Properties)
	}
	if d := m.Droplets["Prod/Eu/ProdEuDeadLetters6F0F26C8-assets/Prod-Eu-DeadLetters-Template"]; d == nil || d.Type != droplets.FileType {
		t.Errorf("the template asset of the stage in the stage: %+v", d)
	}
	if fn := m.Droplets["Service-assets/Handler/Code"]; fn == nil || fn.Type != droplets.DirectoryType {
		t.Errorf("the Lambda function's code: %+v", fn)
	}
	if f := m.Droplets["Service-assets/Greeting"]; f == nil || f.Type != droplets.FileType || !strings.Contains(f.Properties["bucketName"].(string), `\${AWS::AccountId}`) {
		t.Errorf("the file asset: %+v", f)
	}
}

// atoi is the number s spells, or -1.
func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

func contains(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// treeOf lists every file below dir with its executable bit and content
// digest, one per line, sorted; folders holding files are implied.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s exec=%v %d %x", filepath.ToSlash(rel), st.Mode()&0o111 != 0, len(b), sha256.Sum256(b)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}
