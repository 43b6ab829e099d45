package main

import (
	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/internal/output"
	"github.com/cloud-assembly/assemble/remote"
	"github.com/cloud-assembly/assemble/trust"
)

func pullCmd() *cli.Command {
	return &cli.Command{
		Name:      "pull",
		Usage:     "download an assembly from a registry, S3 or HTTPS, verifying it on the way",
		ArgsUsage: "LOCATION",
		Description: `Reads the assembly at LOCATION once, verifying it as 'assemble verify'
does (the same trust flags) while the bytes arrive, and writes -o FILE only
when verification passed: the file appears whole, by rename, or not at all.
--digest sha256:HEX pins the bytes that must arrive (the digest 'assemble
push' printed): anything else fails, whatever it holds.

LOCATIONS:
   oci://REGISTRY/REPOSITORY[:TAG|@sha256:DIGEST]
   s3://BUCKET/KEY[?versionId=VERSION]
   https://HOST/PATH              (http:// only to a loopback host)

Examples:
   assemble pull --keyring release.pub.asc -o app.cloud oci://registry.example.com/team/app:1.4.0
   assemble pull --keyring release.pub.asc --digest sha256:9f86d0... -o app.cloud s3://releases/app/1.4.0.cloud`,
		Flags: append(trustFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the verified assembly to `FILE` (- for standard output)"},
			digestFlag, timeoutFlag(),
			&cli.BoolFlag{Name: "allow-unsigned", Usage: "accept an unsigned assembly after checking structure and manifest (authenticates nothing)"},
			jsonFlag,
			strictFlag,
			quietFlag,
			progressFlag,
		),
		Action: runPull,
	}
}

// pullResult is what pull reports (docs/json/pull.json): verify's result
// and the file written.
type pullResult struct {
	*trust.Verdict
	Output string `json:"output"`
}

func runPull(c *cli.Context) error {
	if c.NArg() != 1 {
		return withHint(usagef("pull takes one LOCATION, got %d arguments", c.NArg()), "assemble pull -o app.cloud oci://REGISTRY/REPOSITORY:TAG")
	}
	loc := c.Args().First()
	if !remote.IsLocation(loc) {
		return withHint(usagef("pull: %q is not a location", loc), "pull reads oci://, s3:// or https:// locations; 'assemble verify' checks a file")
	}
	out := c.String("output")
	if out == "" {
		return withHint(usagef("pull needs -o FILE"), "name the file to write: assemble pull -o app.cloud "+loc)
	}
	if err := refuseTerminal(c, out); err != nil {
		return err
	}
	if out == "-" && c.Bool("json") {
		return withHint(usagef("--json and -o - both write to standard output"), "write the assembly to a file with -o FILE")
	}
	if _, err := digestOption(c); err != nil {
		return err
	}
	if _, err := remote.Parse(loc); err != nil {
		return err
	}
	f, err := output.Create(c.Context, out, outputOptions(c, nil, true))
	if err != nil {
		return outputError(err)
	}
	defer f.Close()
	// The location is read once (remote.Object spools each byte as it
	// arrives); WriteTo writes f from that spool only once the assembly
	// verified, checking the bytes against its SHA-256 again as they pass,
	// and f is committed only then.
	res, err := verifyAssembly(c, loc, c.Bool("allow-unsigned"))
	defer res.close()
	if err != nil {
		return withResult(err, res.failure())
	}
	if _, err := res.assembly.WriteTo(f); err != nil {
		return withResult(err, &trust.VerifyError{Name: res.File, Result: res.checked, Err: err})
	}
	if err := f.Commit(); err != nil {
		return outputError(err)
	}
	if c.Bool("json") {
		return printJSON(c, pullResult{res.Verdict, out})
	}
	if out != "-" {
		printVerified(c, res.File, res.Verdict)
		printf(c, c.App.Writer, "wrote %s\n", out)
	}
	return nil
}
