package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/packager"
	"github.com/cloud-assembly/assemble/packager/artifacts"
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
			&cli.StringFlag{Name: "format", Usage: "output `FORMAT`: yaml or json (default: the input's)"},
			&cli.BoolFlag{Name: "no-source-map", Usage: "do not add Metadata.SourceMap to resources made by modules"},
			&cli.StringFlag{Name: "root", Usage: "the folder `DIR` that module and inserted file paths may reach (default: the template's folder)"},
			&cli.StringFlag{Name: "asset-bucket", Usage: "package local artifacts (Lambda code, nested templates, ...) for `BUCKET`, as aws cloudformation package --s3-bucket does, writing them beside --output"},
			&cli.StringFlag{Name: "asset-prefix", Usage: "put `PREFIX`/ before the artifacts' object keys"},
			&cli.StringFlag{Name: "region", EnvVars: []string{"AWS_REGION", "AWS_DEFAULT_REGION"}, Usage: "the `REGION` of --asset-bucket, for the URL an AWS::Serverless::Application's Location is written as (as aws cloudformation package takes it)"},
			jsonFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("package takes one TEMPLATE argument, got %d", c.NArg())
			}
			format := c.String("format")
			if err := (packager.PackageOptions{Format: format}).Check(); err != nil {
				return usageError{flagNamed(err, map[string]string{"Format": "--format"})}
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
			readFn := func(file string) { read = append(read, file) }
			dst := c.String("output")
			var set *artifacts.Set
			if bucket := c.String("asset-bucket"); bucket != "" {
				setRoot := root
				if setRoot == "" {
					setRoot = filepath.Dir(tmpl)
				}
				outDir := ""
				if dst != "" && dst != "-" {
					outDir = filepath.Dir(dst)
				}
				if err := artifacts.CheckBucket(bucket); err != nil {
					return usagef("--asset-bucket: %v", err)
				}
				var err error
				set, err = artifacts.New(artifacts.Options{Root: setRoot, Bucket: bucket, KeyPrefix: c.String("asset-prefix"), Region: c.String("region"), NoSourceMap: c.Bool("no-source-map"), Read: readFn, OutputDir: outDir})
				if err != nil {
					return usagef("--asset-prefix or --region: %v", err)
				}
				defer set.Close()
			}
			out, err := packager.PackageTemplate(tmpl, packager.PackageOptions{
				Root:        root,
				Format:      format,
				NoSourceMap: c.Bool("no-source-map"),
				Read:        readFn,
				Assets:      set,
			})
			if err == nil && set != nil && len(set.Assets()) > 0 && (dst == "" || dst == "-") {
				err = withHint(fmt.Errorf("%s names local artifacts (%s to upload) and there is no folder to write them to", tmpl, plural.Count(len(set.Assets()), "file")), "pass --output FILE: the artifacts are written beside it, at their object keys, for aws s3 sync")
			}
			if err != nil {
				if errors.Is(err, cfn.ErrOutsideRoot) && root == "" {
					return withHint(err, "to use modules outside the template's folder, pass --root with a folder that holds both")
				}
				if errors.Is(err, artifacts.ErrOutsideProject) && root == "" {
					return withHint(err, "to package artifacts outside the template's folder (a monorepo's ../services/billing), pass --root with a folder that holds both, e.g. --root ..")
				}
				return err
			}
			res := packageResult{Template: tmpl, Inputs: sortedUnique(read)}
			if set != nil {
				inputs := append(append([]string{}, read...), tmpl)
				written, err := packager.WriteAssets(c.Context, set, filepath.Dir(dst), inputs)
				if err != nil {
					return outputError(err)
				}
				for i, a := range set.Assets() {
					res.Artifacts = append(res.Artifacts, packageArtifact{Source: a.Source, Key: a.Key, File: written[i], SHA256: a.SHA256, Size: a.Size})
				}
			}
			if c.Bool("json") && (dst == "" || dst == "-") {
				packaged := string(out)
				res.Packaged = &packaged
				return printJSON(c, res)
			}
			if err := writeOutput(c, dst, out, append(read, tmpl)); err != nil {
				return err
			}
			if c.Bool("json") {
				res.Output = dst
				return printJSON(c, res)
			}
			return nil
		},
	}
}

// checkTemplateArg says plainly when TEMPLATE is a folder or missing.
func checkTemplateArg(name string) error {
	st, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return because(fs.ErrNotExist, name, "%s: no such file", name)
	case err != nil:
		return err
	case st.IsDir():
		return withHint(because(errIsFolder, name, "%s is a folder, not a template", name), "name the template file (e.g. "+filepath.Join(name, "template.yaml")+"), or build the folder with 'assemble build'")
	}
	return nil
}

// packageResult is package's result as JSON (docs/json/package.json): the
// packaged template itself, or the file it was written to, and the files
// read to make it.
type packageResult struct {
	Template  string            `json:"template"`
	Output    string            `json:"output,omitempty"`
	Inputs    []string          `json:"inputs"`
	Packaged  *string           `json:"packaged,omitempty"`
	Artifacts []packageArtifact `json:"artifacts,omitempty"`
}

// packageArtifact is one artifact package --asset-bucket wrote.
type packageArtifact struct {
	Source string `json:"source"`
	Key    string `json:"key"`
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// sortedUnique returns names sorted, without repeats (never nil).
func sortedUnique(names []string) []string {
	out := append([]string{}, names...)
	slices.Sort(out)
	return slices.Compact(out)
}
