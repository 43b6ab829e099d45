package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/trust"
)

// trustFlags say whom verify and extract trust and which signatures they
// require.
func trustFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "keyring", Usage: "trusted public keys: a key `FILE`, or a folder whose every file is one (repeatable)"},
		&cli.StringSliceFlag{Name: "untrusted-keyring", Usage: "public keys `FILE` or folder that only name signers; never trusted (repeatable)"},
		&cli.StringFlag{Name: "policy", Usage: "read keyrings, required signers, minimum signers and allowed algorithms from the YAML `FILE`; flags override it"},
		&cli.IntFlag{Name: "min-signers", Value: 1, Usage: "require valid signatures by at least `N` distinct trusted keys"},
		&cli.StringSliceFlag{Name: "require-signer", Usage: "require a valid signature by the trusted key with this primary `FINGERPRINT` (repeatable)"},
		&cli.StringSliceFlag{Name: "allow-algorithm", Usage: "allow only these hash `ALGORITHM`s (SHA256, SHA384, SHA512) for the attestation and the signatures (repeatable)"},
		verboseFlag,
	}
}

// trustGiven reports whether any trust flag (or --policy) is given.
func trustGiven(c *cli.Context) bool {
	for _, f := range trustFlags() {
		if c.IsSet(f.Names()[0]) {
			return true
		}
	}
	return false
}

// trustOptions translates the trust flags: a flag given replaces what the
// policy file says. trust.Load checks them.
func trustOptions(c *cli.Context) trust.Options {
	o := trust.Options{PolicyFile: c.String("policy")}
	if c.IsSet("keyring") {
		o.Keyrings = nonNil(c.StringSlice("keyring"))
	}
	if c.IsSet("untrusted-keyring") {
		o.UntrustedKeyrings = nonNil(c.StringSlice("untrusted-keyring"))
	}
	if c.IsSet("require-signer") {
		o.RequireSigners = nonNil(c.StringSlice("require-signer"))
	}
	if c.IsSet("allow-algorithm") {
		o.Algorithms = nonNil(c.StringSlice("allow-algorithm"))
	}
	if c.IsSet("min-signers") {
		n := c.Int("min-signers")
		o.MinSigners = &n
	}
	return o
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// loadTrust reads --policy, the trust flags and the keyrings (trust.Load).
func loadTrust(c *cli.Context) (*trust.Trust, error) {
	t, err := trust.Load(trustOptions(c))
	if err == nil {
		verboseTrust(c, t)
	}
	return t, trustError(c, err)
}

// verboseTrust says, with --verbose, which policy and key files were read
// and which keys they gave: the keys tried for every signature.
func verboseTrust(c *cli.Context, t *trust.Trust) {
	if o := c.String("policy"); o != "" {
		verbosef(c, "read policy %s", o)
	}
	for _, f := range t.Files {
		verbosef(c, "read keyring %s", f)
	}
	for _, e := range t.Trusted {
		verbosef(c, "trusted key %X %s", e.PrimaryKey.Fingerprint, primaryUserID(e))
	}
	for _, e := range t.Known {
		verbosef(c, "known key (names a signer, not trusted) %X %s", e.PrimaryKey.Fingerprint, primaryUserID(e))
	}
}

// primaryUserID is the key's primary user ID, quoted, or "".
func primaryUserID(e *openpgp.Entity) string {
	if id := e.PrimaryIdentity(); id != nil {
		return fmt.Sprintf("%q", id.Name)
	}
	return ""
}

// trustFlagNames are the trust flags by the trust.Options field (or
// ReadKeyrings option) each sets: the library names the field, the
// command line the flag.
var trustFlagNames = map[string]string{
	"Keyrings": "--keyring", "UntrustedKeyrings": "--untrusted-keyring", "PolicyFile": "--policy",
	"MinSigners": "--min-signers", "RequireSigners": "--require-signer", "Algorithms": "--allow-algorithm",
}

// trustError translates the trust package's errors: a mistake in the
// options is a usage error (exit code 2) that names the flag, and "no
// trusted keyring" says which flags give one.
func trustError(c *cli.Context, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, trust.ErrNoKeyring) {
		or := "a --policy FILE naming keyrings"
		if hasFlag(c, "allow-unsigned") {
			or += ", or --allow-unsigned"
		}
		err = reworded(err, fmt.Sprintf("%s needs at least one --keyring FILE of trusted public keys (or %s)", c.Command.Name, or))
	}
	err = flagNamed(err, trustFlagNames)
	if errors.Is(err, trust.ErrOption) {
		return usageError{err}
	}
	return err
}

// hasFlag reports whether the command has the flag name.
func hasFlag(c *cli.Context, name string) bool {
	for _, f := range c.Command.Flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}
