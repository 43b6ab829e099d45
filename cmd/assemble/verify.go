package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/signing"
)

func verifyCmd() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check an assembly's structure, signature and contents before use",
		ArgsUsage: "ASSEMBLY",
		Description: `Checks, in this order and before anything is loaded: the ZIP structure
from the raw bytes; that signature.asc is one cleartext-signed message made
by a trusted key (--keyring, repeatable; armored or binary keyrings) that was
not expired when it signed and is not revoked; the signed attestation; every
file's size and salted hash. Only then is manifest.json parsed and validated.

The assembly is then checked as every command checks it (the table below):
errors fail, warnings are shown, and --strict makes them errors.

Unsigned assemblies fail unless --allow-unsigned is given, which checks the
structure and manifest only and warns that nothing was authenticated.

EXIT CODES:
   0  the assembly is valid and signed by a trusted key
   1  invalid, tampered, unsigned, or signed by an untrusted, expired or revoked key
   2  usage error

Example:
   assemble verify --keyring release.pub.asc app.cloud

` + findingsHelp(),
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "keyring", Usage: "trusted public keys `FILE` (repeatable)"},
			&cli.BoolFlag{Name: "allow-unsigned", Usage: "accept an unsigned assembly after checking structure and manifest (authenticates nothing)"},
			jsonFlag,
			strictFlag,
			quietFlag,
			progressFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("verify takes one ASSEMBLY argument, got %d", c.NArg())
			}
			name := c.Args().First()
			res, err := verifyAssembly(c, name, c.Bool("allow-unsigned"))
			defer res.close()
			if err != nil {
				return withResult(err, res.failure())
			}
			if c.Bool("json") {
				return printJSON(c, res)
			}
			printVerified(c, name, res)
			return nil
		},
	}
}

// verifyResult is what verify reports, in text or as JSON
// (docs/json/verify.json). Signer is the trusted key that made the
// signature; Authenticated is true only when one did (an unsigned
// assembly passed with --allow-unsigned is valid, not authenticated).
type verifyResult struct {
	File          string           `json:"file"`
	SHA256        string           `json:"sha256"`
	Size          int64            `json:"size"`
	Valid         bool             `json:"valid"`
	Authenticated bool             `json:"authenticated"`
	Signed        bool             `json:"signed"`
	Signer        *signerResult    `json:"signer,omitempty"`
	Timestamp     string           `json:"timestamp,omitempty"`
	Algorithm     string           `json:"algorithm,omitempty"`
	Files         int              `json:"files"`
	Bytes         int64            `json:"bytes"`
	Droplets      int              `json:"droplets"`
	Warnings      []diagnosticJSON `json:"warnings"`

	reader   *assembly.Reader  // the assembly, open until close
	verified *signing.Verified // reads through reader; nil when unsigned
	close    func()            // stops the digest and closes the file
}

// verifyFailure is what a failed verify reports beside its error.
type verifyFailure struct {
	File          string `json:"file"`
	Valid         bool   `json:"valid"`
	Authenticated bool   `json:"authenticated"`
	Signed        bool   `json:"signed"`
}

func (r *verifyResult) failure() verifyFailure {
	return verifyFailure{File: r.File, Signed: r.Signed}
}

// A signerResult names a signing key: the primary key's fingerprint, the
// fingerprint of the key (or subkey) that made the signature, and the
// primary user ID.
type signerResult struct {
	Fingerprint string `json:"fingerprint"`
	SigningKey  string `json:"signingKey"`
	UserID      string `json:"userID"`
}

// verifyAssembly opens the assembly and runs the checks; the file's
// SHA-256 is taken meanwhile, from the same open file. The caller calls
// res.close when done with res.reader and res.verified.
func verifyAssembly(c *cli.Context, name string, allowUnsigned bool) (res *verifyResult, err error) {
	res = &verifyResult{File: name, Warnings: []diagnosticJSON{}, close: func() {}}
	f, r, size, err := openAssembly(name)
	if err != nil {
		return res, openError(name, err)
	}
	res.reader, res.Size = r, size
	ctx, cancel := context.WithCancel(c.Context)
	digest := startDigest(ctx, f, size)
	res.close = func() {
		cancel()
		digest()
		f.Close()
	}
	defer func() {
		if err == nil {
			res.SHA256, err = digest()
			err = onFile("verify", name, err)
		}
	}()
	if !r.Signed() {
		if !allowUnsigned {
			return res, withHint(onFile("verify", name, signing.ErrUnsigned),
				"sign it with 'assemble sign --key FILE', or pass --allow-unsigned to check only its structure and manifest")
		}
		rep, err := r.Check(checkOptions(c))
		showFindings(c, name, rep)
		if err != nil {
			return res, checkHint(onFile("verify", name, err), checkFailedHint)
		}
		warnf(c, "%s is unsigned: its structure and manifest are valid, but nothing was authenticated", name)
		res.Valid = true
		res.Droplets = len(rep.Manifest.Droplets)
		res.Warnings = diagnosticsJSON(rep.Warnings())
		res.Files = fileCount(r) // unsigned: every file
		for _, f := range r.Files() {
			res.Bytes += f.Size()
		}
		return res, nil
	}
	res.Signed = true
	trusted, err := loadKeyrings(c)
	if err != nil {
		return res, err
	}
	prog := newProgress(c, "verifying "+name)
	v, err := signing.VerifyContext(c.Context, r, trusted, &signing.VerifyOptions{Check: checkOptions(c), Progress: prog.Func()})
	prog.Done()
	if err != nil {
		return res, verifyHint(onFile("verify", name, err))
	}
	showFindings(c, name, v.Report())
	res.Warnings = diagnosticsJSON(v.Report().Warnings())
	res.Valid = true
	res.Authenticated = true
	res.verified = v
	res.Signer = &signerResult{Fingerprint: v.Fingerprint(), SigningKey: v.SigningKeyFingerprint(), UserID: v.UserID()}
	res.Timestamp = v.Time().UTC().Format(time.RFC3339)
	res.Algorithm = signing.AlgorithmName(v.Attestation().Algorithm)
	res.Files = len(v.Files())
	res.Bytes = v.Bytes()
	res.Droplets = len(v.Manifest().Droplets)
	return res, nil
}

