package packager

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
)

// FuzzProjectFile: any assembly.yaml either loads into a manifest that
// prints, parses back and validates, or fails with an error of a known
// class (never a panic, never an unclassified error).
func FuzzProjectFile(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "projects", "*.txtar"))
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, af := range ar.Files {
			if af.Name == ProjectFile {
				f.Add(af.Data)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join("..", "fixtures", "examples", "webapp", ProjectFile)); err == nil {
		f.Add(b)
	}
	classes := []error{ErrProject, ErrOutsideProject, ErrMissing, assembly.ErrManifest, assembly.ErrTooLarge,
		assembly.ErrLogicalID, assembly.ErrEnvironment, assembly.ErrReference, assembly.ErrCycle,
		droplets.ErrSpecifier, droplets.ErrProperty, droplets.ErrAttribute, fs.ErrNotExist}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ProjectFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "t.yaml"), []byte("Resources: {}\n"), 0o644)
		p, err := Load(dir, BuildOptions{})
		if err != nil {
			for _, c := range classes {
				if errors.Is(err, c) {
					return
				}
			}
			var pe *ProjectError
			if errors.As(err, &pe) && pe.Field == "properties.template" {
				return // the template packager's own error, placed
			}
			t.Fatalf("error of no known class: %v", err)
		}
		out, err := p.Manifest.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		m, err := assembly.ParseManifest(out)
		if err != nil {
			t.Fatalf("built manifest does not parse: %v\n%s", err, out)
		}
		if _, err := m.Validate(assembly.CheckOptions{Writing: true}); err != nil {
			t.Fatalf("built manifest does not validate: %v\n%s", err, out)
		}
	})
}
