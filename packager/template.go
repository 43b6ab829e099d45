package packager

import (
	"fmt"
	"os"
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
}

// PackageTemplate reads the CloudFormation template at path, expands its
// local modules and returns the packaged template.
//
// TODO(modules): this is the pass-through the build uses until the module
// packager lands; it is replaced wholesale by the module packager.
func PackageTemplate(path string, opts PackageOptions) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("package %s: %w", path, err)
	}
	return b, nil
}
