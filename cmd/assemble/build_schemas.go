package main

import (
	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/packager"
	"github.com/cloud-assembly/assemble/packager/schema"
)

// buildSchemas loads the --schemas catalog into the build options.
func buildSchemas(c *cli.Context, opts *packager.BuildOptions) error {
	dir := c.String("schemas")
	if dir == "" {
		if c.Bool("schemas-warn") {
			return usagef("--schemas-warn needs --schemas DIR")
		}
		return nil
	}
	cat, err := schema.LoadCatalog(dir)
	if err != nil {
		return withHint(err, "--schemas names a folder of resource type schemas (*.json), such as CloudFormation's CloudformationSchema.zip unpacked")
	}
	opts.Schemas = cat
	opts.SchemasWarn = c.Bool("schemas-warn")
	return nil
}
