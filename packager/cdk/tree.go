package cdk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cloud-assembly/assemble/assembly"
)

// A file is one regular file of the cdk.out folder.
type file struct {
	real string // the file on disk, symlinks resolved
	exec bool   // any executable bit set
}

// A tree is what the cdk.out folder holds, walked once: every decision
// about a path the CDK manifests name is made against it, so what was
// checked is what is shipped.
type tree struct {
	dir   string           // the folder, as given (for messages)
	root  string           // real path of the folder
	files map[string]*file // by slash path below root
	dirs  map[string]bool  // every folder holding a file, at any depth
	empty []string         // folders holding no file at all, sorted
	execs []string         // files with an executable bit, sorted

	read   map[string]bool // JSON files read
	reread int64           // bytes of JSON files read again (see maxJSONReread)
}

// isEmpty reports whether rel is a folder holding no file.
func (t *tree) isEmpty(rel string) bool {
	i := sort.SearchStrings(t.empty, rel)
	return i < len(t.empty) && t.empty[i] == rel
}

// walk reads the folder at root (a real path). Symlinks are followed when
// they lead to a regular file inside root; any other symlink, and special
// files, are errors.
func walk(dir, root string) (*tree, error) {
	t := &tree{dir: dir, root: root, files: map[string]*file{}, dirs: map[string]bool{}, read: map[string]bool{}}
	var folders []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." {
				folders = append(folders, rel)
			}
			return nil
		}
		src := p
		if d.Type()&fs.ModeSymlink != 0 {
			if src, err = t.follow(rel, p); err != nil {
				return err
			}
		} else if !d.Type().IsRegular() {
			return &Error{File: t.name(rel), Err: fmt.Errorf("%w: not a regular file (%s): remove it from the cdk.out", ErrCloudAssembly, d.Type())}
		}
		st, err := os.Stat(src)
		if err != nil {
			return err
		}
		if len(t.files) >= assembly.MaxFiles {
			return fmt.Errorf("%w: the cdk.out holds more than %d files", assembly.ErrTooLarge, assembly.MaxFiles)
		}
		t.files[rel] = &file{real: src, exec: st.Mode()&0o111 != 0}
		if t.files[rel].exec {
			t.execs = append(t.execs, rel)
		}
		for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
			t.dirs[dir] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, f := range folders {
		if !t.dirs[f] {
			t.empty = append(t.empty, f)
		}
	}
	sort.Strings(t.empty)
	sort.Strings(t.execs)
	return t, nil
}

// follow resolves the symlink at p (rel below root) to a regular file
// inside root.
func (t *tree) follow(rel, p string) (string, error) {
	name := t.name(rel)
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", &Error{File: name, Err: fmt.Errorf("%w: a broken symlink: remove it, or synthesize again", ErrNotCopied)}
		}
		return "", &Error{File: name, Err: fmt.Errorf("%w: can not follow the symlink (a loop?)", ErrCloudAssembly)}
	}
	if r, err := filepath.Rel(t.root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", &Error{File: name, Err: fmt.Errorf("%w: a symlink to %s: copy the file into the cdk.out (CDK's followSymlinks: SymlinkFollowMode.ALWAYS)", ErrOutside, real)}
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", &Error{File: name, Err: fmt.Errorf("%w: a symlink to a folder or special file: copy the files instead (CDK's followSymlinks: SymlinkFollowMode.ALWAYS)", ErrCloudAssembly)}
	}
	return real, nil
}

// resolve turns a path a CDK file at base (a folder below root) names into
// its slash path below root. Absolute paths are refused: a cdk.out that
// names its files by absolute path deploys from wherever those lie, not from
// what was signed.
func (t *tree) resolve(base, p string) (string, error) {
	switch {
	case p == "":
		return "", fmt.Errorf("%w: empty path", ErrCloudAssembly)
	case filepath.IsAbs(p) || path.IsAbs(p) || filepath.VolumeName(p) != "":
		return "", fmt.Errorf("%w: %q is absolute (asset staging disabled?): synthesize with asset staging, so the cdk.out holds its assets", ErrOutside, p)
	case strings.Contains(p, `\`):
		return "", fmt.Errorf("%w: %q: a path with backslashes", ErrCloudAssembly, p)
	}
	rel := path.Join(base, p)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%w: %q leaves the cdk.out folder", ErrOutside, p)
	}
	if rel == "." {
		return "", fmt.Errorf("%w: %q names the cdk.out folder itself", ErrCloudAssembly, p)
	}
	return rel, nil
}

// name is how messages name rel: below the folder as given.
func (t *tree) name(rel string) string { return filepath.Join(t.dir, filepath.FromSlash(rel)) }

// ArchiveDir is the folder of the archive that holds the cdk.out.
const ArchiveDir = "cdk.out"

// archiveName is the archive path of rel, a slash path below the cdk.out.
func archiveName(rel string) string { return ArchiveDir + "/" + rel }
