package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloud-assembly/assemble/signing"
)

// FuzzReadPolicy: whatever a --policy file holds, readPolicy either
// refuses it with a placed policyError, or reads settings that hold the
// file's rules: min-signers at least 1 (0 when not given), every required
// signer a fingerprint, every algorithm a strong one, keyring paths made
// relative to the file's folder.
func FuzzReadPolicy(f *testing.F) {
	for _, seed := range []string{
		"keyrings: [keys]\nmin-signers: 2\nrequire-signers:\n  - 0123456789ABCDEF0123456789ABCDEF01234567\nalgorithms: [SHA256, SHA512]\n",
		"untrusted-keyrings: [a.asc, /abs/b.asc]\n",
		"min-signer: 2\n", "min-signers: 0\n", "keyrings: keys\n", "- a\n", "", "keyrings: [keys\n",
		"algorithms: [MD5]\n", "keyrings: [a]\nkeyrings: [b]\n", "require-signers: [~]\n",
	} {
		f.Add(seed)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, body string) {
		file := filepath.Join(dir, "policy.yaml")
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := readPolicy(file)
		if err != nil {
			var pe *policyError
			if !errors.As(err, &pe) || pe.File != file {
				t.Fatalf("error %v is not a policyError about the file", err)
			}
			return
		}
		if p.minSigners < 0 || (p.has["min-signers"] && p.minSigners < 1) {
			t.Fatalf("min-signers %d", p.minSigners)
		}
		for _, fp := range p.signers {
			if _, err := signing.NormalizeFingerprint(fp); err != nil {
				t.Fatalf("required signer %q: %v", fp, err)
			}
		}
		for _, a := range p.algorithms {
			if _, err := signing.ParseAlgorithm(a); err != nil {
				t.Fatalf("algorithm %q: %v", a, err)
			}
		}
		for _, k := range append(p.keyrings, p.untrusted...) {
			if !filepath.IsAbs(k) {
				t.Fatalf("keyring %q is not resolved against the policy's folder", k)
			}
		}
	})
}
