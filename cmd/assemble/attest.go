package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/signing"
)

func attestCmd() *cli.Command {
	return &cli.Command{
		Name:      "attest",
		Usage:     "write the attestation that sign would sign, to be signed elsewhere",
		ArgsUsage: "ASSEMBLY",
		Description: `Hashes every file of the assembly (salted with a fresh nonce) and writes the
attestation, JSON with the timestamp now, to standard output or -o FILE;
nothing else. Sign it with any OpenPGP tool that writes a cleartext
signature (gpg --clearsign, a smartcard), then or any time later (hours,
days: the signer's key must be valid at the attestation's timestamp and at
the signature's), then attach it with 'assemble sign --signature FILE'. An assembly that the check every
command runs finds invalid is refused, as sign refuses it.

--signed writes instead the attestation already signed in the assembly's
signature.asc, byte for byte, for a co-signer to sign elsewhere and add with
'assemble sign --add --signature FILE'.

With --json, standard output gets one object describing the attestation
(and holding it, as "text", when there is no -o FILE).

PROVENANCE: --provenance writes instead a Sigstore bundle v0.3
(application/vnd.dev.sigstore.bundle.v0.3+json): a DSSE envelope of an
in-toto statement whose subject is the .cloud file's SHA-256 and whose
predicate is the assembly's own SLSA provenance (provenance.intoto.json),
signed with --key FILE (or $ASSEMBLE_PROVENANCE_KEY), a PEM Ed25519 or
ECDSA private key. The assembly is verified first (--keyring/--policy, as
verify) and its provenance must name its content. sigstore-go and cosign
verify the bundle offline with the public key ('cosign
verify-blob-attestation --key KEY.pub --bundle FILE --insecure-ignore-tlog
--type slsaprovenance1 app.cloud'); so does 'assemble verify --bundle FILE'.

Example:
   assemble attest -o att.json app.cloud
   gpg --clearsign --local-user release@example.com att.json   # writes att.json.asc
   assemble sign --signature att.json.asc --keyring release.pub.asc app.cloud
   assemble attest --provenance --key provenance.key --keyring release.pub.asc -o app.sigstore.json app.cloud`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the attestation to `FILE` (default: standard output)"},
			&cli.StringFlag{Name: "algorithm", Value: "SHA256", Usage: "hash `ALGORITHM`: SHA256, SHA384 or SHA512"},
			&cli.BoolFlag{Name: "signed", Usage: "write the attestation already signed in signature.asc (to co-sign it elsewhere)"},
			jsonFlag,
		}, attestProvenanceFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("attest takes one ASSEMBLY argument, got %d", c.NArg())
			}
			in := c.Args().First()
			if c.Bool("provenance") {
				return runAttestProvenance(c, in)
			}
			if c.String("key") != "" || trustGiven(c) {
				return usagef("--key and the trust flags go with --provenance")
			}
			if c.Bool("signed") {
				if c.IsSet("algorithm") {
					return usagef("--signed writes the attestation signed already, with its algorithm: it takes no --algorithm")
				}
				rc, cl, err := openReader(c, "attest", in)
				if err != nil {
					return err
				}
				defer cl.Close()
				text, err := signing.SignedText(rc)
				if err != nil {
					return sealError("attest", in, err)
				}
				return writeAttestation(c, in, append(text, '\n'))
			}
			alg, err := signing.ParseAlgorithm(c.String("algorithm"))
			if err != nil {
				return algorithmError("--algorithm", err)
			}
			now := time.Now()
			opts := &signing.SignOptions{Algorithm: alg, Now: func() time.Time { return now },
				Warn: func(f assembly.Finding) { warnf(c, "%s: %s", in, f) }}
			rc, cl, err := openReader(c, "attest", in)
			if err != nil {
				return err
			}
			defer cl.Close()
			a, err := signing.Attest(c.Context, rc, opts)
			if err != nil {
				return sealError("attest", in, err)
			}
			body, err := a.Marshal()
			if err != nil {
				return err
			}
			return writeAttestation(c, in, body)
		},
	}
}

// attestResult is what attest --json reports (docs/json/attest.json).
type attestResult struct {
	File      string `json:"file"`
	Output    string `json:"output,omitempty"`
	Algorithm string `json:"algorithm"`
	Timestamp string `json:"timestamp"`
	Files     int    `json:"files"`
	Bytes     int64  `json:"bytes"`
	Text      string `json:"text,omitempty"`
}

// writeAttestation writes the attestation text to -o FILE or standard
// output; with --json, standard output gets the result object instead
// (holding the text when there is no -o).
func writeAttestation(c *cli.Context, in string, text []byte) error {
	out := c.String("output")
	if !c.Bool("json") {
		return writeOutput(c, out, text, []string{in})
	}
	if out == "-" {
		return withHint(usagef("--json and -o - both write to standard output"), "write the attestation to a file with -o FILE, or find it in the JSON's text")
	}
	a, err := signing.ParseAttestation(text)
	if err != nil {
		return onFile("attest", in, err)
	}
	res := attestResult{File: in, Output: out, Algorithm: signing.AlgorithmName(a.Algorithm), Timestamp: a.Timestamp.UTC().Format(time.RFC3339), Files: len(a.Items)}
	for _, it := range a.Items {
		res.Bytes += it.Size
	}
	if out != "" {
		if err := writeOutput(c, out, text, []string{in}); err != nil {
			return err
		}
	} else {
		res.Text = string(text)
	}
	return printJSON(c, res)
}
