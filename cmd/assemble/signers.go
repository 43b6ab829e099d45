package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/signing"
)

// Environment variables for CI: an armored secret key, and its passphrase.
const (
	envSigningKey = "ASSEMBLE_SIGNING_KEY"
	envPassphrase = "ASSEMBLE_PASSPHRASE"
	// envGPG names the gpg program for --gpg (default gpg on PATH).
	envGPG = "ASSEMBLE_GPG"
)

// signerFlagNames names the flags that choose how to sign: sign has --key
// and --gpg, build --sign-key and --sign-gpg.
type signerFlagNames struct{ key, gpg string }

var (
	signFlags  = signerFlagNames{key: "key", gpg: "gpg"}
	buildFlags = signerFlagNames{key: "sign-key", gpg: "sign-gpg"}
)

// flags returns the signing flags: the key file or gpg, --local-user, the
// passphrase file.
func (n signerFlagNames) flags() []cli.Flag {
	key := &cli.StringFlag{Name: n.key, Usage: "sign with the secret key in `FILE` (- for standard input; default $" + envSigningKey + ")"}
	if n.key == "key" {
		key.Aliases = []string{"k"}
	}
	return []cli.Flag{
		key,
		&cli.BoolFlag{Name: n.gpg, Usage: "sign through the local gpg (its agent, pinentry and smartcards; GNUPGHOME honoured) instead of a key file"},
		&cli.StringSliceFlag{Name: "local-user", Aliases: []string{"u"}, Usage: "sign with the key `ID` (fingerprint, key ID or user ID part, as gpg matches it; repeatable: one signature each)"},
		&cli.StringFlag{Name: "passphrase-file", Usage: "read the key's passphrase from `FILE` (default $" + envPassphrase + ")"},
	}
}

// given reports whether a way to sign was chosen: a key file, gpg, or a
// key in the environment.
func (n signerFlagNames) given(c *cli.Context) bool {
	return c.String(n.key) != "" || c.Bool(n.gpg) || os.Getenv(envSigningKey) != ""
}

// signers reads the signing flags: the local gpg with the --local-user
// keys, or the key file's keys (one per --local-user, or its one secret
// key), decrypted with the passphrase from --passphrase-file,
// $ASSEMBLE_PASSPHRASE or, at a terminal only, a prompt. It returns the
// files it read, which no output may overwrite.
func (n signerFlagNames) signers(c *cli.Context, now time.Time) ([]signing.Signer, []string, error) {
	ids := c.StringSlice("local-user")
	if c.Bool(n.gpg) {
		if c.String(n.key) != "" {
			return nil, nil, usagef("--%s and --%s are two ways to sign: choose one", n.key, n.gpg)
		}
		if c.String("passphrase-file") != "" {
			return nil, nil, usagef("--passphrase-file is for key files: with --%s, gpg-agent asks for the passphrase (or has it cached)", n.gpg)
		}
		return []signing.Signer{&signing.GPG{Program: os.Getenv(envGPG), LocalUsers: ids}}, nil, nil
	}
	keys, keyName, err := n.loadKeys(c)
	if err != nil {
		return nil, nil, err
	}
	inputs := []string{c.String(n.key), c.String("passphrase-file")}
	pass, err := loadPassphrase(c)
	if err != nil {
		return nil, nil, err
	}
	chosen, err := signing.SelectSigners(keys, ids, pass, now)
	if errors.Is(err, signing.ErrPassphraseNeeded) && len(pass) == 0 && c.String("passphrase-file") == "" {
		// Neither --passphrase-file nor the environment gave one: ask at a
		// terminal, and only there; retry once.
		if tty, terr := openTerminal(); terr == nil {
			p, perr := readPassphrase(tty, int(tty.Fd()), needsPassphrase(keys, ids, now))
			tty.Close()
			if perr != nil {
				return nil, nil, fmt.Errorf("%s: reading the passphrase from the terminal: %w", keyName, perr)
			}
			chosen, err = signing.SelectSigners(keys, ids, p, now)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", keyName, err)
	}
	return []signing.Signer{signing.Keys(chosen...)}, inputs, nil
}

// loadKeys reads the secret keys from --key FILE, --key - (standard input)
// or $ASSEMBLE_SIGNING_KEY. It returns them and a name for messages.
func (n signerFlagNames) loadKeys(c *cli.Context) (openpgp.EntityList, string, error) {
	var r io.Reader
	name := c.String(n.key)
	if err := checkSecretFlag("--"+n.key, name); err != nil {
		return nil, "", err
	}
	switch {
	case name == "-":
		r, name = c.App.Reader, "standard input"
	case name != "":
		f, err := os.Open(name)
		if err != nil {
			return nil, "", flagFileError("--"+n.key, err)
		}
		defer f.Close()
		r = f
	case os.Getenv(envSigningKey) != "":
		r, name = strings.NewReader(os.Getenv(envSigningKey)), "$"+envSigningKey
	default:
		return nil, "", withHint(signing.ErrNoKey, fmt.Sprintf("pass a secret key with --%s FILE (or --%s - for standard input) or $%s, or sign through gpg with --%s", n.key, n.key, envSigningKey, n.gpg))
	}
	keys, err := signing.ReadKeys(r)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	return keys, name, nil
}

// loadPassphrase reads --passphrase-file (its first line) or $ASSEMBLE_PASSPHRASE.
func loadPassphrase(c *cli.Context) ([]byte, error) {
	if p := c.String("passphrase-file"); p != "" {
		if err := checkSecretFlag("--passphrase-file", p); err != nil {
			return nil, err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, flagFileError("--passphrase-file", err)
		}
		line, _, _ := bytes.Cut(b, []byte("\n"))
		return bytes.TrimSuffix(line, []byte("\r")), nil
	}
	return []byte(os.Getenv(envPassphrase)), nil
}

// needsPassphrase returns the key SelectSigners would use with ids that
// needs a passphrase, or nil.
func needsPassphrase(keys openpgp.EntityList, ids []string, now time.Time) *openpgp.Entity {
	candidates := keys
	if len(ids) > 0 {
		candidates = nil
		for _, id := range ids {
			candidates = append(candidates, signing.MatchKeys(keys, id)...)
		}
	}
	for _, e := range candidates {
		_, err := signing.SelectSigner(openpgp.EntityList{e}, nil, now)
		if errors.Is(err, signing.ErrPassphraseNeeded) {
			return e
		}
	}
	return nil
}

// describeSignature names a signature's key for messages: `"User ID"
// (FINGERPRINT)`, or the key ID and fingerprint the signature carries.
func describeSignature(s signing.Signature) string {
	switch {
	case s.UserID != "":
		return fmt.Sprintf("%q (%s)", s.UserID, s.Fingerprint)
	case s.Fingerprint != "":
		return s.Fingerprint
	case s.IssuerFingerprint != "":
		return fmt.Sprintf("key ID %s (fingerprint %s)", s.KeyID, s.IssuerFingerprint)
	}
	return "key ID " + s.KeyID
}

// describeSignatures joins describeSignature of each.
func describeSignatures(sigs []signing.Signature) string {
	var names []string
	for _, s := range sigs {
		names = append(names, describeSignature(s))
	}
	return strings.Join(names, ", ")
}
