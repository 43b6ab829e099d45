package main

import (
	"errors"
	"io/fs"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/packager/cdk"
	"github.com/cloud-assembly/assemble/trust"
)

func extractCmd() *cli.Command {
	return &cli.Command{
		Name:      "extract",
		Usage:     "verify a signed assembly, then write its files to a folder",
		ArgsUsage: "ASSEMBLY",
		Description: `Runs every check of 'assemble verify' first; only a valid assembly signed by
trusted keys as the signature policy asks (--keyring, --min-signers,
--require-signer, --policy: as for verify) is written. The files go to a
temporary folder beside DIR (inside DIR when it is an existing empty folder,
such as a mounted volume), each checked again against its signed hash as it
is written, and moved into place at the end: on any failure nothing is
written. A run killed while it moves them into an existing folder is undone
by the next one (its journal names what it moved). DIR must not exist or be empty; every folder written gets the
same mode (0755 less the umask), every file 0644 less the umask.
signature.asc is written too.

--allow-unsigned extracts an unsigned assembly after checking its structure
and manifest, as verify does, and warns that nothing was authenticated.

With --cdk-out DIR instead of -d, an assembly built from a CDK cloud
assembly gives back that cdk.out, byte for byte (files its manifest records
as executable get 0755 less the umask), ready for 'cdk deploy --app DIR'.

Example:
   assemble extract --keyring release.pub.asc -d out app.cloud
   assemble extract --keyring release.pub.asc --cdk-out cdk.out app.cloud`,
		Flags: append(trustFlags(),
			digestFlag, timeoutFlag(),
			&cli.StringFlag{Name: "dir", Aliases: []string{"d"}, Usage: "write the files under `DIR`"},
			&cli.StringFlag{Name: "cdk-out", Usage: "write the CDK cloud assembly the assembly was built from to `DIR` (for cdk deploy --app DIR)"},
			&cli.BoolFlag{Name: "allow-unsigned", Usage: "extract an unsigned assembly after checking structure and manifest (authenticates nothing)"},
			strictFlag,
			jsonFlag,
			quietFlag,
			progressFlag,
		),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("extract takes one ASSEMBLY argument, got %d", c.NArg())
			}
			dir, cdkOut := c.String("dir"), c.String("cdk-out")
			switch {
			case dir != "" && cdkOut != "":
				return usagef("extract takes -d DIR or --cdk-out DIR, not both: run it twice for both")
			case cdkOut != "":
				dir = cdkOut
			case dir == "":
				return usagef("extract needs -d DIR (or --cdk-out DIR)")
			}
			// Refuse a full folder before verifying anything.
			if err := trust.CheckExtractDir(dir); err != nil {
				return extractDirError(err)
			}
			res, err := verifyAssembly(c, c.Args().First(), c.Bool("allow-unsigned"))
			defer res.close()
			if err != nil {
				return err
			}
			opts := &trust.ExtractOptions{}
			if cdkOut != "" {
				opts.Layout = cdk.OutFiles
			}
			prog := newProgress(c, "extracting "+res.File)
			opts.Progress = prog.Func()
			x, err := res.assembly.Extract(c.Context, dir, opts)
			prog.Done()
			var le *trust.LayoutError
			switch {
			case errors.As(err, &le):
				return withHint(onFile("extract", res.File, err), "extract --cdk-out gives back the cdk.out of an assembly built with 'assemble build CDK_OUT'; use -d DIR for the files of any assembly")
			case err != nil:
				return onFile("extract", res.File, err)
			}
			if c.Bool("json") {
				return printJSON(c, x)
			}
			what := plural.Count(x.Files, "file")
			if x.CDKOut {
				what = "the cdk.out: " + what
			}
			if x.Signer == nil {
				printf(c, c.App.Writer, "extracted %s (%s) from %s to %s: UNSIGNED, not authenticated\n",
					what, plural.Count(int(x.Bytes), "byte"), x.File, dir)
				return nil
			}
			printf(c, c.App.Writer, "extracted %s (%s) from %s to %s, signed by %q (%s)\n",
				what, plural.Count(int(x.Bytes), "byte"), x.File, dir, x.Signer.UserID, x.Signer.Fingerprint)
			return nil
		},
	}
}

// extractDirError is a refusal of extract's folder, with what to do.
func extractDirError(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return withHint(err, "create the folder it goes in first, or extract elsewhere")
	}
	return withHint(err, "extract into a new or empty folder")
}
