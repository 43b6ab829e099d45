package main

import (
	"context"
	"errors"
	"fmt"

	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/remote"
	"github.com/cloud-assembly/assemble/signing"
	"github.com/cloud-assembly/assemble/trust"
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

SIGNATURES: signature.asc may hold several signatures over one attestation
(co-signers: 'assemble sign --add'). Every one is reported: its key, time,
and whether it is valid and trusted. A signature by a key outside --keyring
is reported and does not count (--untrusted-keyring names its signer); one
by a trusted key must be valid, by a key that was unexpired at its own time
and at the attestation's timestamp, and is not revoked, or verify fails. A
signature may come any time after the attestation (never before it, less 5
minutes of clock skew). --min-signers N needs valid signatures by N
distinct trusted keys (default 1); --require-signer FPR needs one by that
key. --keyring takes a folder too: every file in it is read as keys.

POLICY FILE (--policy FILE; a flag given replaces the same setting), a
section per package that reads it (trust, provenance, deploy; the trust
and deploy keys given at the top level, the older form, still work):
   trust:
     keyrings: [release-keys/]        # trusted keys, files or folders,
     untrusted-keyrings: [team.asc]   #   relative to the policy file
     min-signers: 2
     require-signers:
       - 0123456789ABCDEF0123456789ABCDEF01234567
     algorithms: [SHA256, SHA512]     # attestation and signature hashes allowed
   deploy:                            # see 'assemble deploy --help'
     capabilities: [IAM]

PROVENANCE: a policy file's provenance section is what the assembly's
provenance.intoto.json (which build writes) must say; with one, every
command that verifies applies it, and a refusal names its rule (in --json:
"provenance": {"rule": ...}):
   provenance:
     predicate-type: https://slsa.dev/provenance/v1     # the default
     builders: ['https://github.com/acme/*/.github/workflows/release.yml@refs/tags/*']
     repositories: ['https://github.com/acme/*']        # the source's repository
     refs: ['refs/tags/v*']                             # and ref
     max-age: 30d                                        # finishedOn (or startedOn) at most this old
     bundle-keys: [provenance.pub]                       # PEM keys that may sign --bundle files
Patterns are path.Match globs ("*" within one "/" segment). --bundle FILE
checks a bundle of 'assemble attest --provenance' (or cosign) about the
file: signed by a bundle key, naming the file's SHA-256. --vsa FILE writes
a SLSA verification summary (https://slsa.dev/verification_summary/v1) of
what was checked and the verdict, also when a provenance rule refuses.

Unsigned assemblies fail unless --allow-unsigned is given, which checks the
structure and manifest only and warns that nothing was authenticated.

ASSEMBLY is a file or a location, read in byte ranges with nothing written
to disk: oci://REGISTRY/REPOSITORY[:TAG|@sha256:DIGEST], s3://BUCKET/KEY,
https://HOST/PATH (every command that reads an assembly takes one).

EXIT CODES:
   0  the assembly is valid and signed by a trusted key
   1  invalid, tampered, unsigned, or signed by an untrusted, expired or revoked key
   2  usage error

Examples:
   assemble verify --keyring release.pub.asc app.cloud
   assemble verify --keyring release-keys/ --min-signers 2 app.cloud
   assemble verify --policy release-policy.yaml app.cloud

` + findingsHelp(),
		Flags: append(trustFlags(),
			&cli.BoolFlag{Name: "allow-unsigned", Usage: "accept an unsigned assembly after checking structure and manifest (authenticates nothing)"},
			&cli.StringSliceFlag{Name: "bundle", Usage: "a provenance bundle `FILE` about the assembly (attest --provenance, cosign): it must be signed by one of the policy's provenance bundle-keys (repeatable)"},
			&cli.StringFlag{Name: "vsa", Usage: "write a SLSA verification summary (in-toto, https://slsa.dev/verification_summary/v1) of what was checked and the verdict to `FILE`"},
			digestFlag, timeoutFlag(),
			jsonFlag,
			strictFlag,
			quietFlag,
			progressFlag,
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("verify takes one ASSEMBLY argument, got %d", c.NArg())
			}
			name := c.Args().First()
			res, err := verifyAssembly(c, name, c.Bool("allow-unsigned"))
			defer res.close()
			if vsa := c.String("vsa"); vsa != "" {
				if werr := writeVSA(c, vsa, name, res, err); werr != nil {
					return werr
				}
			}
			if err != nil {
				return withResult(err, res.failure())
			}
			if c.Bool("json") {
				return printJSON(c, res.Verdict)
			}
			printVerified(c, res.File, res.Verdict)
			return nil
		},
	}
}

// verifyResult is an assembly verifyAssembly verified, or failed to: the
// verdict (trust.Verdict, verify's --json), the verified handle, and what
// the verification learnt, also when it failed.
type verifyResult struct {
	*trust.Verdict

	assembly *trust.Assembly    // the verified handle, when it verified
	checked  *trust.Result      // what the verification learnt, also when a rule refused (--vsa)
	fail     *trust.VerifyError // the failure, as --json reports it beside the error
	close    func()             // closes the handle and ends its context
}

// failure is what a failed verify reports beside its error
// (verify.json#/$defs/failure).
func (r *verifyResult) failure() *trust.VerifyError { return r.fail }

// policyFile is the policy file the assembly was verified with (nil when
// none): its deploy section.
func (r *verifyResult) policyFile() *trust.PolicyFile {
	if r == nil || r.assembly == nil || r.assembly.Trust() == nil {
		return nil
	}
	return r.assembly.Trust().PolicyFile
}

// signerResult names a signing key, as every command reports one.
type signerResult = trust.Signer

// verifyAssembly opens the assembly (a file or a location) and verifies
// it: trust.Open, with the options the flags give. It prints the check's
// findings and the warnings of an assembly that is not authenticated.
// The caller calls res.close, after an error too.
func verifyAssembly(c *cli.Context, name string, allowUnsigned bool) (res *verifyResult, err error) {
	shownName := shown(name)
	res = &verifyResult{Verdict: &trust.Verdict{File: shownName}, fail: &trust.VerifyError{Name: shownName}, close: func() {}}
	want, err := digestOption(c)
	if err != nil {
		return res, err
	}
	var tr *trust.Trust
	if trustGiven(c) {
		// A mistake in the trust flags or the policy file is reported
		// whatever the assembly holds: a --keyring typo is not ignored
		// because the assembly turns out unsigned (--allow-unsigned).
		if tr, err = loadTrust(c); err != nil {
			return res, err
		}
	}
	var bundles []trust.NamedBundle
	for _, b := range c.StringSlice("bundle") {
		data, err := limitio.ReadFile(b, 8<<20)
		if err != nil {
			return res, onFile("verify", b, err)
		}
		bundles = append(bundles, trust.NamedBundle{Name: b, Data: data})
	}
	ctx, cancel := c.Context, context.CancelFunc(func() {})
	if remote.IsLocation(name) {
		ctx, cancel = remoteContext(c)
	}
	prog := newProgress(c, "verifying "+shownName)
	a, err := trust.Open(ctx, name, tr, &trust.OpenOptions{InsecureAllowUnsigned: allowUnsigned, Check: checkOptions(c), Progress: prog.Func(), Digest: want,
		Provenance: wantsProvenance(c), Bundles: bundles})
	prog.Done()
	if err != nil {
		cancel()
		var ve *trust.VerifyError
		if !errors.As(err, &ve) {
			return res, err
		}
		res.fail, res.Verdict, res.checked = ve, ve.Verdict(), ve.Result
		return res, verifyError(c, ve)
	}
	res.close = func() {
		a.Close()
		cancel()
	}
	res.assembly, res.checked, res.Verdict = a, a.Result(), a.Verdict()
	showFindings(c, shownName, a.Report())
	if !res.Authenticated {
		warnf(c, "%s is unsigned: its structure and manifest are valid, but nothing was authenticated", shownName)
		return res, nil
	}
	for _, w := range res.Warnings {
		if w.Rule == trust.RuleZoneless {
			warnf(c, "%s: %s", shownName, w.Message)
		}
	}
	return res, nil
}

// verifyError is the failure of trust.Open as the commands say it: about
// the file it names, after the check's findings and (without --json) each
// signature and the policy when there is more than one to tell apart.
func verifyError(c *cli.Context, ve *trust.VerifyError) error {
	r, v := ve.Result, ve.Verdict()
	if r == nil || r.Reader == nil {
		return openError("", ve)
	}
	showFindings(c, ve.Name, r.Report)
	if errors.Is(ve.Err, trust.ErrNoKeyring) {
		return trustError(c, ve.Err)
	}
	if p := v.Policy; p != nil && !c.Bool("json") && (len(v.Signatures) > 1 || len(p.Required) > 0 || p.MinSigners > 1) {
		for _, l := range signatureLines(v) {
			fmt.Fprintf(c.App.ErrWriter, "assemble: %s\n", l)
		}
	}
	return onFile("verify", ve.Name, ve.Err)
}

func printVerified(c *cli.Context, name string, res *trust.Verdict) {
	what := fmt.Sprintf("%s (%s, %s)", plural.Count(res.Files, "file"), plural.Count(int(res.Bytes), "byte"), plural.Count(res.Droplets, "droplet"))
	if !res.Signed {
		printf(c, c.App.Writer, "checked %s in %s: UNSIGNED, not authenticated\n%s\n", what, name, res.SHA256)
		return
	}
	printf(c, c.App.Writer, "verified %s in %s\nsigned by %q (%s) at %s\n%s\n", what, name, res.Signer.UserID, res.Signer.Fingerprint, res.Timestamp, res.SHA256)
	trustedAll := true
	for _, s := range res.Signatures {
		trustedAll = trustedAll && s.Trusted
	}
	if len(res.Signatures) > 1 || !trustedAll || len(res.Policy.Required) > 0 || res.Policy.MinSigners > 1 {
		for _, l := range signatureLines(res) {
			printf(c, c.App.Writer, "%s\n", l)
		}
	}
}

// signatureLines reports each signature and the policy, one line each:
//
//	signature 1 of 2: good, trusted: "A <a@example.com>" (FPR) at T
//	signature 2 of 2: not counted: key ID X (fingerprint Y) at T: not a trusted key
//	policy: 1 trusted signer of at least 2 needed: not met
func signatureLines(res *trust.Verdict) []string {
	var out []string
	for i, s := range res.Signatures {
		who := describeSignature(signing.Signature{KeyID: s.KeyID, IssuerFingerprint: s.IssuerFingerprint, Fingerprint: s.Fingerprint, UserID: s.UserID})
		if s.SigningKey != "" && s.SigningKey != s.Fingerprint {
			who += " with subkey " + s.SigningKey
		}
		var state string
		switch {
		case s.Trusted:
			state = "good, trusted"
		case s.Known && s.Valid:
			state = "good but not counted, a known key that is not trusted"
		case s.Valid:
			state = "valid but not counted"
		case s.Fingerprint == "":
			state = "not counted, a key that is not trusted"
		default:
			state = "BAD"
		}
		line := fmt.Sprintf("signature %d of %d: %s: %s at %s", i+1, len(res.Signatures), state, who, s.Time)
		if !s.Trusted && s.Fingerprint != "" && !s.Known && s.Error != "" {
			line += ": " + s.Error
		}
		out = append(out, line)
	}
	if p := res.Policy; p != nil {
		line := fmt.Sprintf("policy: %s of at least %d needed", plural.Count(len(p.Signers), "trusted signer"), p.MinSigners)
		if len(p.Required) > 0 {
			line += fmt.Sprintf(", required %s", strings.Join(p.Required, ", "))
			if len(p.Missing) > 0 {
				line += fmt.Sprintf(" (missing %s)", strings.Join(p.Missing, ", "))
			}
		}
		if p.Met {
			line += ": met"
		} else {
			line += ": not met"
		}
		out = append(out, line)
	}
	return out
}

// fileCount is the number of an assembly's files but signature.asc: what
// verify authenticates, and what every command counts as its files.
func fileCount(r *assembly.Reader) int {
	if r.Signed() {
		return len(r.Files()) - 1
	}
	return len(r.Files())
}

// wantsProvenance reports whether the command reports or signs the
// provenance verdict even without a provenance policy (attest
// --provenance, verify --vsa).
func wantsProvenance(c *cli.Context) bool {
	return c.Bool("provenance") || c.String("vsa") != ""
}
