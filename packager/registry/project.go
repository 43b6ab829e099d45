package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cloud-assembly/assemble/internal/limitio"
)

const (
	configName  = ".rpdk-config"
	fragmentDir = "fragments"
	// maxConfigSize bounds .rpdk-config.
	maxConfigSize = 1 << 20
	// maxFragmentFiles bounds the walk of a fragments folder.
	maxFragmentFiles = 1000
	// maxSiblings bounds how many neighbouring module projects are read.
	maxSiblings = 1000
)

// Module is a module project folder or a lone fragment file.
type Module struct {
	// Dir is the project folder; empty for a lone fragment file.
	Dir string
	// TypeName comes from .rpdk-config; empty when unknown.
	TypeName string
	// Fragment is the project's single template fragment.
	Fragment *Fragment
}

// Load reads a module project folder (holding .rpdk-config and exactly one
// template under fragments/) or a lone fragment file. A folder without
// .rpdk-config is accepted when it has a fragments/ folder; its type name
// is then unknown.
func Load(path string, limits Limits) (*Module, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w: name a fragment file or a module project folder (with .rpdk-config and fragments/)", path, fs.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		f, err := ReadFragment(path, limits)
		if err != nil {
			return nil, err
		}
		return &Module{Fragment: f}, nil
	}
	m := &Module{Dir: path}
	if tn, err := readConfig(filepath.Join(path, configName)); err == nil {
		m.TypeName = tn
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	frag, err := fragmentFile(filepath.Join(path, fragmentDir))
	if err != nil {
		return nil, err
	}
	if m.Fragment, err = ReadFragment(frag, limits); err != nil {
		return nil, err
	}
	return m, nil
}

// readConfig returns the typeName in a .rpdk-config file.
func readConfig(path string) (string, error) {
	data, err := limitio.ReadFile(path, maxConfigSize)
	var tl *limitio.TooLargeError
	if errors.As(err, &tl) {
		return "", fmt.Errorf("%s: %w: file above %d bytes", path, ErrProject, maxConfigSize)
	}
	if err != nil {
		return "", err
	}
	var cfg struct {
		ArtifactType string `json:"artifact_type"`
		TypeName     string `json:"typeName"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return "", fmt.Errorf("%s: %w: not valid JSON: %v", path, ErrProject, err)
	}
	if cfg.ArtifactType != "" && cfg.ArtifactType != "MODULE" {
		return "", fmt.Errorf("%s: %w: artifact_type is %q, not MODULE; this is not a module project", path, ErrProject, cfg.ArtifactType)
	}
	if cfg.TypeName == "" {
		return "", fmt.Errorf("%s: %w: no typeName; add \"typeName\": \"Org::Service::Name::MODULE\"", path, ErrProject)
	}
	if err := CheckTypeName(cfg.TypeName); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return cfg.TypeName, nil
}

// fragmentFile finds the one template file under dir, as cfn does: every
// .json, .yaml, .yml or .template file at any depth counts.
func fragmentFile(dir string) (string, error) {
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && isFragmentFile(d.Name()) {
			found = append(found, p)
			if len(found) > maxFragmentFiles {
				return fmt.Errorf("%w: more than %d files under %s", ErrProject, maxFragmentFiles, dir)
			}
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s does not exist; a module project keeps its template in fragments/", ErrProject, dir)
	}
	if err != nil {
		return "", err
	}
	sort.Strings(found)
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: no module fragment files found in %s ending in one of %s", ErrProject, dir, strings.Join(fragmentExts, ", "))
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%w: a module can only consist of a single template file, but there are %d in %s: %s; keep one",
		ErrProject, len(found), dir, strings.Join(found, ", "))
}

// Validate checks the fragment and, for a project whose type name is known,
// the type name and the nesting of the modules visible next to it.
func (m *Module) Validate(limits Limits) error {
	if err := m.Fragment.Validate(limits); err != nil {
		return err
	}
	return m.CheckNesting()
}

// CheckNesting follows the ::MODULE types the fragment uses through the
// module projects next to this one (the other folders of its parent that
// hold a .rpdk-config) and reports a circular dependency or nesting deeper
// than MaxNesting. Modules not visible locally are not followed.
func (m *Module) CheckNesting() error {
	if m.TypeName == "" {
		return nil
	}
	graph := map[string][]string{m.TypeName: m.Fragment.ModuleTypes()}
	if m.Dir != "" {
		parent := filepath.Dir(filepath.Clean(m.Dir))
		entries, err := os.ReadDir(parent)
		if err == nil {
			n := 0
			for _, e := range entries {
				if !e.IsDir() || n >= maxSiblings {
					continue
				}
				dir := filepath.Join(parent, e.Name())
				if same(dir, m.Dir) {
					continue
				}
				n++
				sib, err := Load(dir, DefaultLimits())
				if err != nil || sib.TypeName == "" {
					continue // not a readable module project: not visible
				}
				if _, dup := graph[sib.TypeName]; !dup {
					graph[sib.TypeName] = sib.Fragment.ModuleTypes()
				}
			}
		}
	}
	chain := []string{m.TypeName}
	if err := follow(graph, chain); err != nil {
		return &ValidationError{File: m.Fragment.File, Problems: []Problem{{Message: err.Error()}}}
	}
	return nil
}

func same(a, b string) bool {
	ai, err1 := os.Stat(a)
	bi, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(ai, bi)
}

// follow walks the module graph depth first from the last type in chain.
func follow(graph map[string][]string, chain []string) error {
	cur := chain[len(chain)-1]
	for _, child := range graph[cur] {
		for i, t := range chain {
			if t == child {
				cycle := append(append([]string{}, chain[i:]...), child)
				return fmt.Errorf("circular module dependency: %s; a module cannot contain itself", strings.Join(cycle, " -> "))
			}
		}
		next := append(append([]string{}, chain...), child)
		if len(next) > MaxNesting {
			return fmt.Errorf("modules nest %d levels deep (%s); at most %d are allowed", len(next), strings.Join(next, " -> "), MaxNesting)
		}
		if err := follow(graph, next); err != nil {
			return err
		}
	}
	return nil
}
