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
)

func signCmd() *cli.Command {
	return &cli.Command{
		Name:      "sign",
		Usage:     "seal an assembly with a cleartext OpenPGP signature (signature.asc)",
		ArgsUsage: "ASSEMBLY",
		Description: `Hashes every file of the assembly (salted with a fresh nonce), writes the
attestation as JSON, clear-signs it with the key and stores it as
signature.asc, replacing any earlier one. Every other entry keeps its exact
bytes. The assembly is rewritten in place (or to --output) through a
temporary file, so a failed sign leaves it untouched.

The key is an armored or binary OpenPGP secret key (RSA or Ed25519; a
primary key or a signing-subkey-only export): --key FILE, --key - for
standard input, or the armored key in $ASSEMBLE_SIGNING_KEY. Without a key
nothing is signed. A passphrase comes from --passphrase-file or
$ASSEMBLE_PASSPHRASE, never from the command line, and is never prompted for.
Expired and revoked keys are refused.

Example:
   assemble sign --key release.asc --passphrase-file pass.txt app.cloud`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "key", Aliases: []string{"k"}, Usage: "secret key `FILE` (- for standard input; default $" + envSigningKey + ")"},
			&cli.StringFlag{Name: "passphrase-file", Usage: "read the key's passphrase from `FILE` (default $" + envPassphrase + ")"},
			&cli.StringFlag{Name: "algorithm", Value: "SHA256", Usage: "hash `ALGORITHM`: SHA256, SHA384 or SHA512"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the signed assembly to `FILE` instead of in place"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("sign takes one ASSEMBLY argument, got %d", c.NArg())
			}
			in := c.Args().First()
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
			switch {
			case errors.Is(err, signing.ErrPassphraseNeeded):
				return withHint(fmt.Errorf("%s: %w", keyName, err), "pass the passphrase with --passphrase-file FILE or $"+envPassphrase+"; assemble never prompts")
			case errors.Is(err, signing.ErrWrongPassphrase):
				return withHint(fmt.Errorf("%s: %w", keyName, err), "check the passphrase file or $"+envPassphrase)
			case errors.Is(err, signing.ErrSignerExpired), errors.Is(err, signing.ErrSignerRevoked):
				return withHint(fmt.Errorf("%s: %w", keyName, err), "sign with a valid key; extend an expired key with gpg --quick-set-expire")
			case err != nil:
				return fmt.Errorf("%s: %w", keyName, err)
			}
			out := c.String("output")
			if out == "" {
				out = in
			}
			a, err := signing.SignFile(c.Context, in, out, signer, &signing.SignOptions{Algorithm: alg, Now: func() time.Time { return now }})
			if err != nil {
				return fmt.Errorf("sign %s: %w", in, err)
			}
			var total int64
			for _, it := range a.Items {
				total += it.Size
			}
			fmt.Fprintf(c.App.Writer, "signed %s: %d files (%d bytes) by %q (%X)\n", out, len(a.Items), total, signing.UserID(signer), signer.PrimaryKey.Fingerprint)
			return nil
		},
	}
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
			return nil, "", err
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
			return nil, err
		}
		line, _, _ := bytes.Cut(b, []byte("\n"))
		return bytes.TrimSuffix(line, []byte("\r")), nil
	}
	return []byte(os.Getenv(envPassphrase)), nil
}
