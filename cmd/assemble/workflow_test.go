package main

// The README's GitHub Actions workflow (docs/github-actions.yml) is run by
// the script testdata/deploy/github_actions.txtar through the test-only command
// ghactions, which plays GitHub's part: jobs in the order their needs
// give, each in a fresh folder, run: steps by bash with the env the
// workflow, job and step set and ${{ }} expressions filled in from
// secrets, variables, step and job outputs; the few actions it uses are
// done by hand (checkout copies the project, artifacts are copied from job
// to job; aws-actions/configure-aws-credentials assumes its role-to-assume
// with STS AssumeRole against moto_server, where GitHub's OIDC token would
// go to AssumeRoleWithWebIdentity, and gives the job's later steps those
// credentials). Installing assemble (scripts/install) is the one step skipped: the assemble
// the scripts run is on PATH. Steps see GITHUB_REF_NAME ($GITHUB_REF_NAME
// of the script, else v0.0.0-test) and AWS_ENDPOINT_URL (moto's), as a
// runner's environment would hold the real endpoint; no AWS credentials
// until the action gives them.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/rogpeppe/go-internal/testscript"
	"go.yaml.in/yaml/v3"
)

// workflow is the part of a GitHub Actions workflow file ghactions runs.
type workflow struct {
	Env  map[string]string       `yaml:"env"`
	Jobs map[string]*workflowJob `yaml:"jobs"`
}

type workflowJob struct {
	Needs   stringList        `yaml:"needs"`
	Env     map[string]string `yaml:"env"`
	Outputs map[string]string `yaml:"outputs"`
	Steps   []workflowStep    `yaml:"steps"`
}

type workflowStep struct {
	Name string            `yaml:"name"`
	ID   string            `yaml:"id"`
	Uses string            `yaml:"uses"`
	With map[string]string `yaml:"with"`
	Env  map[string]string `yaml:"env"`
	Run  string            `yaml:"run"`
}

// stringList is a YAML string or list of strings (needs: build).
type stringList []string

func (l *stringList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*l = []string{n.Value}
		return nil
	}
	return n.Decode((*[]string)(l))
}

// installAssemble is the step that installs the tool, a pinned release
// checked against the pinned release key (scripts/install, tested by
// TestReleaseSnapshot against a release made here); ghactions skips it.
var installAssemble = regexp.MustCompile(`(?s)/\$ASSEMBLE_VERSION/scripts/install".*/\$ASSEMBLE_VERSION/keys/release\.asc".*install-assemble --key \S+ --fingerprint "\$ASSEMBLE_RELEASE_FINGERPRINT" .*"\$ASSEMBLE_VERSION"\n`)

// ghactions WORKFLOW PROJECT runs the workflow file on the project folder
// (the repository checkout), in $WORK/gha (emptied first). secrets.X is
// $SECRET_X, vars.X is $VAR_X. Each step's output goes to the command's
// standard output; with !, a step must fail.
func ghActions(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: ghactions WORKFLOW PROJECT")
	}
	err := runWorkflow(ts, args[0], args[1])
	switch {
	case neg && err == nil:
		ts.Fatalf("every step succeeded")
	case !neg && err != nil:
		ts.Fatalf("%v", err)
	}
}

