package cdk

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
)

// An OutFile is one file `assemble extract --cdk-out` writes: Name is the
// file's name in the archive, below ArchiveDir; Path its slash path below
// the cdk.out folder written; Executable is set for the files the manifest
// records as executable (the "executables" of a droplet whose folder lies
// in the cdk.out). OutFiles is a trust.ExtractOptions Layout.
type OutFile = assembly.Placement

// OutFiles lists what makes the cdk.out of an assembly built from one:
// every file below ArchiveDir, in archive order, with the executable bits
// the manifest records. names are the assembly's files and m its manifest,
// both verified. An assembly with no cdk.out/manifest.json is an error
// wrapping ErrNoCDKOut; an executables entry naming no file of the cdk.out
// one wrapping ErrCloudAssembly.
func OutFiles(m *assembly.Manifest, names []string) ([]OutFile, error) {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	index := map[string]int{}
	var out []OutFile
	for _, n := range sorted {
		if rel, ok := strings.CutPrefix(n, ArchiveDir+"/"); ok {
			index[n] = len(out)
			out = append(out, OutFile{Name: n, Path: rel})
		}
	}
	if _, ok := index[archiveName(manifestFile)]; !ok {
		return nil, fmt.Errorf("%w: the assembly holds no %s: it was not built from a CDK cloud assembly (assemble build CDK_OUT)", ErrNoCDKOut, archiveName(manifestFile))
	}
	for _, id := range m.IDs() {
		d := m.Droplets[id]
		list, ok := d.Properties["executables"]
		if !ok {
			continue
		}
		dir := folderProperty(d)
		if !strings.HasPrefix(dir, ArchiveDir+"/") {
			continue
		}
		items, ok := list.([]any)
		if !ok {
			return nil, fmt.Errorf("%w: droplet %s: executables: want a list of paths", ErrCloudAssembly, id)
		}
		for _, it := range items {
			s, ok := unescape(it)
			name := path.Join(dir, s)
			i, found := index[name]
			if !ok || !found || path.Clean(s) != s || strings.HasPrefix(s, "../") {
				return nil, fmt.Errorf("%w: droplet %s: executables: %v is not a file of %s", ErrCloudAssembly, id, it, dir)
			}
			out[i].Executable = true
		}
	}
	return out, nil
}

// folderProperty is the value of the droplet's folder path property, or "".
func folderProperty(d *assembly.Droplet) string {
	sp, err := droplets.ParseSpecifier(d.Type)
	if err != nil {
		return ""
	}
	kind, ok := droplets.Lookup(sp)
	if !ok {
		return ""
	}
	for _, p := range kind.Properties {
		if p.Path == droplets.PathDirectory {
			if s, ok := d.Properties[p.Name].(string); ok {
				return s
			}
		}
	}
	return ""
}

// unescape reads a property string written by literal: plain text, its
// "${" and "\\" escaped.
func unescape(v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		return "", false
	}
	parts, err := assembly.ParseString(s)
	if err != nil || len(parts) > 1 || len(parts) == 1 && parts[0].Ref != nil {
		return "", false
	}
	if len(parts) == 0 {
		return "", true
	}
	return parts[0].Literal, true
}
