package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/cloud-assembly/assemble/signing"
)

func readFixtureKeys(t *testing.T, name string) openpgp.EntityList {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "fixtures", "keys", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys, err := signing.ReadKeys(f)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// promptedKey is the key signing.LoadSigners asks the prompt for, when
// the key file is the fixture name (nil when it asks nothing).
func promptedKey(t *testing.T, name string) *openpgp.Entity {
	t.Helper()
	var asked *openpgp.Entity
	signing.LoadSigners(&signing.SignerOptions{KeyFile: filepath.Join("..", "..", "fixtures", "keys", name), Now: time.Now(),
		Prompt: func(e *openpgp.Entity) ([]byte, error) { asked = e; return nil, nil }})
	return asked
}

func TestPassphrasePrompt(t *testing.T) {
	e := promptedKey(t, "passphrase.sec.asc")
	if e == nil {
		t.Fatal("LoadSigners asked for no passphrase of passphrase.sec.asc")
	}
	got := passphrasePrompt(e)
	want := `passphrase for "` + signing.UserID(e) + `" (` + strings.ToUpper(hexFP(e)) + `): `
	if got != want {
		t.Errorf("prompt = %q, want %q", got, want)
	}
	if signing.UserID(e) == "" {
		t.Error("fixture key has no user ID; the prompt should name it")
	}
	if got := passphrasePrompt(nil); got != "passphrase: " {
		t.Errorf("prompt(nil) = %q", got)
	}
	// An unprotected key needs no passphrase.
	if e := promptedKey(t, "ed25519.sec.asc"); e != nil {
		t.Errorf("prompted for an unprotected key: %s", signing.UserID(e))
	}
}

func hexFP(e *openpgp.Entity) string {
	const digits = "0123456789ABCDEF"
	var b strings.Builder
	for _, c := range e.PrimaryKey.Fingerprint {
		b.WriteByte(digits[c>>4])
		b.WriteByte(digits[c&15])
	}
	return b.String()
}

// Under go test neither standard input nor standard error is a terminal
// (go test runs the binary with them redirected), so nothing may prompt.
func TestOpenTerminalWithoutTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	oldIn, oldErr := os.Stdin, os.Stderr
	os.Stdin, os.Stderr = null, null
	defer func() { os.Stdin, os.Stderr = oldIn, oldErr }()
	tty, err := openTerminal()
	if err == nil {
		tty.Close()
		t.Fatal("openTerminal succeeded with stdin and stderr on /dev/null")
	}
	if !errors.Is(err, errNoTerminal) {
		t.Errorf("err = %v, want errNoTerminal", err)
	}
}

// readPassphrase on a non-terminal fd fails rather than read in the clear,
// after writing the prompt.
func TestReadPassphraseNotATerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "notty")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("secret\n")
	f.Seek(0, 0)
	var out bytes.Buffer
	if _, err := readPassphrase(&out, int(f.Fd()), nil); err == nil {
		t.Fatal("readPassphrase read from a regular file")
	}
	if out.String() != "passphrase: \n" {
		t.Errorf("tty output = %q", out.String())
	}
}
