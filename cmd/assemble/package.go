package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/packager"
	"github.com/cloud-assembly/assemble/packager/cfn"
)

func packageCmd() *cli.Command {
	return &cli.Command{
		Name:      "package",
		Usage:     "expand a CloudFormation template's local modules",
		ArgsUsage: "TEMPLATE",
		Description: `Reads a CloudFormation template (YAML or JSON), expands its Modules,
Constants, resolvable Conditions and packaging-time intrinsics, and writes the
packaged template to standard output or --output (- for standard output).
Module and inserted files must lie under --root, which defaults to the
template's folder: --root .. lets a template use modules from the folder
above it. The output is never one of the files read.

Example:
   assemble package --output packaged.yaml template.yaml`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` instead of standard output"},
			&cli.StringFlag{Name: "format", Usage: "output format: yaml or json (default: the input's)"},
			&cli.BoolFlag{Name: "no-source-map", Usage: "do not add Metadata.SourceMap to resources made by modules"},
			&cli.StringFlag{Name: "root", Usage: "folder that module and inserted file paths may reach (default: the template's folder)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("package takes one TEMPLATE argument, got %d", c.NArg())
			}
			format := c.String("format")
			if format != "" && format != "yaml" && format != "json" {
				return usagef("--format %q: use yaml or json", format)
			}
			tmpl := c.Args().First()
			if err := checkTemplateArg(tmpl); err != nil {
				return err
			}
			root := c.String("root")
			if root != "" {
				if st, err := os.Stat(root); err != nil || !st.IsDir() {
					return usagef("--root %s: not a folder", root)
				}
			}
			var read []string
			out, err := packager.PackageTemplate(tmpl, packager.PackageOptions{
				Root:        root,
				Format:      format,
				NoSourceMap: c.Bool("no-source-map"),
				Read:        func(file string) { read = append(read, file) },
			})
			if err != nil {
				if errors.Is(err, cfn.ErrOutsideRoot) && root == "" {
					return withHint(err, "to use modules outside the template's folder, pass --root with a folder that holds both")
				}
				return err
			}
			return writeOutput(c, c.String("output"), out, append(read, tmpl))
		},
	}
}

// checkTemplateArg says plainly when TEMPLATE is a folder or missing.
func checkTemplateArg(name string) error {
	st, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: no such file", name)
	case err != nil:
		return err
	case st.IsDir():
		return withHint(fmt.Errorf("%s is a folder, not a template", name), "name the template file (e.g. "+filepath.Join(name, "template.yaml")+"), or build the folder with 'assemble build'")
	}
	return nil
}
