package main

import (
	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/packager"
)

func packageCmd() *cli.Command {
	return &cli.Command{
		Name:      "package",
		Usage:     "expand a CloudFormation template's local modules",
		ArgsUsage: "TEMPLATE",
		Description: `Reads a CloudFormation template (YAML or JSON), expands its Modules,
Constants, resolvable Conditions and packaging-time intrinsics, and writes the
packaged template to standard output or --output. Module files must lie in the
template's folder or below it.

Example:
   assemble package --output packaged.yaml template.yaml`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` instead of standard output"},
			&cli.StringFlag{Name: "format", Usage: "output format: yaml or json (default: the input's)"},
			&cli.BoolFlag{Name: "no-source-map", Usage: "do not add Metadata.SourceMap to resources made by modules"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("package takes one TEMPLATE argument, got %d", c.NArg())
			}
			format := c.String("format")
			if format != "" && format != "yaml" && format != "json" {
				return usagef("--format %q: use yaml or json", format)
			}
			out, err := packager.PackageTemplate(c.Args().First(), packager.PackageOptions{
				Format:      format,
				NoSourceMap: c.Bool("no-source-map"),
			})
			if err != nil {
				return err
			}
			dst := c.String("output")
			if dst == "" {
				_, err = c.App.Writer.Write(out)
				return err
			}
			return writeFileAtomic(dst, out)
		},
	}
}
