package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/deploy"
	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/packager"
	"github.com/cloud-assembly/assemble/signing"
	"github.com/cloud-assembly/assemble/trust"
)

// Issue 29, item 5: the command does not re-check an option a library
// checks. Each refusal below is the library's (errors.Is its sentinel,
// an *errcode.FieldError naming the library's field, and the library said
// the same with the field's name), said by the command with its flag, with
// the message and exit code 2 the command's own check gave before.
func TestOptionChecksAreTheLibrarys(t *testing.T) {
	key := filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc")
	zero, minus := 0, -1
	for _, tt := range []struct {
		args   string
		want   error  // the library's sentinel
		field  string // the library's name for the option
		stderr string // what the command says, with its flag
		lib    error  // the library's own verdict on the same value
	}{
		{"verify --keyring " + key + " --min-signers 0 app.cloud", trust.ErrOption, "MinSigners",
			"assemble: error: --min-signers 0: at least 1 signature is always needed\n", loadErr(trust.Options{Keyrings: []string{key}, MinSigners: &zero})},
		{"verify --keyring " + key + " --min-signers -1 app.cloud", trust.ErrOption, "MinSigners",
			"assemble: error: --min-signers -1: at least 1 signature is always needed\n", loadErr(trust.Options{Keyrings: []string{key}, MinSigners: &minus})},
		{"verify --keyring " + key + " --allow-algorithm MD5 app.cloud", trust.ErrOption, "Algorithms",
			"assemble: error: --allow-algorithm \"MD5\": use SHA256, SHA384 or SHA512\n", loadErr(trust.Options{Keyrings: []string{key}, Algorithms: []string{"MD5"}})},
		{"verify --keyring " + key + " --allow-algorithm SHA256,SHA512 app.cloud", trust.ErrOption, "Algorithms",
			"assemble: hint: a value is never split on commas: repeat the flag, --allow-algorithm SHA256 --allow-algorithm SHA512\n", loadErr(trust.Options{Keyrings: []string{key}, Algorithms: []string{"SHA256,SHA512"}})},
		{"verify --keyring nosuch.asc app.cloud", nil, "",
			"assemble: error: --keyring nosuch.asc: no such file or directory\n", nil},
		{"deploy --keyring " + key + " --method fast app.cloud", deploy.ErrOption, "Method",
			"assemble: error: --method \"fast\": want change-set or direct\n", deploy.Options{Method: "fast"}.Check()},
		{"deploy --keyring " + key + " --max-failures -1 app.cloud", deploy.ErrOption, "MaxFailures",
			"assemble: error: --max-failures -1: at least 0\n", deploy.Options{MaxFailures: -1}.Check()},
		{"deploy --keyring " + key + " --require-approval sometimes app.cloud", deploy.ErrApprovalLevel, "RequireApproval",
			"assemble: error: --require-approval \"sometimes\": want never, any-change or broadening\n", approvalErr("sometimes")},
		{"package --format xml template.yaml", packager.ErrOption, "Format",
			"assemble: error: --format \"xml\": use yaml or json\n", packager.PackageOptions{Format: "xml"}.Check()},
		{"sign --algorithm MD5 app.cloud", signing.ErrWeakAlgorithm, "algorithm",
			"assemble: error: --algorithm \"MD5\": use SHA256, SHA384 or SHA512\n", algErr("MD5")},
		{"sign --algorithm SHA3 app.cloud", signing.ErrAttestation, "algorithm",
			"assemble: error: --algorithm \"SHA3\": use SHA256, SHA384 or SHA512\n", algErr("SHA3")},
		{"build --sign-gpg --sign-algorithm MD5 -o app.cloud project", signing.ErrWeakAlgorithm, "algorithm",
			"assemble: error: --sign-algorithm \"MD5\": use SHA256, SHA384 or SHA512\n", algErr("MD5")},
	} {
		args := append([]string{"assemble"}, strings.Fields(tt.args)...)
		var stdout, stderr strings.Builder
		if got := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); got != exitUsage && tt.want != nil {
			t.Errorf("assemble %s: exit %d, want %d\n%s", tt.args, got, exitUsage, stderr.String())
		}
		if !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("assemble %s: stderr %q, want %q in it", tt.args, stderr.String(), tt.stderr)
		}
		if tt.want == nil {
			continue
		}
		err := newApp(strings.NewReader(""), &strings.Builder{}, &strings.Builder{}).RunContext(context.Background(), args)
		var fe *errcode.FieldError
		if !errors.Is(err, tt.want) || !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("assemble %s: %v (%#v) is not the library's %v about %s", tt.args, err, fe, tt.want, tt.field)
		}
		var lfe *errcode.FieldError
		if !errors.Is(tt.lib, tt.want) || !errors.As(tt.lib, &lfe) || lfe.Field != tt.field || lfe.Reason != fe.Reason || strings.Contains(tt.lib.Error(), "--") {
			t.Errorf("assemble %s: the library says %v", tt.args, tt.lib)
		}
	}
}

