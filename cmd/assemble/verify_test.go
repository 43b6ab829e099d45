package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cloud-assembly/assemble/assembly"
)

// verify's exit codes, as documented in --help and the README: 0 valid,
// 1 invalid or untrusted, 2 usage.
func TestVerifyExitCodes(t *testing.T) {
	dir := t.TempDir()
	keys := filepath.Join("..", "..", "fixtures", "keys")
	unsigned := filepath.Join(dir, "unsigned.cloud")
	w := assembly.NewWriter(assembly.WriterOptions{})
	w.AddBytes("manifest.json", []byte(`{"schema": "cloud-assembly/1.0", "droplets": {}}`))
	if err := w.WriteFile(context.Background(), unsigned); err != nil {
		t.Fatal(err)
	}
	signed := filepath.Join(dir, "signed.cloud")
	untrusted := filepath.Join(dir, "untrusted.cloud")
	exec := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		line := append([]string{"assemble"}, args...)
		if slices.Contains(args, "--json") {
			return runJSON(t, line, &out, &errb), errb.String()
		}
		code := run(context.Background(), line, bytes.NewReader(nil), &out, &errb)
		return code, errb.String()
	}
	if code, stderr := exec("sign", "--key", filepath.Join(keys, "ed25519.sec.asc"), "-o", signed, unsigned); code != 0 {
		t.Fatalf("sign: %d %s", code, stderr)
	}
	if code, stderr := exec("sign", "--key", filepath.Join(keys, "untrusted.sec.asc"), "-o", untrusted, unsigned); code != 0 {
		t.Fatalf("sign: %d %s", code, stderr)
	}
	trusted := filepath.Join(keys, "trusted.asc")
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"verify", "--keyring", trusted, signed}, 0},
		{[]string{"verify", signed, "--keyring", trusted, "--json"}, 0},
		{[]string{"verify", "--allow-unsigned", unsigned}, 0},
		{[]string{"verify", "--keyring", trusted, unsigned}, 1},
		{[]string{"verify", "--keyring", trusted, untrusted}, 1},
		{[]string{"verify", "--keyring", trusted, untrusted, "--json"}, 1},
		{[]string{"verify", "--json", "--keyring", trusted}, 2},
		{[]string{"verify", "--keyring", trusted, filepath.Join(dir, "absent.cloud")}, 1},
		{[]string{"verify", "--keyring", trusted}, 2},
		{[]string{"verify", signed}, 2},
		{[]string{"verify", "--no-such-flag", signed}, 2},
		{[]string{"sign", unsigned}, 1},
		{[]string{"sign", "--key", trusted, "--algorithm", "MD5", unsigned}, 2},
		{[]string{"extract", "--keyring", trusted, signed}, 2},
	}
	for _, tt := range tests {
		if code, stderr := exec(tt.args...); code != tt.want {
			t.Errorf("assemble %v: exit %d, want %d\n%s", tt.args, code, tt.want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "absent.cloud")); err == nil {
		t.Error("verify created a file")
	}
}
