package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Issue 23, item 1: scripts/release in snapshot mode builds two targets
// (this machine's, and windows/amd64) with the version stamped in,
// writes SHA256SUMS that match the binaries, a gpg signature of it (when
// gpg is installed) and a release assembly that `assemble verify`
// accepts. It cross-compiles: minutes on a cold build cache, so -short
// skips it.
func TestReleaseSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles assemble twice (-short)")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	out := filepath.Join(t.TempDir(), "dist")
	key := filepath.Join(root, "fixtures", "keys", "ed25519.sec.asc")
	host := runtime.GOOS + "/" + runtime.GOARCH
	cmd := exec.Command(filepath.Join(root, "scripts", "release"), "--snapshot", "--out", out, "--targets", host+" windows/amd64")
	cmd.Env = append(os.Environ(), "RELEASE_KEY="+key, "SOURCE_DATE_EPOCH=1767323045")
	gpg, gpgErr := exec.LookPath("gpg")
	if gpgErr == nil {
		home := filepath.Join(t.TempDir(), "gnupg")
		os.Mkdir(home, 0o700)
		if b, err := exec.Command(gpg, "--homedir", home, "--batch", "--import", key).CombinedOutput(); err != nil {
			t.Fatalf("gpg --import: %v\n%s", err, b)
		}
		cmd.Env = append(cmd.Env, "GNUPGHOME="+home, "RELEASE_GPG_USER=ed25519@example.test")
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, b)
	}

	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
	if len(lines) != 2 {
		t.Fatalf("SHA256SUMS has %d lines, want 2:\n%s", len(lines), sums)
	}
	var native string
	for _, l := range lines {
		sum, name, ok := strings.Cut(l, "  ")
		if !ok || !strings.HasPrefix(name, "assemble_v0.0.0-snapshot+") {
			t.Fatalf("SHA256SUMS line %q", l)
		}
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: sha256 %x, SHA256SUMS says %s", name, got, sum)
		}
		if strings.HasSuffix(name, "_"+runtime.GOOS+"_"+runtime.GOARCH) {
			native = filepath.Join(out, name)
		}
	}
	if !strings.Contains(string(sums), "_windows_amd64.exe\n") {
		t.Errorf("no windows binary in SHA256SUMS:\n%s", sums)
	}

	// The stamped version, commit and date.
	v, err := exec.Command(native, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(v), "assemble version v0.0.0-snapshot+") || !strings.Contains(string(v), "2026-01-02T03:04:05Z") {
		t.Errorf("%s --version: %v\n%s", native, err, v)
	}

	// The release assembly verifies, and holds the binaries and sums.
	clouds, _ := filepath.Glob(filepath.Join(out, "*.cloud"))
	if len(clouds) != 1 {
		t.Fatalf("release assemblies: %v", clouds)
	}
	var stdout, stderr strings.Builder
	code := run(context.Background(), []string{"assemble", "verify", "--keyring", filepath.Join(root, "fixtures", "keys", "ed25519.pub.asc"), clouds[0]},
		strings.NewReader(""), &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "verified 5 files") {
		t.Errorf("assemble verify: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}

	if gpgErr == nil {
		c := exec.Command(gpg, "--batch", "--verify", filepath.Join(out, "SHA256SUMS.asc"), filepath.Join(out, "SHA256SUMS"))
		c.Env = cmd.Env
		if b, err := c.CombinedOutput(); err != nil {
			t.Errorf("gpg --verify SHA256SUMS.asc: %v\n%s", err, b)
		}
	}
}
