package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/provenance"
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

POLICY FILE (--policy FILE; a flag given replaces the same setting):
   keyrings: [release-keys/]        # trusted keys, files or folders,
   untrusted-keyrings: [team.asc]   #   relative to the policy file
   min-signers: 2
   require-signers:
     - 0123456789ABCDEF0123456789ABCDEF01234567
   algorithms: [SHA256, SHA512]     # attestation and signature hashes allowed

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
				return printJSON(c, res)
			}
			printVerified(c, res.File, res)
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
	SHA256        digest.Digest    `json:"sha256"`
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
	// Signatures reports every signature of signature.asc (Signer is the
	// first trusted one), Policy how they met the policy.
	Signatures []signatureResult `json:"signatures,omitempty"`
	Policy     *policyResult     `json:"policy,omitempty"`
	// Provenance is how the provenance met the policy's provenance
	// section, when it has one.
	Provenance *provenanceResult `json:"provenance,omitempty"`

	reader   *assembly.Reader  // the assembly, open until close
	verified *signing.Verified // reads through reader; nil when unsigned
	trusted  *trust.Result     // what trust.Verify gave, when it succeeded
	checked  *trust.Result     // what it gave, also when a rule refused
	assembly *trust.Assembly   // the verified handle, when it succeeded
	trust    *trust.Trust      // the keys and policy it verified with (nil: none given)
	source   io.ReaderAt       // what it was read from (a *remote.Object for a location)
	close    func()            // stops the digest and closes the file
}

// verifyFailure is what a failed verify reports beside its error: with
// the signatures, when it got as far as reading them.
type verifyFailure struct {
	File          string            `json:"file"`
	Valid         bool              `json:"valid"`
	Authenticated bool              `json:"authenticated"`
	Signed        bool              `json:"signed"`
	Signatures    []signatureResult `json:"signatures,omitempty"`
	Policy        *policyResult     `json:"policy,omitempty"`
	Provenance    *provenanceResult `json:"provenance,omitempty"`
}

func (r *verifyResult) failure() verifyFailure {
	return verifyFailure{File: r.File, Signed: r.Signed, Signatures: r.Signatures, Policy: r.Policy, Provenance: r.Provenance}
}

// provenanceResult is the provenance verdict (provenance.Verdict): every
// rule checked, in order, and the one that failed ("" when none did).
type provenanceResult struct {
	Rule    string             `json:"rule,omitempty"`
	Met     bool               `json:"met"`
	Builder string             `json:"builder,omitempty"`
	Checks  []provenance.Check `json:"checks"`
}

func newProvenanceResult(v *provenance.Verdict) *provenanceResult {
	if v == nil {
		return nil
	}
	r := &provenanceResult{Met: v.Failed == nil, Checks: v.Checks}
	if v.Failed != nil {
		r.Rule = v.Failed.Rule
	}
	if v.Statement != nil {
		r.Builder = v.Statement.Predicate.RunDetails.Builder.ID
	}
	return r
}

// A signerResult names a signing key: the primary key's fingerprint, the
// fingerprint of the key (or subkey) that made the signature, and the
// primary user ID.
type signerResult struct {
	Fingerprint string `json:"fingerprint"`
	SigningKey  string `json:"signingKey"`
	UserID      string `json:"userID"`
	// KeyID is set only for a signature attached by sign --signature
	// whose key is unknown and names no fingerprint.
	KeyID string `json:"keyID,omitempty"`
}

// signatureResult is one signature, as verify reports it.
type signatureResult struct {
	KeyID             string `json:"keyID"`
	IssuerFingerprint string `json:"issuerFingerprint,omitempty"`
	Fingerprint       string `json:"fingerprint,omitempty"`
	SigningKey        string `json:"signingKey,omitempty"`
	UserID            string `json:"userID,omitempty"`
	Time              string `json:"time"`
	Hash              string `json:"hash"`
	Valid             bool   `json:"valid"`
	Trusted           bool   `json:"trusted"`
	Known             bool   `json:"known,omitempty"`
	Error             string `json:"error,omitempty"`
	// Code is Error's code, as the top-level error's (errcodes.go).
	Code string `json:"code,omitempty"`
}

// policyResult is how the signatures met the policy.
type policyResult struct {
	MinSigners int      `json:"minSigners"`
	Signers    []string `json:"signers"`
	Required   []string `json:"required"`
	Missing    []string `json:"missing"`
	Algorithms []string `json:"algorithms"`
	Met        bool     `json:"met"`
}

// setSignatures fills res with the signatures and the policy's result.
func (res *verifyResult) setSignatures(sigs []signing.Signature, pr signing.PolicyResult, pol signing.Policy) {
	res.Signatures = []signatureResult{}
	for _, s := range sigs {
		r := signatureResult{KeyID: s.KeyID, IssuerFingerprint: s.IssuerFingerprint, Fingerprint: s.Fingerprint, SigningKey: s.SigningKey,
			UserID: s.UserID, Time: s.Time.UTC().Format(time.RFC3339), Hash: signing.AlgorithmName(s.Hash), Valid: s.Valid, Trusted: s.Trusted, Known: s.Known}
		if s.Err != nil {
			r.Error, r.Code = s.Err.Error(), codeOf(s.Err)
		}
		res.Signatures = append(res.Signatures, r)
	}
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	res.Policy = &policyResult{MinSigners: pr.MinSigners, Signers: nonNil(pr.Signers), Required: nonNil(pr.Required), Missing: nonNil(pr.Missing),
		Algorithms: trust.AlgorithmNames(pol.Algorithms), Met: pr.Met}
}

