package packager

import (
	"fmt"

	"github.com/cloud-assembly/assemble/packager/cfn"
)

// PackageOptions configures PackageTemplate.
type PackageOptions struct {
	// Root is the project folder: no file the template names may lie
	// outside it. Empty means the template's own folder.
	Root string
	// Format is the output format: "yaml", "json", or "" for the input's.
	Format string
	// NoSourceMap turns off the SourceMap metadata on emitted resources.
	NoSourceMap bool
	// Sources resolves module sources; nil reads local files under Root,
	// Packages zips and HTTPS URLs (see cfn.NewSources).
	Sources cfn.Sources
	// Properties are the droplet's properties, for packers that need more
	// than the file (a blueprint's variables). Set by the build.
	Properties map[string]any
	// AddFile, set by the build, adds another file to the archive, named
	// relative to the packaged file's folder (a blueprint's children).
	AddFile func(rel string, body []byte) error
	// Read, if set, is called with the path of every local file the
	// packaging reads (the template, its modules, inserted files, package
	// zips, included blueprints), so the caller can keep its output off
	// them.
	Read func(path string)
	// Artifacts ships the local files and folders that rain's !Rain::S3
	// and !Rain::S3Http name; nil refuses them (cfn.ErrNoArtifacts).
	Artifacts cfn.Artifacts
}

// PackageTemplate reads the CloudFormation template at path, expands its
// local modules (see package cfn) and returns the packaged template.
// Errors wrap the cfn sentinels (cfn.ErrMissingParameter, cfn.ErrCycle, ...)
// and, as *cfn.Error, carry the file, line, column and module chain.
func PackageTemplate(path string, opts PackageOptions) ([]byte, error) {
	switch opts.Format {
	case "", "yaml", "json":
	default:
		return nil, fmt.Errorf("package %s: unknown format %q (use yaml or json)", path, opts.Format)
	}
	t, err := cfn.Package(path, cfn.Options{Root: opts.Root, Sources: opts.Sources, NoSourceMap: opts.NoSourceMap, Read: opts.Read, Artifacts: opts.Artifacts})
	if err != nil {
		return nil, err
	}
	if opts.Format == "json" || (opts.Format == "" && t.JSON) {
		return cfn.EncodeJSON(t.Root)
	}
	return cfn.EncodeYAML(t.Root)
}
