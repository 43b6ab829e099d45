package main

import (
	"fmt"
	"strings"

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
With a --policy whose provenance section names bundle-keys, the provenance
bundles attached to an OCI artifact (referrers; 'assemble push --bundle')
are checked too, and those that verified are written beside FILE:
app.cloud gives app.sigstore.json (app.1.sigstore.json, app.2... for
several), for 'assemble verify --bundle' or cosign to read later.
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
	// Bundles are the provenance bundles written beside Output.
	Bundles []string `json:"bundles,omitempty"`
}

// bundleFile is the name of the i-th of n provenance bundles written
// beside out, the assembly pulled: app.cloud gives app.sigstore.json, or
// app.1.sigstore.json ... when there are several.
func bundleFile(out string, i, n int) string {
	base := strings.TrimSuffix(out, ".cloud")
	if n == 1 {
		return base + ".sigstore.json"
	}
	return fmt.Sprintf("%s.%d.sigstore.json", base, i+1)
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
	// The bundles that verified, beside the file (not beside standard
	// output): each written whole, then committed with the file.
	var bundles []*output.File
	var written []string
	if found := res.checked.Bundles; out != "-" {
		for i, b := range found {
			name := bundleFile(out, i, len(found))
			bf, err := output.Create(c.Context, name, outputOptions(c, nil, true))
			if err != nil {
				return outputError(err)
			}
			defer bf.Close()
			if _, err := bf.Write(b.Data); err != nil {
				return outputError(err)
			}
			bundles, written = append(bundles, bf), append(written, name)
		}
	}
	if err := f.Commit(); err != nil {
		return outputError(err)
	}
	for _, bf := range bundles {
		if err := bf.Commit(); err != nil {
			return outputError(err)
		}
	}
	if c.Bool("json") {
		return printJSON(c, pullResult{res.Verdict, out, written})
	}
	if out != "-" {
		printVerified(c, res.File, res.Verdict)
		printf(c, c.App.Writer, "wrote %s\n", out)
		for _, w := range written {
			printf(c, c.App.Writer, "wrote %s (provenance bundle)\n", w)
		}
	}
	return nil
}
