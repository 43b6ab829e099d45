package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/signing"
)

// Environment variables for CI: an armored secret key, and its passphrase.
const (
	envSigningKey = "ASSEMBLE_SIGNING_KEY"
	envPassphrase = "ASSEMBLE_PASSPHRASE"
)

func signCmd() *cli.Command {
	return &cli.Command{
		Name:      "sign",
		Usage:     "seal an assembly with a cleartext OpenPGP signature (signature.asc)",
		ArgsUsage: "ASSEMBLY",
		Description: `Hashes every file of the assembly (salted with a fresh nonce), writes the
attestation as JSON, clear-signs it with the key and stores it as
signature.asc, replacing any earlier one. Every other entry keeps its exact
bytes. The assembly is rewritten in place (or to --output; - for standard
output) through a temporary file, so a failed sign leaves it untouched; a
symbolic link is followed (its target is signed) and kept. Another assemble
writing the same file is waited for, and an assembly changed by another
program while it is signed fails the sign. An assembly that the check every
command runs finds invalid is not signed (see FINDINGS in 'assemble verify
--help'); its warnings are shown.

The key is an armored or binary OpenPGP secret key (RSA or Ed25519; a
primary key or a signing-subkey-only export): --key FILE, --key - for
standard input, or the armored key in $ASSEMBLE_SIGNING_KEY. Without a key
nothing is signed. A passphrase comes from --passphrase-file or
$ASSEMBLE_PASSPHRASE, never from the command line. When neither gives one and
the key needs it, assemble asks for it on the terminal (/dev/tty, echo off;
standard input may carry the key), but only when standard input or standard
error is a terminal: in CI and scripts it fails at once instead. Expired and
revoked keys are refused.

Example:
   assemble sign --key release.asc --passphrase-file pass.txt app.cloud`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "key", Aliases: []string{"k"}, Usage: "secret key `FILE` (- for standard input; default $" + envSigningKey + ")"},
			&cli.StringFlag{Name: "passphrase-file", Usage: "read the key's passphrase from `FILE` (default $" + envPassphrase + ")"},
			&cli.StringFlag{Name: "algorithm", Value: "SHA256", Usage: "hash `ALGORITHM`: SHA256, SHA384 or SHA512"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the signed assembly to `FILE` instead of in place (- for standard output)"},
			jsonFlag,
			quietFlag,
			progressFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("sign takes one ASSEMBLY argument, got %d", c.NArg())
			}
			in := c.Args().First()
			if c.String("output") == "-" && c.Bool("json") {
				return withHint(usagef("--json and -o - both write to standard output"), "write the signed assembly to a file with -o FILE, or in place")
			}
			alg, err := signing.ParseAlgorithm(c.String("algorithm"))
			if err != nil {
				return usagef("--algorithm %q: use SHA256, SHA384 or SHA512", c.String("algorithm"))
			}
			keys, keyName, err := loadSigningKeys(c)
			if err != nil {
				return err
			}
			pass, err := loadPassphrase(c)
			if err != nil {
				return err
			}
			now := time.Now()
			signer, err := signing.SelectSigner(keys, pass, now)
			if errors.Is(err, signing.ErrPassphraseNeeded) && len(pass) == 0 && c.String("passphrase-file") == "" {
				// Neither --passphrase-file nor the environment gave one: ask at a
				// terminal, and only there; retry once.
				if tty, terr := openTerminal(); terr == nil {
					p, perr := readPassphrase(tty, int(tty.Fd()), needsPassphrase(keys, now))
					tty.Close()
					if perr != nil {
						return fmt.Errorf("%s: reading the passphrase from the terminal: %w", keyName, perr)
					}
					signer, err = signing.SelectSigner(keys, p, now)
				}
			}
			switch {
			case errors.Is(err, signing.ErrPassphraseNeeded):
				return withHint(fmt.Errorf("%s: %w", keyName, err), passphraseHint)
			case errors.Is(err, signing.ErrWrongPassphrase):
				return withHint(fmt.Errorf("%s: %w", keyName, err), "check the passphrase file, $"+envPassphrase+" or what was typed at the prompt")
			case errors.Is(err, signing.ErrSignerExpired), errors.Is(err, signing.ErrSignerRevoked):
				return withHint(fmt.Errorf("%s: %w", keyName, err), "sign with a valid key; extend an expired key with gpg --quick-set-expire")
			case err != nil:
				return fmt.Errorf("%s: %w", keyName, err)
			}
			out := c.String("output")
			if out == "" {
				out = in
			}
			// The output is locked before the assembly is read: a second
			// sign or a build of the same file waits for this one.
			dst, err := createOutput(c, out, []string{c.String("key"), c.String("passphrase-file")}, false)
			if err != nil {
				return onFile("sign", in, err)
			}
			defer dst.Close()
			warn := func(f assembly.Finding) { warnf(c, "%s: %s", in, f) }
			prog := newProgress(c, "signing "+in)
			dw := newDigestWriter(dst)
			defer dw.close()
			a, err := signing.SignFileTo(c.Context, in, dw, signer, &signing.SignOptions{Algorithm: alg, Now: func() time.Time { return now }, Warn: warn, Progress: prog.Func()})
			prog.Done()
			var sum string
			if err == nil {
				sum, err = dw.Sum()
			}
			if err == nil {
				err = dst.Commit()
			}
			if err != nil {
				return signError(in, err)
			}
			res := signResult{File: in, Output: out, SHA256: sum, Size: dw.n, Files: len(a.Items),
				Algorithm: signing.AlgorithmName(a.Algorithm), Timestamp: a.Timestamp.UTC().Format(time.RFC3339), Signer: newSignerResult(signer, now)}
			for _, it := range a.Items {
				res.Bytes += it.Size
			}
			if c.Bool("json") {
				return printJSON(c, res)
			}
			w := summaryWriter(c, dst)
			printf(c, w, "signed %s: %s (%s) by %q (%s)\n", out, count(res.Files, "file"), count(int(res.Bytes), "byte"), res.Signer.UserID, res.Signer.Fingerprint)
			printf(c, w, "sha256: %s\n", res.SHA256)
			return nil
		},
	}
}

