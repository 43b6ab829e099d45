//go:build sigstore

package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/provenance/ghattest"
)

// Built with -tags sigstore only: sigstore-go's Fulcio and transparency
// log verification (about 300 packages) stays out of the default binary.
func init() { optionalCommands = append(optionalCommands, verifyGitHubCmd) }

func verifyGitHubCmd() *cli.Command {
	return &cli.Command{
		Name:      "verify-github-attestation",
		Usage:     "verify a GitHub artifact attestation of an assembly offline, against a trusted root you supply",
		ArgsUsage: "ASSEMBLY",
		Description: "Checks that BUNDLE (gh attestation download) attests ASSEMBLY's SHA-256, signed by a\n" +
			"workflow of --repo through a Fulcio certificate and logged in a transparency log that\n" +
			"--trusted-root (gh attestation trusted-root) vouches for. Nothing is fetched.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "bundle", Usage: "the attestation bundle `FILE`", Required: true},
			&cli.StringFlag{Name: "trusted-root", Usage: "the trusted root `FILE`", Required: true},
			&cli.StringFlag{Name: "repo", Usage: "the repository `OWNER/NAME` whose workflow must have signed", Required: true},
			&cli.StringFlag{Name: "host", Usage: "the GitHub `HOST` (a GitHub Enterprise Server's; default github.com)"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("verify-github-attestation takes one ASSEMBLY argument, got %d", c.NArg())
			}
			name := c.Args().First()
			f, err := os.Open(name)
			if err != nil {
				return onFile("verify-github-attestation", name, err)
			}
			defer f.Close()
			h := digest.NewHasher()
			if _, err := io.Copy(h, f); err != nil {
				return onFile("verify-github-attestation", name, err)
			}
			d := h.Digest()
			bundle, err := limitio.ReadFile(c.String("bundle"), 8<<20)
			if err != nil {
				return flagFileError("--bundle", err)
			}
			root, err := limitio.ReadFile(c.String("trusted-root"), 8<<20)
			if err != nil {
				return flagFileError("--trusted-root", err)
			}
			res, err := ghattest.VerifyFile(bundle, root, ghattest.Options{Digest: d.Hex(), Repository: c.String("repo"), Host: c.String("host")})
			if err != nil {
				return onFile("verify-github-attestation", name, err)
			}
			if c.Bool("json") {
				return printJSON(c, struct {
					File   string        `json:"file"`
					SHA256 digest.Digest `json:"sha256"`
					*ghattest.Result
				}{name, d, res})
			}
			fmt.Fprintf(c.App.Writer, "%s: %s attested by %s (%s)\n", name, d, res.Workflow, res.Issuer)
			return nil
		},
	}
}
