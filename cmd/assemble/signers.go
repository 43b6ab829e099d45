package main

import (
	"errors"
	"fmt"
	"io/fs"
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

// signers translates the signing flags into signing.LoadSigners: the
// local gpg with the --local-user keys, or the key file's keys (one per
// --local-user, or its one secret key), decrypted with the passphrase from
// --passphrase-file, $ASSEMBLE_PASSPHRASE or, at a terminal only, a
// prompt. It returns the files it read, which no output may overwrite.
func (n signerFlagNames) signers(c *cli.Context, now time.Time) ([]signing.Signer, []string, error) {
	key, passFile := c.String(n.key), c.String("passphrase-file")
	if err := checkSecretFlag("--"+n.key, key); err != nil {
		return nil, nil, err
	}
	if passFile != "" {
		if err := checkSecretFlag("--passphrase-file", passFile); err != nil {
			return nil, nil, err
		}
	}
	opts := &signing.SignerOptions{
		GPG: c.Bool(n.gpg), GPGProgram: os.Getenv(envGPG),
		KeyFile: key, KeyEnv: envSigningKey,
		LocalUsers:     c.StringSlice("local-user"),
		PassphraseFile: passFile, PassphraseEnv: envPassphrase,
		Prompt: promptPassphrase, Now: now,
	}
	if key == "-" {
		opts.KeyFile, opts.Key, opts.KeyName = "", c.App.Reader, "standard input"
	}
	signers, err := signing.LoadSigners(opts)
	var fe *signing.FileError
	switch {
	case err == nil:
	case errors.Is(err, signing.ErrSignerOptions):
		// The library refuses two ways to sign at once; the command says
		// it with its flags, as the usage error it is.
		return nil, nil, usageError{errors.New(strings.NewReplacer(
			"SignerOptions.KeyFile", "--"+n.key, "SignerOptions.Key", "--"+n.key,
			"SignerOptions.GPG", "--"+n.gpg, "SignerOptions.PassphraseFile", "--passphrase-file",
		).Replace(err.Error()))}
	case errors.As(err, &fe):
		flag := map[string]string{"KeyFile": "--" + n.key, "PassphraseFile": "--passphrase-file"}[fe.Option]
		return nil, nil, flagFileError(flag, &fs.PathError{Op: "open", Path: fe.File, Err: fe.Err})
	case errors.Is(err, signing.ErrNoKey) && !n.given(c):
		return nil, nil, withHint(signing.ErrNoKey, fmt.Sprintf("pass a secret key with --%s FILE (or --%s - for standard input) or $%s, or sign through gpg with --%s", n.key, n.key, envSigningKey, n.gpg))
	default:
		return nil, nil, err
	}
	if opts.GPG {
		return signers, nil, nil
	}
	return signers, []string{key, passFile}, nil
}

// promptPassphrase asks for key's passphrase on the terminal, and only
// there: with no terminal it asks nothing (nil, nil).
func promptPassphrase(key *openpgp.Entity) ([]byte, error) {
	tty, err := openTerminal()
	if err != nil {
		return nil, nil
	}
	defer tty.Close()
	return readPassphrase(tty, int(tty.Fd()), key)
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
