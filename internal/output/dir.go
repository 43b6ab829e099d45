package output

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Sentinels of folder outputs.
var (
	// ErrNotEmpty: a folder output exists and holds something.
	ErrNotEmpty = errors.New("output: folder not empty")
	// ErrNotFolder: a folder output names a file.
	ErrNotFolder = errors.New("output: not a folder")
)

// DirPerm is the permission (before the umask) of every folder a Dir
// creates, its top folder included, so that all come out alike.
const DirPerm fs.FileMode = 0o755

// A Dir is a folder being written: files go to a temporary folder beside
// the target, renamed into place on Commit, so that on any failure
// nothing is written. Like a File's, the temporary folder is locked while
// its writer lives; RemoveStale collects it once its writer died.
type Dir struct {
	name   string
	target string   // the folder Commit creates or replaces
	tmp    string   // the temporary folder
	lock   *os.File // tmp, open and locked
	root   *os.Root // tmp, for writes that cannot leave it
	done   bool
}

// CreateDir starts writing the folder name, which must not exist or be an
// empty folder (ErrNotEmpty). A symbolic link to a folder is followed and
// kept.
func CreateDir(name string) (*Dir, error) {
	if name == "" || name == "-" {
		return nil, fmt.Errorf("output: %q is not a folder name", name)
	}
	target, err := resolveDir(name)
	if err != nil {
		return nil, err
	}
	RemoveStale(target)
	for try := 0; try < 100; try++ {
		tmp := tempName(target)
		if err := os.Mkdir(tmp, DirPerm); errors.Is(err, fs.ErrExist) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("write %s: %w", name, err)
		}
		lf, err := os.Open(tmp)
		if err != nil {
			os.Remove(tmp)
			return nil, err
		}
		if ok, err := tryLock(lf); err != nil || !ok || !sameAs(lf, tmp) {
			lf.Close()
			continue
		}
		root, err := os.OpenRoot(tmp)
		if err != nil {
			lf.Close()
			os.Remove(tmp)
			return nil, err
		}
		return &Dir{name: name, target: target, tmp: tmp, lock: lf, root: root}, nil
	}
	return nil, fmt.Errorf("write %s: cannot create a temporary folder beside it", name)
}

// resolveDir follows name's links to the folder to create or replace.
func resolveDir(name string) (string, error) {
	c, err := follow(name)
	switch {
	case err != nil:
		return "", err
	case c.fi == nil && c.hops > 0:
		return "", refuse(name, ErrDangling, "%s is a symbolic link to %s, which does not exist: create that folder, or remove the link", name, c.path)
	case c.fi == nil:
		return c.path, nil
	case !c.fi.IsDir():
		return "", refuse(name, ErrNotFolder, "%s is a file, not a folder: name a new or empty folder", name)
	}
	ents, err := os.ReadDir(c.path)
	if err != nil {
		return "", err
	}
	if len(ents) > 0 {
		return "", refuse(name, ErrNotEmpty, "%s is not empty: name a new or empty folder", name)
	}
	return c.path, nil
}

// Root returns the temporary folder as an os.Root: names cannot leave it,
// by ".." or by a symbolic link.
func (d *Dir) Root() *os.Root { return d.root }

// Target returns the folder Commit creates or replaces.
func (d *Dir) Target() string { return d.target }

// MkdirAll creates the folder name (slash-separated, relative) and its
// parents inside the temporary folder, with DirPerm.
func (d *Dir) MkdirAll(name string) error {
	return d.root.MkdirAll(filepath.FromSlash(name), DirPerm)
}

// Commit renames the temporary folder to the target (replacing it when it
// is an empty folder).
func (d *Dir) Commit() (err error) {
	if d.done {
		return fs.ErrClosed
	}
	d.done = true
	defer func() {
		d.root.Close()
		d.lock.Close()
		if err != nil {
			os.RemoveAll(d.tmp)
			if _, refused := err.(*Error); !refused {
				err = fmt.Errorf("write %s: %w", d.name, err)
			}
		}
	}()
	if st, err := os.Lstat(d.target); err == nil && st.IsDir() {
		// Empty when CreateDir looked; Remove fails if it is not now.
		if err := os.Remove(d.target); err != nil {
			if ents, rerr := os.ReadDir(d.target); rerr == nil && len(ents) > 0 {
				return refuse(d.name, ErrNotEmpty, "%s was filled by another program meanwhile", d.name)
			}
			return err
		}
	}
	return os.Rename(d.tmp, d.target)
}

// Close removes the temporary folder unless it was committed.
func (d *Dir) Close() error {
	if d.done {
		return nil
	}
	d.done = true
	d.root.Close()
	err := os.RemoveAll(d.tmp)
	d.lock.Close()
	return err
}
