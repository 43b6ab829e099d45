package packager

import (
	"fmt"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/packager/artifacts"
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
	// Assets, if set, packages the template's local artifacts and nested
	// templates into it (see package artifacts); without it they are left
	// as written. When it has a bucket it also ships what rain's
	// !Rain::S3 and !Rain::S3Http name, unless Artifacts is set.
	Assets *artifacts.Set
	// Artifacts ships the local files and folders that rain's !Rain::S3
	// and !Rain::S3Http name; nil refuses them (cfn.ErrNoArtifacts).
	Artifacts cfn.Artifacts
}

// Check is the verdict on the options as they are: Format is "", yaml or
// json. Its error is an *errcode.FieldError wrapping ErrOption.
// PackageTemplate checks; a caller may check first, to refuse before it
// reads anything.
func (opts PackageOptions) Check() error {
	switch opts.Format {
	case "", "yaml", "json":
		return nil
	}
	return &errcode.FieldError{Field: "Format", Value: fmt.Sprintf("%q", opts.Format), Reason: "use yaml or json", Err: ErrOption}
}

// PackageTemplate reads the CloudFormation template at path, expands its
// local modules (see package cfn) and returns the packaged template.
// Errors wrap the cfn sentinels (cfn.ErrMissingParameter, cfn.ErrCycle, ...)
// and, as *cfn.Error, carry the file, line, column and module chain.
func PackageTemplate(path string, opts PackageOptions) ([]byte, error) {
	if err := opts.Check(); err != nil {
		return nil, fmt.Errorf("package %s: %w", path, err)
	}
	arts := opts.Artifacts
	var params []string
	if arts == nil && opts.Assets != nil && opts.Assets.HasBucket() {
		arts = rainArtifacts{opts.Assets}
		if p := opts.Assets.BucketParameter(); p != "" {
			params = []string{p} // Export declares it
		}
	}
	t, err := cfn.Package(path, cfn.Options{Root: opts.Root, Sources: opts.Sources, NoSourceMap: opts.NoSourceMap, Read: opts.Read, Artifacts: arts, Parameters: params})
	if err != nil {
		return nil, err
	}
	if opts.Assets != nil {
		if err := opts.Assets.Export(t, path); err != nil {
			return nil, err
		}
	}
	if opts.Format == "json" || (opts.Format == "" && t.JSON) {
		return cfn.EncodeJSON(t.Root)
	}
	return cfn.EncodeYAML(t.Root)
}

// rainArtifacts ships what rain's !Rain::S3 and !Rain::S3Http name through
// the stack's artifact Set, as the properties aws-cli packages are: one
// file droplet each, named by the same bucket and key values.
type rainArtifacts struct{ set *artifacts.Set }

func (r rainArtifacts) Add(a cfn.Artifact) (bucket, key any, err error) {
	ref, err := r.set.AddJoined(a.Path, a.Zip, a.Extension, artifacts.Pos{File: a.File, Line: a.Line, Column: a.Column})
	if err != nil {
		return nil, nil, err
	}
	return ref.Bucket(), ref.Key(), nil
}
