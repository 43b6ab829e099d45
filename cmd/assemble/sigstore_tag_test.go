package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The default binary does not link sigstore-go's certificate and
// transparency-log verifier (issue 32, item 4: about 300 packages and a
// quarter of the binary); -tags sigstore adds verify-github-attestation.
func TestSigstoreVerifierOnlyWithTag(t *testing.T) {
	deps := func(tags ...string) string {
		args := append([]string{"list", "-deps"}, tags...)
		out, err := exec.Command("go", append(args, ".")...).Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", tags, err)
		}
		return string(out)
	}
	const verifier = "github.com/sigstore/sigstore-go/pkg/verify\n"
	if strings.Contains(deps(), verifier) {
		t.Fatal("the default binary links sigstore-go's verifier: keep it behind the sigstore build tag")
	}
	if !strings.Contains(deps("-tags", "sigstore"), verifier) {
		t.Fatal("-tags sigstore does not link sigstore-go's verifier")
	}
	if testing.Short() {
		t.Skip("builds the command with -tags sigstore")
	}
	mod, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/sigstore/sigstore-go").Output()
	if err != nil || strings.TrimSpace(string(mod)) == "" {
		t.Skipf("sigstore-go is not in the module cache: %v", err)
	}
	examples := filepath.Join(strings.TrimSpace(string(mod)), "examples")
	dir := t.TempDir()
	bin := filepath.Join(dir, "assemble-sigstore")
	if out, err := exec.Command("go", "build", "-tags", "sigstore", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags sigstore: %v\n%s", err, out)
	}
	// sigstore-go's example bundle is a real GitHub Actions attestation,
	// of an npm package: offline, it is judged and refused for our file
	// (another subject), which shows the command, the trusted root and
	// the bundle reading wired together.
	file := filepath.Join(dir, "app.cloud")
	if err := os.WriteFile(file, []byte("not the attested artifact"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "verify-github-attestation", "--json",
		"--bundle", filepath.Join(examples, "bundle-provenance.json"),
		"--trusted-root", filepath.Join(examples, "trusted-root-public-good.json"),
		"--repo", "sigstore/sigstore-js", file)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want 1\n%s", err, out)
	}
	var got struct {
		Error struct{ Code string } `json:"error"`
	}
	if err := json.Unmarshal(out, &got); err != nil || got.Error.Code != "ghattest_not_verified" {
		t.Fatalf("--json = %s (%v), want error code ghattest_not_verified", out, err)
	}
	if out, err := exec.Command(bin, "verify-github-attestation", "--bundle", filepath.Join(examples, "bundle-provenance.json"), "--trusted-root", filepath.Join(dir, "missing.json"), "--repo", "a/b", file).CombinedOutput(); err == nil || !strings.Contains(string(out), "--trusted-root") {
		t.Fatalf("missing trusted root: %v\n%s", err, out)
	}
}
