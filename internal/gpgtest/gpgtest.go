// Package gpgtest makes throw-away GnuPG homes, each with its own
// gpg-agent, for tests that sign through a real gpg: keys imported, a
// passphrase preset as gpg-preset-passphrase does it (allow-preset-passphrase),
// and no pinentry that could ever prompt. Tests skip, saying why, when gpg
// is not installed (CI installs it).
package gpgtest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// TB is the part of testing.TB a Home needs (testscript's T has it too).
type TB interface {
	Helper()
	Skip(args ...any)
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// A Home is a GnuPG home folder with its own agent.
type Home struct {
	Dir string
	t   TB
}

// NoPinentry is the pinentry program a Home's agent is told to run: there
// is none, so a key whose passphrase is not preset cannot be used, as on a
// build machine with no terminal and no display.
const NoPinentry = "/nonexistent/pinentry"

// New makes a Home (under the system's temporary folder: gpg-agent's
// socket path must stay short) whose agent allows preset passphrases and
// can run no pinentry, imports the key files given (secret keys with
// passphrase, if they need one), and stops the agent and removes the
// folder when the test ends. It skips the test when gpg is missing.
func New(t TB, passphrase string, keyFiles ...string) *Home {
	t.Helper()
	for _, tool := range []string{"gpg", "gpg-agent", "gpgconf", "gpg-connect-agent"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " not installed (apt-get install gnupg)")
		}
	}
	dir, err := os.MkdirTemp("", "gpg")
	if err != nil {
		t.Fatalf("%v", err)
	}
	h := &Home{Dir: dir, t: t}
	t.Cleanup(func() {
		exec.Command("gpgconf", "--homedir", dir, "--kill", "all").Run()
		os.RemoveAll(dir)
	})
	conf := "allow-preset-passphrase\npinentry-program " + NoPinentry + "\n"
	if err := os.WriteFile(filepath.Join(dir, "gpg-agent.conf"), []byte(conf), 0o600); err != nil {
		t.Fatalf("%v", err)
	}
	for _, f := range keyFiles {
		// Importing a protected secret key hands it to the agent; the
		// passphrase is given here, once, through loopback.
		if _, err := h.Run(nil, "--pinentry-mode", "loopback", "--passphrase", passphrase, "--import", f); err != nil {
			t.Fatalf("gpg --import %s: %v", f, err)
		}
	}
	return h
}

// Env is the environment that points gpg at this home.
func (h *Home) Env() string { return "GNUPGHOME=" + h.Dir }

// Run runs gpg --homedir DIR --batch with args and stdin, returning its
// standard output; the error carries its standard error.
func (h *Home) Run(stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.Command("gpg", append([]string{"--homedir", h.Dir, "--batch", "--yes"}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%v: %s", err, errb.String())
	}
	return out.Bytes(), nil
}

// Preset stores passphrase in the agent for every key (primary and
// subkeys) of the secret key uid, as gpg-preset-passphrase --preset does,
// so that gpg signs with it without asking.
func (h *Home) Preset(uid, passphrase string) {
	h.t.Helper()
	out, err := h.Run(nil, "--with-colons", "--with-keygrip", "--list-secret-keys", uid)
	if err != nil {
		h.t.Fatalf("listing %s: %v", uid, err)
	}
	libexec, err := exec.Command("gpgconf", "--list-dirs", "libexecdir").Output()
	if err != nil {
		h.t.Fatalf("gpgconf --list-dirs libexecdir: %v", err)
	}
	preset := filepath.Join(strings.TrimSpace(string(libexec)), "gpg-preset-passphrase")
	if _, err := os.Stat(preset); err != nil {
		h.t.Skip("gpg-preset-passphrase not installed: " + err.Error())
	}
	// The agent must be running to be preset.
	if err := h.agent("/bye"); err != nil {
		h.t.Fatalf("starting gpg-agent: %v", err)
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 10 || f[0] != "grp" {
			continue
		}
		cmd := exec.Command(preset, "--preset", "-P", passphrase, f[9])
		cmd.Env = append(os.Environ(), h.Env())
		if b, err := cmd.CombinedOutput(); err != nil {
			h.t.Fatalf("gpg-preset-passphrase %s: %v: %s", f[9], err, b)
		}
		n++
	}
	if n == 0 {
		h.t.Fatalf("no keygrip for %s", uid)
	}
}

// Forget drops every preset or cached passphrase from the agent.
func (h *Home) Forget() {
	h.t.Helper()
	if err := h.agent("RELOADAGENT", "/bye"); err != nil {
		h.t.Fatalf("reloading gpg-agent: %v", err)
	}
}

func (h *Home) agent(cmds ...string) error {
	cmd := exec.Command("gpg-connect-agent", append([]string{"--homedir", h.Dir}, cmds...)...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, b)
	}
	if bytes.Contains(b, []byte("ERR ")) {
		return errors.New(strings.TrimSpace(string(b)))
	}
	return nil
}
