package packager

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/packager/cdk"
)

// loadCDK plans the assembly of the CDK cloud assembly (cdk.out) in dir:
// the whole folder byte for byte under cdk.ArchiveDir, and the droplets
// package cdk maps it to.
func loadCDK(dir string, opts BuildOptions) (*Plan, error) {
	mp, err := cdk.Map(dir)
	if err != nil {
		return nil, err
	}
	source := filepath.Join(dir, "manifest.json")
	m := mp.Manifest
	if opts.Strict && len(m.Missing) > 0 {
		var keys []string
		for _, k := range slices.Sorted(maps.Keys(m.Missing)) {
			keys = append(keys, fmt.Sprintf("%q (%s)", k, m.Missing[k].Provider))
		}
		return nil, fmt.Errorf("%w: %s: CDK context is missing for %s: run cdk synth with credentials for the lookups (or put the values in cdk.context.json), then build again", ErrMissing, source, strings.Join(keys, ", "))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	fsroot, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	p := &Plan{Dir: dir, Source: source, Manifest: m, root: fsroot,
		writer:  assembly.NewWriter(assembly.WriterOptions{ModTime: opts.ModTime, Workers: opts.Workers, Progress: opts.Progress, Sealer: opts.Sealer}),
		sources: map[string]string{}, bodies: map[string][]byte{}, dirs: []string{real}}
	// Every file is read through the cdk.out's os.Root, and must still be
	// the file that was mapped when the archive is written.
	b := &builder{plan: p, root: real, rootReal: real, opts: opts}
	onDisk := make(map[string]string, len(mp.Files))
	for _, f := range mp.Files {
		if err := b.addProjectFile(f.Name, f.Path); err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		onDisk[f.Name] = f.Path
	}
	warnings := mp.Warnings
	if opts.Environment != "" {
		warnings = append(warnings, assembly.Finding{Severity: assembly.Warning, Message: "BuildOptions.Environment is not used for a CDK cloud assembly: its stacks name their own environments"})
	}
	if opts.Schemas != nil {
		for _, id := range m.IDs() {
			d := m.Droplets[id]
			if d.Type != droplets.StackType {
				continue
			}
			file := onDisk[d.Properties["template"].(string)]
			body, err := b.readFile(file)
			if err != nil {
				return nil, err
			}
			if err := b.checkSchemas(id, "properties.template", relWD(file), file, body); err != nil {
				return nil, err
			}
		}
		if err := b.schemaError(); err != nil {
			return nil, err
		}
	}
	if err := p.addProvenance(opts, source, cdkDependencies(dir)); err != nil {
		return nil, err
	}
	rep, err := p.finish()
	if err != nil {
		return nil, fmt.Errorf("%s: the droplets made from it are invalid: %w", source, err)
	}
	p.Warnings = append(append(warnings, rep.Warnings()...), b.schemaWarnings...)
	return p, nil
}