func runWorkflow(ts *testscript.TestScript, file, projectDir string) error {
	b, err := os.ReadFile(ts.MkAbs(file))
	ts.Check(err)
	var wf workflow
	ts.Check(yaml.Unmarshal(b, &wf))
	project := ts.MkAbs(projectDir)
	ts.Check(os.RemoveAll(ts.MkAbs("gha")))
	artifacts := ts.MkAbs("gha/artifacts")
	jobOutputs := map[string]map[string]string{}
	for _, name := range jobOrder(ts, wf.Jobs) {
		job := wf.Jobs[name]
		workspace := ts.MkAbs("gha/" + name)
		ts.Check(os.MkdirAll(workspace, 0o755))
		stepOutputs := map[string]map[string]string{}
		expand := func(s string) string {
			return expandExpr(ts, s, stepOutputs, jobOutputs)
		}
		installed := false
		jobEnv := map[string]string{} // what actions give the later steps
		for i, st := range job.Steps {
			fmt.Fprintf(ts.Stdout(), "== %s: %s\n", name, stepName(st))
			switch {
			case st.Uses != "":
				runAction(ts, st, expand, project, workspace, artifacts, jobEnv)
			case installAssemble.MatchString(st.Run):
				installed = true
			default:
				env := map[string]string{}
				for _, m := range []map[string]string{jobEnv, wf.Env, job.Env, st.Env} {
					for k, v := range m {
						env[k] = expand(v)
					}
				}
				out := filepath.Join(ts.MkAbs("gha"), fmt.Sprintf("%s-%d.output", name, i))
				env["GITHUB_OUTPUT"] = out
				env["GITHUB_STEP_SUMMARY"] = ts.MkAbs("gha/summary.md")
				env["GITHUB_WORKSPACE"] = workspace
				if err := runStep(ts, workspace, expand(st.Run), env); err != nil {
					return fmt.Errorf("job %s, step %s: %w", name, stepName(st), err)
				}
				if st.ID != "" {
					stepOutputs[st.ID] = readOutputs(ts, out)
				}
			}
		}
		if !installed {
			ts.Fatalf("job %s: no step installs assemble with scripts/install, pinned to $ASSEMBLE_VERSION and $ASSEMBLE_RELEASE_FINGERPRINT", name)
		}
		jobOutputs[name] = map[string]string{}
		for k, v := range job.Outputs {
			jobOutputs[name][k] = expand(v)
		}
	}
	return nil
}

// jobOrder lists the jobs so that each comes after those it needs.
func jobOrder(ts *testscript.TestScript, jobs map[string]*workflowJob) []string {
	var order []string
	done := map[string]bool{}
	names := slices.Sorted(maps.Keys(jobs))
	for len(order) < len(jobs) {
		progress := false
		for _, n := range names {
			if done[n] || slices.ContainsFunc(jobs[n].Needs, func(d string) bool { return !done[d] }) {
				continue
			}
			order, done[n], progress = append(order, n), true, true
		}
		if !progress {
			ts.Fatalf("jobs that need each other, or a job nobody defines: %v", names)
		}
	}
	return order
}

func stepName(st workflowStep) string {
	if st.Name != "" {
		return st.Name
	}
	return st.Uses
}

// expr matches ${{ expression }}.
var expr = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// expandExpr fills in the expressions ghactions knows; any other fails.
func expandExpr(ts *testscript.TestScript, s string, steps, jobs map[string]map[string]string) string {
	return expr.ReplaceAllStringFunc(s, func(m string) string {
		e := strings.Fields(expr.FindStringSubmatch(m)[1])
		parts := strings.Split(strings.Join(e, ""), ".")
		switch {
		case len(parts) == 2 && parts[0] == "secrets":
			return strings.TrimSuffix(ts.Getenv("SECRET_"+parts[1]), "\n")
		case len(parts) == 2 && parts[0] == "vars":
			return ts.Getenv("VAR_" + parts[1])
		case len(parts) == 4 && parts[0] == "steps" && parts[2] == "outputs":
			if v, ok := steps[parts[1]][parts[3]]; ok {
				return v
			}
		case len(parts) == 4 && parts[0] == "needs" && parts[2] == "outputs":
			if v, ok := jobs[parts[1]][parts[3]]; ok {
				return v
			}
		}
		ts.Fatalf("expression %s: ghactions knows no such value", m)
		return ""
	})
}

// runAction does what the actions the workflow uses would.
func runAction(ts *testscript.TestScript, st workflowStep, expand func(string) string, project, workspace, artifacts string, jobEnv map[string]string) {
	action, _, _ := strings.Cut(st.Uses, "@")
	with := map[string]string{}
	for k, v := range st.With {
		with[k] = expand(v)
	}
	switch action {
	case "actions/checkout":
		ts.Check(os.CopyFS(workspace, os.DirFS(project)))
	case "actions/setup-go":
		// Go is here: the tests run on it.
	case "actions/upload-artifact":
		dst := filepath.Join(artifacts, with["name"])
		ts.Check(os.MkdirAll(dst, 0o755))
		data, err := os.ReadFile(filepath.Join(workspace, with["path"]))
		ts.Check(err)
		ts.Check(os.WriteFile(filepath.Join(dst, filepath.Base(with["path"])), data, 0o644))
	case "actions/download-artifact":
		ts.Check(os.CopyFS(workspace, os.DirFS(filepath.Join(artifacts, with["name"]))))
	case "aws-actions/configure-aws-credentials":
		role, region := with["role-to-assume"], with["aws-region"]
		if role == "" || region == "" {
			ts.Fatalf("configure-aws-credentials needs role-to-assume and aws-region")
		}
		cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion(region))
		ts.Check(err)
		out, err := sts.NewFromConfig(cfg).AssumeRole(context.Background(), &sts.AssumeRoleInput{RoleArn: aws.String(role), RoleSessionName: aws.String("GitHubActions")})
		ts.Check(err)
		jobEnv["AWS_ACCESS_KEY_ID"] = aws.ToString(out.Credentials.AccessKeyId)
		jobEnv["AWS_SECRET_ACCESS_KEY"] = aws.ToString(out.Credentials.SecretAccessKey)
		jobEnv["AWS_SESSION_TOKEN"] = aws.ToString(out.Credentials.SessionToken)
		jobEnv["AWS_REGION"], jobEnv["AWS_DEFAULT_REGION"] = region, region
	default:
		ts.Fatalf("ghactions does not know the action %s", st.Uses)
	}
}