// signResult is what sign reports, in text or as JSON.
type signResult struct {
	File      string        `json:"file"`
	Output    string        `json:"output"`
	SHA256    string        `json:"sha256"`
	Size      int64         `json:"size"`
	Files     int           `json:"files"`
	Bytes     int64         `json:"bytes"`
	Algorithm string        `json:"algorithm"`
	Timestamp string        `json:"timestamp"`
	Signer    *signerResult `json:"signer"`
}

// newSignerResult describes the key that signs at now.
func newSignerResult(e *openpgp.Entity, now time.Time) *signerResult {
	fp := fmt.Sprintf("%X", e.PrimaryKey.Fingerprint)
	res := &signerResult{Fingerprint: fp, SigningKey: fp, UserID: signing.UserID(e)}
	if k, ok := e.SigningKey(now); ok {
		res.SigningKey = fmt.Sprintf("%X", k.PublicKey.Fingerprint)
	}
	return res
}

// signError adds context and the hint for a failed sign.
func signError(in string, err error) error {
	err = onFile("sign", in, err)
	var ce *assembly.CheckError
	switch {
	case errors.As(err, &ce):
		return withHint(err, "nothing was signed and the file is unchanged: fix the assembly and build it again ('assemble inspect' lists every finding)")
	case errors.Is(err, signing.ErrInputChanged):
		return withHint(err, "another program wrote the assembly meanwhile; sign it again once it is done")
	case errors.Is(err, fs.ErrNotExist):
		return withHint(err, "check the assembly's path; make one with 'assemble build'")
	}
	return err
}

// passphraseHint is the hint when a protected key gets no passphrase.
const passphraseHint = "pass the passphrase with --passphrase-file FILE or $" + envPassphrase + "; assemble prompts for it only at a terminal"

