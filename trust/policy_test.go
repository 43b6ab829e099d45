package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/signing"
)

// FuzzReadPolicy: whatever a --policy file holds, readPolicy either
// refuses it with a placed PolicyError, or reads settings that hold the
// file's rules: min-signers at least 1 (0 when not given), every required
// signer a fingerprint, every algorithm a strong one, keyring paths made
// relative to the file's folder.
func FuzzReadPolicy(f *testing.F) {
	for _, seed := range []string{
		"keyrings: [keys]\nmin-signers: 2\nrequire-signers:\n  - 0123456789ABCDEF0123456789ABCDEF01234567\nalgorithms: [SHA256, SHA512]\n",
		"untrusted-keyrings: [a.asc, /abs/b.asc]\n",
		"min-signer: 2\n", "min-signers: 0\n", "keyrings: keys\n", "- a\n", "", "keyrings: [keys\n",
		"algorithms: [MD5]\n", "keyrings: [a]\nkeyrings: [b]\n", "require-signers: [~]\n",
		"min-signers: 1\n---\nmin-signers: 3\n", "staging-bucket: assets-1\ncapabilities: [IAM, CAPABILITY_AUTO_EXPAND]\n", "capabilities: IAM\n", "keyrings: [a]\n---\n", "keyrings: [a]\n---\n[\n",
	} {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body string) {
		file := filepath.Join(dir, "policy.yaml")
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := ReadPolicy(file)
		if err != nil {
			var pe *PolicyError
			if !errors.As(err, &pe) || pe.File != file {
				t.Fatalf("error %v is not a PolicyError about the file", err)
			}
			return
		}
		if p.MinSigners < 0 || (p.Has["min-signers"] && p.MinSigners < 1) {
			t.Fatalf("min-signers %d", p.MinSigners)
		}
		for _, fp := range p.RequireSigners {
			if _, err := signing.NormalizeFingerprint(fp); err != nil {
				t.Fatalf("required signer %q: %v", fp, err)
			}
		}
		for _, a := range p.Algorithms {
			if _, err := signing.ParseAlgorithm(a); err != nil {
				t.Fatalf("algorithm %q: %v", a, err)
			}
		}
		if p.Has["staging-bucket"] && !bucketRE.MatchString(p.StagingBucket) {
			t.Fatalf("staging bucket %q", p.StagingBucket)
		}
		for _, c := range p.Capabilities {
			if s := strings.TrimPrefix(c, "CAPABILITY_"); s != "IAM" && s != "NAMED_IAM" && s != "AUTO_EXPAND" {
				t.Fatalf("capability %q", c)
			}
		}
		for _, k := range append(p.Keyrings, p.UntrustedKeyrings...) {
			if !filepath.IsAbs(k) {
				t.Fatalf("keyring %q is not resolved against the policy's folder", k)
			}
		}
	})
}

// A --policy file is one YAML document: what a reviewer reads is what
// verify applies. Every refusal names the file, line and column.
func TestReadPolicyRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		body, want string
		line, col  int
	}{
		{"keyrings: [k]\nmin-signer: 2\n", `unknown key "min-signer"`, 2, 1},
		{"keyrings: [k]\nmin-signers: 0\n", "min-signers must be a whole number of at least 1", 2, 14},
		{"keyrings: k\n", "keyrings must be a list", 1, 11},
		{"keyrings: [k]\nkeyrings: [j]\n", "keyrings is given twice", 2, 1},
		{"algorithms: [SHA256, MD5]\n", `algorithms: "MD5"`, 1, 22},
		{"keyrings: [k]\nmin-signers: 1\n---\nmin-signers: 3\n", "one YAML document", 3, 1},
		{"keyrings: [k]\n---\n", "one YAML document", 2, 1},
		{"staging-bucket: My_Bucket\n", "staging-bucket must be an S3 bucket name", 1, 17},
		{"staging-bucket: [a]\n", "staging-bucket must be an S3 bucket name", 1, 17},
		{"capabilities: [IAM, ROOT]\n", `capabilities: "ROOT": use IAM, NAMED_IAM or AUTO_EXPAND`, 1, 21},
		{"deployer-parameters: [Api.Mode, Mode]\n", `deployer-parameters: "Mode": name a stack parameter as DROPLET.NAME`, 1, 33},
		{"targets: [dev, pro d]\n", `targets: "pro d" is not a target name`, 1, 16},
		{"targets: dev\n", "targets must be a list", 1, 10},
	} {
		file := filepath.Join(dir, "policy.yaml")
		if err := os.WriteFile(file, []byte(tt.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadPolicy(file)
		var pe *PolicyError
		if !errors.As(err, &pe) || pe.Line != tt.line || pe.Column != tt.col || !strings.Contains(pe.Msg, tt.want) {
			t.Errorf("%q: got %v, want %q at %d:%d", tt.body, err, tt.want, tt.line, tt.col)
		}
	}
}

// A --policy file is read whole, so it is bounded: a file over
// maxPolicySize is refused before it is read in full.
func TestReadPolicyRefusesLargeFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "policy.yaml")
	body := "keyrings: [k]\n# " + strings.Repeat("x", maxPolicySize) + "\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadPolicy(file)
	var pe *PolicyError
	if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(pe.Msg, "larger than") {
		t.Fatalf("got %v, want a PolicyError saying the file is too large", err)
	}
}

// Deploy's keys: the staging bucket and the capabilities it may grant.
func TestReadPolicyDeployKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte("keyrings: [k]\nstaging-bucket: assets.example-1\ncapabilities: [IAM, CAPABILITY_AUTO_EXPAND]\ndeployer-parameters: [Api.Mode]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := ReadPolicy(file)
	if err != nil {
		t.Fatal(err)
	}
	if p.StagingBucket != "assets.example-1" || strings.Join(p.Capabilities, ",") != "IAM,CAPABILITY_AUTO_EXPAND" || strings.Join(p.DeployerParameters, ",") != "Api.Mode" {
		t.Errorf("read %+v", p)
	}
}

// The policy's targets: the one verdict on a target (AllowTarget); no
// targets key allows any, an empty list none.
func TestPolicyTargets(t *testing.T) {
	dir := t.TempDir()
	read := func(body string) *PolicyFile {
		file := filepath.Join(dir, "policy.yaml")
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := ReadPolicy(file)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := read("keyrings: [k]\ntargets: [dev, staging]\n")
	for name, ok := range map[string]bool{"dev": true, "staging": true, "prod": false, "Dev": false, "": false} {
		err := p.AllowTarget(name)
		if ok != (err == nil) || (!ok && !errors.Is(err, ErrTargetRefused)) {
			t.Errorf("AllowTarget(%q) = %v", name, err)
		}
	}
	if err := read("keyrings: [k]\n").AllowTarget("prod"); err != nil {
		t.Errorf("no targets key: %v", err)
	}
	if err := read("keyrings: [k]\ntargets: []\n").AllowTarget("dev"); !errors.Is(err, ErrTargetRefused) || !strings.Contains(err.Error(), "allows none") {
		t.Errorf("targets: []: %v", err)
	}
	var none *PolicyFile
	if err := none.AllowTarget("prod"); err != nil {
		t.Errorf("no policy: %v", err)
	}
}