// runStep runs a run: script as GitHub does on Linux (bash -e -o
// pipefail), with the script's environment and PATH, HOME and the
// variables the checked assemble needs.
func runStep(ts *testscript.TestScript, dir, script string, env map[string]string) error {
	cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
	cmd.Dir = dir
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "WORK", envJSONDocs, "AWS_ENDPOINT_URL", "AWS_EC2_METADATA_DISABLED", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	ref := ts.Getenv("GITHUB_REF_NAME")
	if ref == "" {
		ref = "v0.0.0-test"
	}
	cmd.Env = append(cmd.Env, "GITHUB_REF_NAME="+ref)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	ts.Stdout().Write(out.Bytes())
	if err != nil {
		return fmt.Errorf("%v:\n%s\n%s", err, script, out.String())
	}
	return nil
}

// readOutputs reads a step's $GITHUB_OUTPUT (NAME=VALUE lines).
func readOutputs(ts *testscript.TestScript, path string) map[string]string {
	out := map[string]string{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return out
	}
	ts.Check(err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			ts.Fatalf("%s: %q is not NAME=VALUE", path, sc.Text())
		}
		out[k] = v
	}
	ts.Check(sc.Err())
	return out
}

// The README shows the workflow as it is in docs/github-actions.yml.
func TestReadmeShowsWorkflow(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	wf, err := os.ReadFile(filepath.Join("..", "..", "docs", "github-actions.yml"))
	if err != nil {
		t.Fatal(err)
	}
	block := "```yaml\n" + string(wf) + "```\n"
	if !bytes.Contains(readme, []byte(block)) {
		t.Errorf("README.md does not show docs/github-actions.yml as it is, in a ```yaml block")
	}
}

// Issue 23, item 1: the recipe pins a release of assemble (vX.Y.Z), and
// every job installs that version.
func TestActionsRecipePinsVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "github-actions.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf workflow
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	if v := wf.Env["ASSEMBLE_VERSION"]; !regexp.MustCompile(`^v\d+\.\d+\.\d+$`).MatchString(v) {
		t.Errorf("ASSEMBLE_VERSION is %q, want a release vX.Y.Z", v)
	}
	for name, job := range wf.Jobs {
		pinned := false
		for _, st := range job.Steps {
			pinned = pinned || installAssemble.MatchString(st.Run)
		}
		if !pinned {
			t.Errorf("job %s does not install $ASSEMBLE_VERSION with scripts/install and $ASSEMBLE_RELEASE_FINGERPRINT", name)
		}
	}
	// The fingerprint pinned is the published key's (SECURITY.md and
	// keys/release.asc), or empty while no key is published: never one
	// made up.
	fpr, ok := wf.Env["ASSEMBLE_RELEASE_FINGERPRINT"]
	if !ok {
		t.Fatal("the recipe pins no ASSEMBLE_RELEASE_FINGERPRINT")
	}
	security, _ := os.ReadFile(filepath.Join("..", "..", "SECURITY.md"))
	_, keyErr := os.Stat(filepath.Join("..", "..", "keys", "release.asc"))
	switch {
	case fpr == "" && keyErr == nil:
		t.Error("keys/release.asc is published, and the recipe pins no fingerprint: copy it from SECURITY.md")
	case fpr != "" && (keyErr != nil || !strings.Contains(strings.ReplaceAll(string(security), " ", ""), strings.ReplaceAll(fpr, " ", ""))):
		t.Errorf("the recipe pins fingerprint %q, which SECURITY.md does not name or no keys/release.asc publishes", fpr)
	}
}
