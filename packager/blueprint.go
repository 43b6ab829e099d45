package packager

import (
	"fmt"
	"path/filepath"

	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/packager/blueprint"
)

func init() {
	RegisterPacker(droplets.BlueprintType, "blueprint", PackageBlueprint)
}

// PackageBlueprint packages the blueprint droplet's root blueprint (see
// blueprint.Package): it validates the blueprint and its includes,
// evaluates what is known at packaging time with the droplet's "variables"
// property, adds the included blueprints next to it through opts.AddFile,
// and returns the packaged root blueprint. ${cwd()} stands for the project
// folder (opts.Root), and included blueprints must lie inside it.
func PackageBlueprint(file string, opts PackageOptions) ([]byte, error) {
	root := opts.Root
	if root == "" {
		root = filepath.Dir(file)
	}
	vars := map[string]any{}
	switch v := opts.Properties["variables"].(type) {
	case nil:
	case map[string]any:
		vars = v
	default:
		return nil, fmt.Errorf("%w: variables must be a mapping of variable names to values", droplets.ErrProperty)
	}
	p, err := blueprint.Package(file, blueprint.Options{Cwd: root, Root: root, Variables: vars, Read: opts.Read})
	if err != nil {
		return nil, err // an ErrorList: every entry names its file and place
	}
	for _, name := range p.Names[1:] {
		if opts.AddFile == nil {
			return nil, fmt.Errorf("blueprint %s includes %s, but the caller can not add files", file, name)
		}
		if err := opts.AddFile(name, p.Files[name]); err != nil {
			return nil, err
		}
	}
	return p.Files[p.Main], nil
}
