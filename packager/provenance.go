package packager

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/provenance"
)

// addProvenance sets the plan's provenance (package provenance): the
// writer's trailer, whose subject is the content digest of every other
// entry, taken as they are written. project is the project's source file.
func (p *Plan) addProvenance(opts BuildOptions, project string, deps []provenance.Resource) error {
	rel := filepath.Base(project)
	if abs, err := filepath.Abs(project); err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			if dir, err := filepath.EvalSymlinks(p.root.Name()); err == nil {
				if r, err := filepath.Rel(dir, real); err == nil && !strings.HasPrefix(r, "..") {
					rel = filepath.ToSlash(r)
				}
			}
		}
	}
	deps = append(deps, imageDependencies(p)...)
	p.statement = provenance.New(context.Background(), provenance.Inputs{
		Project:      rel,
		Dir:          p.Dir,
		Environment:  opts.Environment,
		Target:       targets(p),
		Dependencies: deps,
	}, opts.Provenance)
	return p.writer.SetTrailer(provenance.EntryName, func(sums map[string][sha256.Size]byte) ([]byte, error) {
		d, err := provenance.ContentDigest(sums)
		if err != nil {
			return nil, err
		}
		p.statement.Seal(d)
		return p.statement.Marshal()
	})
}

// Provenance is the statement the plan writes as provenance.EntryName;
// its subject is set once the assembly is written.
func (p *Plan) Provenance() *provenance.Statement { return p.statement }

// fileDependencies are the files the packaging read (templates, modules,
// blueprints, included files), by path relative to the project folder,
// with their SHA-256: the module and blueprint sources, at the version
// that was read.
func (p *Plan) fileDependencies() []provenance.Resource {
	root, err := filepath.EvalSymlinks(p.root.Name())
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []provenance.Resource
	for _, f := range p.read {
		abs, err := filepath.Abs(f)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		if seen[abs] {
			continue
		}
		seen[abs] = true
		data, err := limitio.ReadFile(abs, 1<<30)
		if err != nil {
			continue
		}
		name := abs
		if r, err := filepath.Rel(root, abs); err == nil && !strings.HasPrefix(r, "..") {
			name = filepath.ToSlash(r)
		}
		sum := sha256.Sum256(data)
		out = append(out, provenance.Resource{Name: name, Digest: map[string]string{"sha256": hex.EncodeToString(sum[:])}})
	}
	return out
}

// imageRefRE is a container image reference pinned by digest.
var imageRefRE = regexp.MustCompile(`^([a-z0-9][a-z0-9.:_/-]*[a-z0-9])@sha256:([0-9a-f]{64})$`)

// imageDependencies are the container images the manifest names by
// digest (NAME@sha256:HEX in any droplet property).
func imageDependencies(p *Plan) []provenance.Resource {
	var out []provenance.Resource
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if m := imageRefRE.FindStringSubmatch(v); m != nil && !seen[v] {
				seen[v] = true
				out = append(out, provenance.Resource{Name: m[1], URI: "oci://" + v, Digest: map[string]string{"sha256": m[2]}})
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	for _, id := range p.Manifest.IDs() {
		walk(p.Manifest.Droplets[id].Properties)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return out
}

// cdkDependencies are the versions a cdk.out records: its cloud assembly
// schema (manifest.json "version") and the construct library of its
// tree (tree.json's root constructInfo), as package URLs.
func cdkDependencies(dir string) []provenance.Resource {
	var out []provenance.Resource
	var m struct {
		Version string `json:"version"`
	}
	if data, err := limitio.ReadFile(filepath.Join(dir, "manifest.json"), 64<<20); err == nil && json.Unmarshal(data, &m) == nil && m.Version != "" {
		out = append(out, provenance.Resource{Name: "@aws-cdk/cloud-assembly-schema", URI: "pkg:npm/%40aws-cdk/cloud-assembly-schema@" + m.Version})
	}
	var tree struct {
		Tree struct {
			ConstructInfo struct {
				FQN     string `json:"fqn"`
				Version string `json:"version"`
			} `json:"constructInfo"`
		} `json:"tree"`
	}
	if data, err := limitio.ReadFile(filepath.Join(dir, "tree.json"), 64<<20); err == nil && json.Unmarshal(data, &tree) == nil {
		ci := tree.Tree.ConstructInfo
		if lib, _, ok := strings.Cut(ci.FQN, "."); ok && ci.Version != "" && lib != "" {
			out = append(out, provenance.Resource{Name: lib, URI: "pkg:npm/" + strings.ReplaceAll(lib, "@", "%40") + "@" + ci.Version})
		}
	}
	return out
}

// targets is the provenance's externalParameters.target: the distinct
// environments the droplets deploy to, sorted, comma-separated. (Not the
// output's name: the same project built to two names is the same bytes.)
func targets(p *Plan) string {
	seen := map[string]bool{}
	var envs []string
	for _, id := range p.Manifest.IDs() {
		if e := p.Manifest.Droplets[id].Environment; e != "" && !seen[e] {
			seen[e] = true
			envs = append(envs, e)
		}
	}
	sort.Strings(envs)
	return strings.Join(envs, ",")
}