func loadErr(o trust.Options) error {
	_, err := trust.Load(o)
	return err
}

func approvalErr(s string) error {
	_, err := deploy.ParseApproval(s)
	return err
}

func algErr(s string) error {
	_, err := signing.ParseAlgorithm(s)
	return err
}

// Keyring presence is the library's verdict (trust: a signed assembly
// and no trusted keys is ErrNoKeyring, said without a flag); the command
// names its flags, exit 2, as its own check did before.
func TestNoKeyringIsTheLibrarys(t *testing.T) {
	dir := t.TempDir()
	fixtures := filepath.Join("..", "..", "fixtures")
	unsigned, signed := filepath.Join(dir, "u.cloud"), filepath.Join(dir, "s.cloud")
	for _, args := range [][]string{
		{"build", "-q", "-o", unsigned, filepath.Join(fixtures, "examples", "webapp")},
		{"sign", "-q", "--key", filepath.Join(fixtures, "keys", "ed25519.sec.asc"), "-o", signed, unsigned},
	} {
		var stderr strings.Builder
		if code := run(context.Background(), append([]string{"assemble"}, args...), strings.NewReader(""), &strings.Builder{}, &stderr); code != 0 {
			t.Fatalf("%v: %d %s", args, code, stderr.String())
		}
	}
	for cmd, or := range map[string]string{"verify": ", or --allow-unsigned", "deploy": ", or --allow-unsigned", "status": ", or --allow-unsigned", "extract": ", or --allow-unsigned"} {
		args := []string{"assemble", cmd, signed}
		if cmd == "extract" {
			args = []string{"assemble", cmd, "-d", filepath.Join(dir, "out"), signed}
		}
		var stderr strings.Builder
		if code := run(context.Background(), args, strings.NewReader(""), &strings.Builder{}, &stderr); code != exitUsage {
			t.Errorf("%s: exit %d, want %d: %s", cmd, code, exitUsage, stderr.String())
		}
		if want := "assemble: error: " + cmd + " needs at least one --keyring FILE of trusted public keys (or a --policy FILE naming keyrings" + or + ")\n"; !strings.Contains(stderr.String(), want) {
			t.Errorf("%s: stderr %q, want %q", cmd, stderr.String(), want)
		}
		err := newApp(strings.NewReader(""), &strings.Builder{}, &strings.Builder{}).RunContext(context.Background(), args)
		if !errors.Is(err, trust.ErrNoKeyring) {
			t.Errorf("%s: %v is not trust.ErrNoKeyring", cmd, err)
		}
	}
	_, err := trust.Open(context.Background(), signed, nil, nil)
	if !errors.Is(err, trust.ErrNoKeyring) || strings.Contains(err.Error(), "--") {
		t.Errorf("the library's verdict: %v", err)
	}
}
