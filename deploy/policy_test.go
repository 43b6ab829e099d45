package deploy

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/trust"
)

// readPolicyFile writes body as a policy file and reads it as every
// command does (trust.ReadPolicy: the file read once, each section
// checked by its package).
func readPolicyFile(t *testing.T, body string) (*trust.PolicyFile, string, error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := trust.ReadPolicy(file)
	return p, file, err
}

// The deploy section is read and checked here, as the file is read;
// the old flat keys (deprecated) mean the same as the section's.
func TestPolicySection(t *testing.T) {
	want := &Policy{StagingBucket: "assets.example-1", Capabilities: []string{"IAM", "CAPABILITY_AUTO_EXPAND"},
		RequireApproval: ApproveAnyChange, Targets: []string{"dev"}, DeployerParameters: []string{"Api.Mode"}}
	section := "keyrings: [k]\ndeploy:\n  staging-bucket: assets.example-1\n  capabilities: [IAM, CAPABILITY_AUTO_EXPAND]\n  require-approval: any-change\n  targets: [dev]\n  deployer-parameters: [Api.Mode]\n"
	flat := "keyrings: [k]\nstaging-bucket: assets.example-1\ncapabilities: [IAM, CAPABILITY_AUTO_EXPAND]\nrequire-approval: any-change\ntargets: [dev]\ndeployer-parameters: [Api.Mode]\n"
	sectioned := "trust:\n  keyrings: [k]\ndeploy:\n  staging-bucket: assets.example-1\n  capabilities: [IAM, CAPABILITY_AUTO_EXPAND]\n  require-approval: any-change\n  targets: [dev]\n  deployer-parameters: [Api.Mode]\n"
	for name, body := range map[string]string{"section": section, "flat": flat, "both sections": sectioned} {
		p, _, err := readPolicyFile(t, body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := PolicyOf(p); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
		if len(p.Keyrings) != 1 {
			t.Errorf("%s: the trust section is lost: %+v", name, p)
		}
		if legacy := len(p.Legacy) > 0; legacy != (name == "flat" || name == "section") {
			t.Errorf("%s: legacy keys %v", name, p.Legacy)
		}
	}
	if p, _, err := readPolicyFile(t, "keyrings: [k]\n"); err != nil || PolicyOf(p) != nil {
		t.Errorf("no deploy section: %+v %v", PolicyOf(p), err)
	}
	if PolicyOf(nil).AllowTarget("any") != nil {
		t.Error("no policy refuses a target")
	}
}

// Every refusal of the deploy section is deploy's, placed in the file
// (file:line:column), an unknown key named with the nearest one.
func TestPolicySectionRefuses(t *testing.T) {
	for _, tt := range []struct {
		body, msg    string
		line, column int
	}{
		{"deploy:\n  staging-bucket: My_Bucket\n", "staging-bucket must be an S3 bucket name", 2, 19},
		{"staging-bucket: [a]\n", "staging-bucket must be an S3 bucket name", 1, 17},
		{"capabilities: [IAM, ROOT]\n", `capabilities: "ROOT": use IAM, NAMED_IAM or AUTO_EXPAND`, 1, 21},
		{"deploy:\n  capabilities: [ROOT]\n", `capabilities: "ROOT": use IAM, NAMED_IAM or AUTO_EXPAND`, 2, 18},
		{"deployer-parameters: [Api.Mode, Mode]\n", `deployer-parameters: "Mode": name a stack parameter as DROPLET.NAME`, 1, 33},
		{"targets: [dev, pro d]\n", `targets: "pro d" is not a target name`, 1, 16},
		{"targets: dev\n", "targets must be a list", 1, 10},
		{"deploy:\n  require-approval: sometimes\n", "require-approval must be never, any-change or broadening", 2, 21},
		{"deploy:\n  stagingbucket: b-1\n", `unknown key deploy.stagingbucket (did you mean "staging-bucket"?)`, 2, 3},
		{"deploy:\n  keyrings: [k]\n", `unknown key deploy.keyrings`, 2, 3},
		{"deploy: [a]\n", "deploy must be a mapping", 1, 9},
		{"capabilities: [IAM]\ndeploy:\n  capabilities: [IAM]\n", "capabilities is given twice", 3, 3},
	} {
		_, file, err := readPolicyFile(t, tt.body)
		var pe *trust.PolicyError
		if !errors.As(err, &pe) || !errors.Is(err, trust.ErrInvalidPolicy) || !strings.Contains(pe.Msg, tt.msg) || pe.Line != tt.line || pe.Column != tt.column {
			t.Errorf("%q: got %v, want %q at %d:%d", tt.body, err, tt.msg, tt.line, tt.column)
			continue
		}
		if want := fmt.Sprintf("%s:%d:%d: ", file, tt.line, tt.column); !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v does not start with %s", tt.body, err, want)
		}
	}
}

// The policy's targets: the one verdict on a target (AllowTarget); no
// targets key allows any, an empty list none.
func TestPolicyTargets(t *testing.T) {
	read := func(body string) *Policy {
		p, _, err := readPolicyFile(t, body)
		if err != nil {
			t.Fatal(err)
		}
		return PolicyOf(p)
	}
	p := read("deploy:\n  targets: [dev, staging]\n")
	for name, ok := range map[string]bool{"dev": true, "staging": true, "prod": false, "Dev": false, "": false} {
		err := p.AllowTarget(name)
		if ok != (err == nil) || (!ok && !errors.Is(err, ErrTargetRefused)) {
			t.Errorf("AllowTarget(%q) = %v", name, err)
		}
	}
	if err := read("deploy:\n  staging-bucket: b-1\n").AllowTarget("prod"); err != nil {
		t.Errorf("no targets key: %v", err)
	}
	if err := read("targets: []\n").AllowTarget("dev"); !errors.Is(err, ErrTargetRefused) || !strings.Contains(err.Error(), "allows none") {
		t.Errorf("targets: []: %v", err)
	}
}