// verifyAssembly opens the assembly and verifies it (trust.Verify, the
// one verify-and-open function), reporting what it found. The caller
// calls res.close when done with res.reader and res.verified.
func verifyAssembly(c *cli.Context, name string, allowUnsigned bool) (res *verifyResult, err error) {
	return verifySource(c, shown(name), allowUnsigned, func() (io.ReaderAt, int64, io.Closer, error) { return openSource(c, name) }, nil)
}

// verifySource is verifyAssembly of what open opens, name being how
// messages call it (pull opens the location its own way). With w, the
// assembly is written to w once verified (trust.VerifyTo: the verified
// bytes, checked again as they pass).
func verifySource(c *cli.Context, name string, allowUnsigned bool, open func() (io.ReaderAt, int64, io.Closer, error), w io.Writer) (res *verifyResult, err error) {
	res = &verifyResult{File: name, Warnings: []diagnosticJSON{}, close: func() {}}
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
	f, size, cl, err := open()
	if err != nil {
		return res, err
	}
	res.close = func() { cl.Close() }
	res.Size = size
	res.trust = tr
	res.source = f
	var bundles []trust.NamedBundle
	for _, b := range c.StringSlice("bundle") {
		data, err := limitio.ReadFile(b, 8<<20)
		if err != nil {
			return res, onFile("verify", b, err)
		}
		bundles = append(bundles, trust.NamedBundle{Name: b, Data: data})
	}
	prog := newProgress(c, "verifying "+name)
	a, err := trust.NewAssembly(c.Context, name, f, size, tr, &trust.OpenOptions{InsecureAllowUnsigned: allowUnsigned, Check: checkOptions(c), Progress: prog.Func(), Digest: want,
		Provenance: wantsProvenance(c), Bundles: bundles})
	prog.Done()
	v := &trust.Result{}
	var ve *trust.VerifyError
	switch {
	case err == nil:
		v = a.Result()
		if w != nil {
			// The verified bytes, checked again as they pass.
			if _, err := a.WriteTo(w); err != nil {
				return res, err
			}
		}
	case errors.As(err, &ve) && ve.Result != nil:
		v, err = ve.Result, ve.Err
	case errors.As(err, &ve):
		err = ve.Err
	}
	res.assembly = a
	res.reader, res.verified, res.Signed = v.Reader, v.Verified, v.Signed
	res.Provenance = newProvenanceResult(v.Provenance)
	if v.Report != nil {
		showFindings(c, name, v.Report)
	}
	if err != nil {
		switch {
		case v.Reader == nil:
			return res, onFile("", name, err)
		case !v.Signed && errors.Is(err, signing.ErrUnsigned):
			return res, onFile("verify", name, err)
		case !v.Signed:
			return res, onFile("verify", name, err)
		case errors.Is(err, trust.ErrNoKeyring):
			return res, trustError(c, err)
		}
		if len(v.Signatures) > 0 {
			res.setSignatures(v.Signatures, v.PolicyResult, v.Policy)
			if !c.Bool("json") && (len(v.Signatures) > 1 || len(v.Policy.Signers) > 0 || v.Policy.MinSigners > 1) {
				for _, l := range signatureLines(res) {
					fmt.Fprintf(c.App.ErrWriter, "assemble: %s\n", l)
				}
			}
		}
		res.SHA256 = v.SHA256 // known when a provenance rule refused
		res.checked = v
		return res, onFile("verify", name, err)
	}
	res.SHA256 = v.SHA256
	res.Valid = true
	res.trusted, res.checked = v, v
	res.Droplets = len(v.Manifest.Droplets)
	res.Warnings = diagnosticsJSON(v.Report.Warnings())
	res.Files = v.Files()
	res.Bytes = v.Bytes()
	if !v.Signed {
		warnf(c, "%s is unsigned: its structure and manifest are valid, but nothing was authenticated", name)
		return res, nil
	}
	res.setSignatures(v.Signatures, v.PolicyResult, v.Policy)
	res.Authenticated = true
	vf := v.Verified
	res.Signer = &signerResult{Fingerprint: vf.Fingerprint(), SigningKey: vf.SigningKeyFingerprint(), UserID: vf.UserID()}
	res.Timestamp = vf.Time().UTC().Format(time.RFC3339)
	if a := vf.Attestation(); a.Zoneless {
		msg := signing.ZonelessWarning(a)
		warnf(c, "%s: %s", name, msg)
		res.Warnings = append(res.Warnings, diagnosticJSON{Level: "warning", Rule: "timestamp-without-zone", Message: msg})
	}
	res.Algorithm = signing.AlgorithmName(vf.Attestation().Algorithm)
	return res, nil
}

// openAssemblyFile opens an assembly file for reading and says its size.
func openAssemblyFile(name string) (*os.File, int64, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// openAssembly opens the assembly file and reads its structure, as
// assembly.Open does, keeping the file.
func openAssembly(name string) (*os.File, *assembly.Reader, int64, error) {
	f, size, err := openAssemblyFile(name)
	if err != nil {
		return nil, nil, 0, err
	}
	r, err := assembly.NewReader(f, size)
	if err != nil {
		f.Close()
		return nil, nil, 0, onFile("", name, err)
	}
	return f, r, size, nil
}

func printVerified(c *cli.Context, name string, res *verifyResult) {
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
func signatureLines(res *verifyResult) []string {
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
