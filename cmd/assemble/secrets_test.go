package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretLines are the lines of an armored key that must never be printed:
// every line of its body (the armor header aside).
func secretLines(key string) []string {
	var out []string
	for _, l := range strings.Split(key, "\n") {
		if l = strings.TrimSpace(l); len(l) >= 8 && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

// Issue 27, item 13: the armored key itself given as --sign-key (or sign's
// --key), or a passphrase as --passphrase-file, is refused naming the
// flag, and no byte of it reaches stdout or stderr, in text or --json.
// Before, the error and --json's "file" carried the whole private key.
func TestSecretNeverEchoed(t *testing.T) {
	kb, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "keys", "ed25519.sec.asc"))
	if err != nil {
		t.Fatal(err)
	}
	key := string(kb)
	const passphrase = "correct horse battery staple"
	dir := t.TempDir()
	webapp := filepath.Join("..", "..", "fixtures", "examples", "webapp")
	keyFile := filepath.Join("..", "..", "fixtures", "keys", "ed25519.sec.asc")
	app := filepath.Join(dir, "app.cloud")
	var out bytes.Buffer
	if code := run(context.Background(), []string{"assemble", "build", "-q", "-o", app, webapp}, nil, &out, &out); code != 0 {
		t.Fatal(out.String())
	}
	for _, tc := range []struct {
		name string
		args []string
		flag string
		code int
	}{
		{"build --sign-key KEY", []string{"build", "-o", filepath.Join(dir, "x.cloud"), "--sign-key", key, webapp}, "--sign-key", exitUsage},
		{"sign --key KEY", []string{"sign", "-o", filepath.Join(dir, "y.cloud"), "--key", key, app}, "--key", exitUsage},
		{"sign --passphrase-file PASSPHRASE", []string{"sign", "-o", filepath.Join(dir, "z.cloud"), "--key", keyFile, "--passphrase-file", passphrase, app}, "--passphrase-file", exitFailure},
	} {
		for _, asJSON := range []bool{false, true} {
			args := append([]string{"assemble"}, tc.args...)
			if asJSON {
				args = append(args, "--json")
			}
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args, nil, &stdout, &stderr)
			all := stdout.String() + stderr.String()
			if code != tc.code || !strings.Contains(stderr.String(), "assemble: error: "+tc.flag+": ") {
				t.Errorf("%s (json %v): exit %d, want %d naming %s:\n%s", tc.name, asJSON, code, tc.code, tc.flag, all)
			}
			for _, secret := range append(secretLines(key), passphrase, "PRIVATE KEY") {
				if strings.Contains(all, secret) {
					t.Fatalf("%s (json %v) printed %q:\n%s", tc.name, asJSON, secret, all)
				}
			}
		}
	}
}

// The net under every message: report, which prints every error (text and
// --json), takes out armored private keys, whole or cut short, wherever they sit
// in a message, and the values of $ASSEMBLE_SIGNING_KEY and
// $ASSEMBLE_PASSPHRASE.
func TestReportRedactsSecrets(t *testing.T) {
	kb, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "keys", "ed25519.sec.asc"))
	if err != nil {
		t.Fatal(err)
	}
	key := strings.TrimSpace(string(kb))
	const passphrase = "s3cr3t-Passphrase"
	t.Setenv(envPassphrase, passphrase)
	rng := rand.New(rand.NewSource(27))
	words := []string{"deploy", "app.cloud", `"quoted"`, "\\", "\n", "line:1", "{}", "é"}
	for i := 0; i < 300; i++ {
		secret := key
		switch rng.Intn(4) {
		case 0: // cut short
			secret = key[:40+rng.Intn(len(key)-40)]
		case 1:
			secret = passphrase
		case 2:
			secret = strings.ReplaceAll(key, "PGP PRIVATE KEY BLOCK", "OPENSSH PRIVATE KEY")
		}
		var b strings.Builder
		for j := rng.Intn(4); j > 0; j-- {
			b.WriteString(words[rng.Intn(len(words))] + " ")
		}
		b.WriteString(secret)
		for j := rng.Intn(4); j > 0; j-- {
			b.WriteString(" " + words[rng.Intn(len(words))])
		}
		err := withResult(onFile("sign", b.String(), errors.New(b.String())), map[string]string{"note": b.String()})
		var stderr, stdout bytes.Buffer
		report(&stderr, &stdout, fmt.Errorf("x: %w", err))
		all := stderr.String() + stdout.String()
		for _, s := range append(secretLines(secret), passphrase) {
			if strings.Contains(all, s) || strings.Contains(all, strings.ReplaceAll(s, "/", `\/`)) {
				t.Fatalf("case %d printed %q:\n%s", i, s, all)
			}
		}
		if !strings.Contains(stdout.String(), `"error"`) {
			t.Fatalf("case %d: the JSON is gone:\n%s", i, stdout.String())
		}
	}
}

// build signs with $ASSEMBLE_SIGNING_KEY, as its help says; without any
// key its summary says "unsigned", and --json "signed": false.
func TestBuildSigningKeyFromEnvironment(t *testing.T) {
	kb, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "keys", "ed25519.sec.asc"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	webapp := filepath.Join("..", "..", "fixtures", "examples", "webapp")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"assemble", "build", "-o", filepath.Join(dir, "u.cloud"), webapp}, nil, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), " files, unsigned\n") {
		t.Errorf("unsigned build: %d %s%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"assemble", "build", "--json", "-o", filepath.Join(dir, "u.cloud"), webapp}, nil, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), `"signed": false`) {
		t.Errorf("unsigned build --json: %d %s", code, stdout.String())
	}
	t.Setenv(envSigningKey, string(kb))
	stdout.Reset()
	signed := filepath.Join(dir, "s.cloud")
	if code := run(context.Background(), []string{"assemble", "build", "-o", signed, webapp}, nil, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), `signed by "Test Signer Ed25519`) {
		t.Fatalf("build with $%s: %d %s%s", envSigningKey, code, stdout.String(), stderr.String())
	}
	keyring := filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc")
	stdout.Reset()
	if code := run(context.Background(), []string{"assemble", "verify", "--keyring", keyring, signed}, nil, &stdout, &stderr); code != 0 {
		t.Errorf("verify: %d %s%s", code, stdout.String(), stderr.String())
	}
}