// openAssembly opens the assembly file and reads its structure, as
// assembly.Open does, keeping the file for the digest.
func openAssembly(name string) (*os.File, *assembly.Reader, int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, 0, err
	}
	st, err := f.Stat()
	if err == nil {
		var r *assembly.Reader
		if r, err = assembly.NewReader(f, st.Size()); err == nil {
			return f, r, st.Size(), nil
		}
		err = onFile("", name, err)
	}
	f.Close()
	return nil, nil, 0, err
}

// loadKeyrings reads every --keyring file into one trusted key list.
func loadKeyrings(c *cli.Context) (openpgp.EntityList, error) {
	files := c.StringSlice("keyring")
	if len(files) == 0 {
		return nil, usagef("%s needs at least one --keyring FILE of trusted public keys", c.Command.Name)
	}
	var all openpgp.EntityList
	for _, p := range files {
		f, err := os.Open(p)
		if err != nil {
			return nil, flagFileError("--keyring", err)
		}
		keys, err := signing.ReadKeys(f)
		f.Close()
		if err != nil {
			return nil, withHint(onFile("--keyring", p, err), "export trusted keys with 'gpg --export --armor KEYID'")
		}
		all = append(all, keys...)
	}
	return all, nil
}

// verifyHint adds the hint for the failure's cause.
func verifyHint(err error) error {
	switch {
	case errors.Is(err, signing.ErrUnknownSigner):
		return withHint(err, "if you trust the signer, add their public key with --keyring FILE")
	case errors.Is(err, signing.ErrKeyExpired), errors.Is(err, signing.ErrKeyRevoked):
		return withHint(err, "the signer must sign again with a valid key")
	case errors.Is(err, assembly.ErrCorrupt):
		return withHint(err, "the archive is damaged (its data does not match its own ZIP headers); rebuild it and sign it again")
	case errors.Is(err, signing.ErrKeyNotYetValid):
		return withHint(err, "the signature is dated before the key existed: check the signer's clock, and sign again")
	case errors.Is(err, signing.ErrDigestMismatch), errors.Is(err, signing.ErrSizeMismatch),
		errors.Is(err, signing.ErrUnlisted), errors.Is(err, signing.ErrMissing), errors.Is(err, signing.ErrBadSignature):
		return withHint(err, "the archive changed after it was signed; rebuild it and sign it again")
	case errors.Is(err, signing.ErrWeakAlgorithm), errors.Is(err, signing.ErrWeakSignatureHash):
		return withHint(err, "sign again with 'assemble sign' (SHA256 or stronger)")
	case errors.Is(err, signing.ErrUnsignedContent), errors.Is(err, signing.ErrMalformedSignature):
		return withHint(err, "signature.asc must hold exactly one cleartext-signed message; sign again with 'assemble sign'")
	}
	return checkHint(err, checkFailedHint)
}

// checkFailedHint is the hint when the signature is fine but the assembly
// check fails.
const checkFailedHint = "the assembly is invalid: every command refuses it (see FINDINGS in 'assemble verify --help'); fix it and build it again"

func printVerified(c *cli.Context, name string, res *verifyResult) {
	what := fmt.Sprintf("%s (%s, %s)", count(res.Files, "file"), count(int(res.Bytes), "byte"), count(res.Droplets, "droplet"))
	if !res.Signed {
		printf(c, c.App.Writer, "checked %s in %s: UNSIGNED, not authenticated\nsha256: %s\n", what, name, res.SHA256)
		return
	}
	printf(c, c.App.Writer, "verified %s in %s\nsigned by %q (%s) at %s\nsha256: %s\n", what, name, res.Signer.UserID, res.Signer.Fingerprint, res.Timestamp, res.SHA256)
}

// fileCount is the number of an assembly's files but signature.asc: what
// verify authenticates, and what every command counts as its files.
func fileCount(r *assembly.Reader) int {
	if r.Signed() {
		return len(r.Files()) - 1
	}
	return len(r.Files())
}

// openError explains why an assembly could not be opened: a missing file
// is not a broken assembly.
func openError(name string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return withHint(err, "check the path; make an assembly with 'assemble build'")
	case errors.Is(err, assembly.ErrFormat):
		return withHint(err, "the file is not a valid Cloud Assembly; rebuild it with 'assemble build'")
	}
	return err
}
