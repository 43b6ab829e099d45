package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cloud-assembly/assemble/internal/gpgtest"
	"github.com/cloud-assembly/assemble/signing"
)

// scriptPassphrase is the passphrase of fixtures/keys/passphrase.sec.asc.
const scriptPassphrase = "correct horse battery staple"

// gpgHomes maps a running script to its GnuPG home (gpghome).
var gpgHomes sync.Map

// scriptTB lets gpgtest report to a script.
type scriptTB struct{ ts *testscript.TestScript }

func (s scriptTB) Helper()                           {}
func (s scriptTB) Skip(args ...any)                  { s.ts.Fatalf("%v (guard the script with [!exec:...] skip)", args) }
func (s scriptTB) Fatalf(format string, args ...any) { s.ts.Fatalf(format, args...) }
func (s scriptTB) Cleanup(f func())                  { s.ts.Defer(f) }

// gpghome KEYFILE... makes a GnuPG home with its own gpg-agent (which can
// run no pinentry, and allows preset passphrases), imports the key files
// and sets $GNUPGHOME to it. Guard scripts with [!exec:gpg-agent] skip.
func gpgHome(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: gpghome KEYFILE...")
	}
	var files []string
	for _, a := range args {
		files = append(files, ts.MkAbs(a))
	}
	h := gpgtest.New(scriptTB{ts}, scriptPassphrase, files...)
	gpgHomes.Store(ts, h)
	ts.Defer(func() { gpgHomes.Delete(ts) })
	ts.Setenv("GNUPGHOME", h.Dir)
}

// gpgpreset UID presets the passphrase of fixtures' protected key UID in
// the agent of gpghome, as gpg-preset-passphrase does.
func gpgPreset(ts *testscript.TestScript, neg bool, args []string) {
	h, ok := gpgHomes.Load(ts)
	if neg || len(args) != 1 || !ok {
		ts.Fatalf("usage: gpgpreset UID (after gpghome)")
	}
	h.(*gpgtest.Home).Preset(args[0], scriptPassphrase)
}

// fpr VAR KEYFILE sets $VAR to the primary key fingerprint of the (first)
// key in KEYFILE, so that scripts do not hard-code the fixture keys'
// fingerprints (fixtures/keys/gen.sh makes new keys each run).
func fprCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: fpr VAR KEYFILE")
	}
	f, err := os.Open(ts.MkAbs(args[1]))
	ts.Check(err)
	defer f.Close()
	keys, err := signing.ReadKeys(f)
	ts.Check(err)
	ts.Setenv(args[0], fmt.Sprintf("%X", keys[0].PrimaryKey.Fingerprint))
}

// readme DIR OLD=NEW... writes the README's signing recipes (between its
// recipes:begin and recipes:end markers) to DIR: each ```sh block as
// block-N.sh (N from 1), each ```yaml block as the file its first line
// names ("# release-policy.yaml"), with every OLD replaced by NEW (the
// test keys' names for the README's example ones).
func readmeRecipes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: readme DIR OLD=NEW...")
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	ts.Check(err)
	s := string(b)
	i, j := strings.Index(s, "<!-- recipes:begin -->"), strings.Index(s, "<!-- recipes:end -->")
	if i < 0 || j < i {
		ts.Fatalf("README.md has no recipes:begin ... recipes:end section")
	}
	var subs []string
	for _, a := range args[1:] {
		old, new, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("readme: %q is not OLD=NEW", a)
		}
		subs = append(subs, old, new)
	}
	r := strings.NewReplacer(subs...)
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	n := 0
	for _, m := range regexp.MustCompile("(?s)```(sh|yaml)\n(.*?)```").FindAllStringSubmatch(s[i:j], -1) {
		body := r.Replace(m[2])
		name := ""
		if m[1] == "sh" {
			n++
			name = fmt.Sprintf("block-%d.sh", n)
		} else {
			first, _, _ := strings.Cut(body, "\n")
			name = strings.TrimSpace(strings.TrimPrefix(first, "#"))
		}
		ts.Check(os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	if n == 0 {
		ts.Fatalf("no sh recipes in the README's recipes section")
	}
}
