package main

import (
	"os"
	"path"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/provenance"
)

// envProvenanceKey holds a PEM private key for attest --provenance, as
// ASSEMBLE_SIGNING_KEY holds sign's.
const envProvenanceKey = "ASSEMBLE_PROVENANCE_KEY"

// attestProvenanceFlags are attest --provenance's own flags.
func attestProvenanceFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.BoolFlag{Name: "provenance", Usage: "write a Sigstore bundle (DSSE, in-toto SLSA provenance about the .cloud file's SHA-256) signed with --key"},
		&cli.StringFlag{Name: "key", Usage: "with --provenance: the Ed25519 or ECDSA private key `FILE` (PEM, unencrypted; or $" + envProvenanceKey + ")"},
	}, trustFlags()...)
}

// runAttestProvenance verifies the assembly (the trust flags, as verify
// does), and signs a bundle carrying its provenance, which must hold.
func runAttestProvenance(c *cli.Context, in string) error {
	if c.IsSet("algorithm") || c.Bool("signed") {
		return usagef("--provenance signs a bundle: it takes no --algorithm or --signed")
	}
	keyName, keyData := c.String("key"), []byte(nil)
	switch {
	case keyName != "":
		var err error
		if keyData, err = limitio.ReadFile(keyName, 64<<10); err != nil {
			return onFile("attest", keyName, err)
		}
	case os.Getenv(envProvenanceKey) != "":
		keyName, keyData = "$"+envProvenanceKey, []byte(os.Getenv(envProvenanceKey))
	default:
		return withHint(usagef("--provenance needs --key FILE (or $%s): the private key that signs the bundle", envProvenanceKey), "make one: openssl genpkey -algorithm ed25519 -out provenance.key; give verifiers its public half: openssl pkey -in provenance.key -pubout")
	}
	key, err := provenance.ParsePrivateKey(keyName, keyData)
	if err != nil {
		return onFile("attest", keyName, err)
	}
	res, err := verifyAssembly(c, in, false)
	defer res.close()
	if err != nil {
		return err
	}
	bundle, err := provenance.AttestBundle(path.Base(in), res.SHA256, res.checked.Provenance, key)
	if err != nil {
		return onFile("attest", in, err)
	}
	return writeOutput(c, c.String("output"), bundle, []string{in})
}