// errNoTerminal: there is no terminal to prompt on.
var errNoTerminal = errors.New("no terminal")

// openTerminal opens the controlling terminal for a passphrase prompt. It
// fails (and nothing is prompted) unless /dev/tty opens as a terminal and
// standard input or standard error is one too, so scripts, CI and tests,
// which have neither, fail at once rather than wait on a prompt.
func openTerminal() (*os.File, error) {
	if !term.IsTerminal(int(os.Stdin.Fd())) && !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil, errNoTerminal
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoTerminal, err)
	}
	if !term.IsTerminal(int(tty.Fd())) {
		tty.Close()
		return nil, errNoTerminal
	}
	return tty, nil
}

// readPassphrase writes a prompt naming key e to tty and reads one line
// from the terminal fd with echo off. An empty answer is an error.
func readPassphrase(tty io.Writer, fd int, e *openpgp.Entity) ([]byte, error) {
	fmt.Fprint(tty, passphrasePrompt(e))
	p, err := term.ReadPassword(fd)
	fmt.Fprintln(tty) // the user's Enter was not echoed
	if err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nil, errors.New("empty passphrase")
	}
	return p, nil
}

// passphrasePrompt is the prompt for key e's passphrase, e.g.
// `passphrase for "Test Signer <x@y>" (ABCD1234...): `.
func passphrasePrompt(e *openpgp.Entity) string {
	if e == nil {
		return "passphrase: "
	}
	fp := fmt.Sprintf("%X", e.PrimaryKey.Fingerprint)
	if id := signing.UserID(e); id != "" {
		return fmt.Sprintf("passphrase for %q (%s): ", id, fp)
	}
	return fmt.Sprintf("passphrase for key %s: ", fp)
}

// needsPassphrase returns the key SelectSigner would use and that needs a
// passphrase, or nil.
func needsPassphrase(keys openpgp.EntityList, now time.Time) *openpgp.Entity {
	for _, e := range keys {
		_, err := signing.SelectSigner(openpgp.EntityList{e}, nil, now)
		if errors.Is(err, signing.ErrPassphraseNeeded) {
			return e
		}
		if err == nil {
			return nil
		}
	}
	return nil
}

// loadSigningKeys reads the secret key from --key FILE, --key - (stdin) or
// $ASSEMBLE_SIGNING_KEY. It returns the keys and a name for messages.
func loadSigningKeys(c *cli.Context) (openpgp.EntityList, string, error) {
	var r io.Reader
	name := c.String("key")
	switch {
	case name == "-":
		r, name = c.App.Reader, "standard input"
	case name != "":
		f, err := os.Open(name)
		if err != nil {
			return nil, "", flagFileError("--key", err)
		}
		defer f.Close()
		r = f
	case os.Getenv(envSigningKey) != "":
		r, name = strings.NewReader(os.Getenv(envSigningKey)), "$"+envSigningKey
	default:
		return nil, "", withHint(signing.ErrNoKey, "pass a secret key with --key FILE (or --key - for standard input) or $"+envSigningKey)
	}
	keys, err := signing.ReadKeys(r)
	if err != nil {
		return nil, "", withHint(fmt.Errorf("%s: %w", name, err), "give an OpenPGP secret key, as `gpg --export-secret-keys --armor KEYID` writes")
	}
	return keys, name, nil
}

// loadPassphrase reads --passphrase-file (its first line) or $ASSEMBLE_PASSPHRASE.
func loadPassphrase(c *cli.Context) ([]byte, error) {
	if p := c.String("passphrase-file"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, flagFileError("--passphrase-file", err)
		}
		line, _, _ := bytes.Cut(b, []byte("\n"))
		return bytes.TrimSuffix(line, []byte("\r")), nil
	}
	return []byte(os.Getenv(envPassphrase)), nil
}

// flagFileError names the flag whose file could not be read:
// "--key release.asc: no such file or directory".
func flagFileError(flag string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return onFile(flag, pe.Path, pe.Err)
	}
	return fmt.Errorf("%s: %w", flag, err)
}
