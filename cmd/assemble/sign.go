package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/signing"
	"github.com/cloud-assembly/assemble/trust"
)

func signCmd() *cli.Command {
	return &cli.Command{
		Name:      "sign",
		Usage:     "seal an assembly with a cleartext OpenPGP signature (signature.asc)",
		ArgsUsage: "ASSEMBLY",
		Description: `Hashes every file of the assembly (salted with a fresh nonce), writes the
attestation as JSON, clear-signs it and stores it as signature.asc,
replacing any earlier one. Every other entry keeps its exact bytes. The
assembly is rewritten in place (or to --output; - for standard output)
through a temporary file, so a failed sign leaves it untouched; a symbolic
link is followed (its target is signed) and kept. Another assemble writing
the same file is waited for, and an assembly changed by another program
while it is signed fails the sign. An assembly that the check every
command runs finds invalid is not signed (see FINDINGS in 'assemble verify
--help'); its warnings are shown.

Three ways to sign:

  --key FILE   an armored or binary OpenPGP secret key (RSA or Ed25519; a
               primary key or a signing-subkey-only export): --key - for
               standard input, or the armored key in $ASSEMBLE_SIGNING_KEY.
               A file holding several secret keys needs --local-user.
  --gpg        the local gpg signs (gpg --clearsign, the attestation on its
               standard input): keys in gpg-agent, on a smartcard or a
               YubiKey; GNUPGHOME is honoured; --local-user picks the key.
  --signature FILE
               attach an attestation clear-signed elsewhere ('assemble
               attest', then gpg --clearsign or any OpenPGP tool): it must
               be exactly one cleartext-signed message whose attestation
               matches this assembly file for file, and with --keyring a
               signature must verify under those keys.

--add keeps the signatures already in signature.asc and adds new ones over
the same attestation (checked first against the archive), by any of the
three ways: a co-signature, as 'gpg --clearsign -u A -u B' writes them.
--local-user may be repeated to sign with several keys at once.
Without --add, signing an assembly already signed by other keys is refused,
naming the signers whose signatures would be dropped: co-sign with --add,
or re-sign with --replace, which drops them.

A passphrase comes from --passphrase-file or $ASSEMBLE_PASSPHRASE, never
from the command line. When neither gives one and the key needs it,
assemble asks for it on the terminal (/dev/tty, echo off; standard input
may carry the key), but only when standard input or standard error is a
terminal: in CI and scripts it fails at once instead. With --gpg, gpg-agent
asks (its pinentry) or has it cached. Expired and revoked keys are refused.

Examples:
   assemble sign --key release.asc --passphrase-file pass.txt app.cloud
   assemble sign --gpg --local-user release@example.com app.cloud
   assemble attest -o att.json app.cloud && gpg --clearsign att.json &&
     assemble sign --signature att.json.asc --keyring release.pub.asc app.cloud
   assemble sign --add --gpg -u second@example.com app.cloud`,
		Flags: append(signFlags.flags(),
			&cli.StringFlag{Name: "signature", Usage: "attach the clear-signed attestation in `FILE`, made by gpg --clearsign or another OpenPGP tool"},
			&cli.BoolFlag{Name: "add", Usage: "keep the existing signatures and add new ones over the same attestation (co-sign)"},
			&cli.BoolFlag{Name: "replace", Usage: "re-sign an assembly signed by other keys, dropping their signatures"},
			&cli.StringSliceFlag{Name: "keyring", Usage: "with --signature: a signature must verify under the public keys in `FILE` or folder (repeatable)"},
			&cli.StringFlag{Name: "algorithm", Value: "SHA256", Usage: "hash `ALGORITHM`: SHA256, SHA384 or SHA512"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the signed assembly to `FILE` instead of in place (- for standard output)"},
			jsonFlag,
			quietFlag,
			progressFlag,
		),
		Action: runSign,
	}
}

func runSign(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("sign takes one ASSEMBLY argument, got %d", c.NArg())
	}
	in := c.Args().First()
	if c.String("output") == "-" && c.Bool("json") {
		return withHint(usagef("--json and -o - both write to standard output"), "write the signed assembly to a file with -o FILE, or in place")
	}
	if err := refuseTerminal(c, c.String("output")); err != nil {
		return err
	}
	alg, err := signing.ParseAlgorithm(c.String("algorithm"))
	if err != nil {
		return algorithmError("--algorithm", err)
	}
	if c.IsSet("algorithm") && (c.Bool("add") || c.String("signature") != "") {
		return usagef("--algorithm chooses how a new attestation is hashed: --add and --signature sign an existing one, with its algorithm")
	}
	if c.Bool("add") && c.Bool("replace") {
		return usagef("--add keeps the existing signatures and --replace drops them: choose one")
	}
	now := time.Now()
	opts := &signing.SignOptions{Algorithm: alg, Now: func() time.Time { return now }, Add: c.Bool("add"), Replace: c.Bool("replace")}
	var inputs []string
	var signers []signing.Signer
	if sig := c.String("signature"); sig != "" {
		if c.String("key") != "" || c.Bool("gpg") {
			return usagef("--signature attaches a signature made elsewhere: it takes no --key or --gpg (sign twice with --add to add both)")
		}
		if opts.Signature, err = os.ReadFile(sig); err != nil {
			return flagFileError("--signature", err)
		}
		inputs = append(inputs, sig)
		if len(c.StringSlice("keyring")) > 0 {
			kr, files, err := trust.ReadKeyrings("--keyring", c.StringSlice("keyring"))
			if err != nil {
				return err
			}
			opts.Keyring = kr
			inputs = append(inputs, files...)
		}
	} else {
		if len(c.StringSlice("keyring")) > 0 {
			return usagef("--keyring checks a --signature FILE; to check a signed assembly, run 'assemble verify --keyring'")
		}
		var read []string
		if signers, read, err = signFlags.signers(c, now); err != nil {
			return err
		}
		inputs = append(inputs, read...)
	}
	out := c.String("output")
	switch out {
	case "":
		out = in // in place, atomically
	case "-":
		inputs = append(inputs, in) // standard output must not be the assembly read
	}
	// The output is locked before the assembly is read: a second sign or a
	// build of the same file waits for this one.
	dst, err := createOutput(c, out, inputs, false)
	if err != nil {
		return onFile("sign", in, err)
	}
	defer dst.Close()
	opts.Warn = func(f assembly.Finding) { warnf(c, "%s: %s", in, f) }
	prog := newProgress(c, "signing "+in)
	opts.Progress = prog.Func()
	s, err := signing.SealFileTo(c.Context, in, dst, signers, opts)
	prog.Done()
	if err == nil {
		err = dst.Commit()
	}
	if err != nil {
		return signError(in, err)
	}
	a := s.Attestation
	res := signResult{File: in, Output: out, SHA256: s.Digest, Size: s.Size, Files: len(a.Items),
		Algorithm: signing.AlgorithmName(a.Algorithm), Timestamp: a.Timestamp.UTC().Format(time.RFC3339), Signatures: len(s.Signatures)}
	for _, it := range a.Items {
		res.Bytes += it.Size
	}
	for _, n := range s.New() {
		res.Signers = append(res.Signers, newSignerResult(n))
	}
	if len(res.Signers) > 0 {
		res.Signer = res.Signers[0]
	}
	if c.Bool("json") {
		return printJSON(c, res)
	}
	what := fmt.Sprintf("%s (%s)", plural.Count(res.Files, "file"), plural.Count(int(res.Bytes), "byte"))
	w := summaryWriter(c, dst)
	switch {
	case opts.Add:
		printf(c, w, "co-signed %s: %s by %s; %s in all\n", out, what, describeSignatures(s.New()), plural.Count(len(s.Signatures), "signature"))
	case opts.Signature != nil:
		printf(c, w, "attached to %s: %s signed by %s\n", out, what, describeSignatures(s.New()))
	default:
		printf(c, w, "signed %s: %s by %s\n", out, what, describeSignatures(s.New()))
	}
	printf(c, w, "%s\n", res.SHA256)
	return nil
}

