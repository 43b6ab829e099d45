package trust

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
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
		"min-signers: 1\n---\nmin-signers: 3\n", "staging-bucket: assets-1\ncapabilities: [IAM, CAPABILITY_AUTO_EXPAND]\n", "capabilities: IAM\n", "trust:\n  keyrings: [a]\ndeploy:\n  targets: [dev]\n", "trust: [a]\n", "keyrings: [a]\n---\n", "keyrings: [a]\n---\n[\n",
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
		{"trust:\n  keyrings: [k]\n  min-signer: 2\n", `unknown key trust.min-signer (did you mean "min-signers"?)`, 3, 3},
		{"trust:\n  staging-bucket: b-1\n", `unknown key trust.staging-bucket`, 2, 3},
		{"trust:\n  min-signers: 0\n", "min-signers must be a whole number of at least 1", 2, 16},
		{"trust: [k]\n", "trust must be a mapping", 1, 8},
		{"keyrings: [k]\ntrust:\n  keyrings: [j]\n", "keyrings is given twice", 3, 3},
		{"trust:\n  keyrings: [k]\ntrust:\n  min-signers: 2\n", "trust is given twice", 3, 1},
		{"deplyo:\n  targets: [dev]\n", `unknown key "deplyo" (did you mean "deploy"?)`, 1, 1},
		{"provenance: [a]\n", "provenance must be a mapping", 1, 13},
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

// The trust section is read here, in its section or flat (the
// deprecated form, listed in Legacy), with the same meaning. The deploy
// section is its reader's: with none linked (package deploy registers
// one) it is kept unread, and trust checks none of its keys.
func TestReadPolicySections(t *testing.T) {
	dir := t.TempDir()
	read := func(body string) *PolicyFile {
		t.Helper()
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
	flat := read("keyrings: [k]\nmin-signers: 2\nalgorithms: [SHA512]\n")
	sec := read("trust:\n  keyrings: [k]\n  min-signers: 2\n  algorithms: [SHA512]\n")
	if !reflect.DeepEqual(flat.Keyrings, sec.Keyrings) || flat.MinSigners != 2 || sec.MinSigners != 2 || !reflect.DeepEqual(flat.Algorithms, sec.Algorithms) || !reflect.DeepEqual(flat.Has, sec.Has) {
		t.Errorf("flat %+v, section %+v", flat, sec)
	}
	if !reflect.DeepEqual(flat.Legacy, []string{"keyrings", "min-signers", "algorithms"}) || len(sec.Legacy) != 0 {
		t.Errorf("legacy keys: flat %v, section %v", flat.Legacy, sec.Legacy)
	}
	p := read("trust:\n  keyrings: [k]\ndeploy:\n  capabilities: [ROOT]\n  anything: 1\n")
	if p.Section(SectionDeploy) != nil || len(p.Keyrings) != 1 {
		t.Errorf("the deploy section without its reader: %+v", p)
	}
	var none *PolicyFile
	if none.Section(SectionDeploy) != nil {
		t.Error("a nil policy has a section")
	}
}

// Only the deploy section takes a reader, once.
func TestRegisterPolicySection(t *testing.T) {
	for _, name := range []string{SectionTrust, SectionProvenance, "other"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered", name)
				}
			}()
			RegisterPolicySection(name, func(*PolicySection) (any, error) { return nil, nil })
		}()
	}
}