// signResult is what sign reports, in text or as JSON
// (docs/json/sign.json). Signer is the first new signature's key, Signers
// every new one's; Signatures counts them all (--add keeps the earlier).
type signResult struct {
	File       string          `json:"file"`
	Output     string          `json:"output"`
	SHA256     digest.Digest   `json:"sha256"`
	Size       int64           `json:"size"`
	Files      int             `json:"files"`
	Bytes      int64           `json:"bytes"`
	Algorithm  string          `json:"algorithm"`
	Timestamp  string          `json:"timestamp"`
	Signer     *signerResult   `json:"signer"`
	Signers    []*signerResult `json:"signers"`
	Signatures int             `json:"signatures"`
}

// newSignerResult names the key of a new signature; an external
// signature by a key no keyring holds has only the fingerprint it carries
// (or its key ID).
func newSignerResult(s signing.Signature) *signerResult {
	if s.Fingerprint != "" {
		return &signerResult{Fingerprint: s.Fingerprint, SigningKey: s.SigningKey, UserID: s.UserID}
	}
	fp := s.IssuerFingerprint
	return &signerResult{Fingerprint: fp, SigningKey: fp, KeyID: s.KeyID}
}

// signError adds context and the hint for a failed sign.
func signError(in string, err error) error { return sealError("sign", in, err) }

// sealError adds context to a failed sign, or to the signing part of
// verb (attest, build --sign-key); the hint is the cause's code's, but
// for attest --signed, which has no signature to write.
func sealError(verb, in string, err error) error {
	err = onFile(verb, in, err)
	if errors.Is(err, signing.ErrNotSigned) && verb == "attest" {
		return withHint(err, "--signed writes the attestation the assembly's signature.asc holds: sign it first, or run attest without --signed")
	}
	return err
}

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

// flagFileError names the flag whose file could not be read:
// "--key release.asc: no such file or directory".
func flagFileError(flag string, err error) error {
	if serr := secretFileError(flag, err); serr != nil {
		return serr
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return onFile(flag, pe.Path, pe.Err)
	}
	return fmt.Errorf("%s: %w", flag, err)
}
