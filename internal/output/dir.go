package output

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloud-assembly/assemble/errcode"
)

// Sentinels of folder outputs.
var (
	// ErrNotEmpty: a folder output exists and holds something.
	ErrNotEmpty = errcode.New("folder_not_empty", "folder not empty",
		"name an empty folder (or one that does not exist yet)")
	// ErrNotFolder: a folder output names a file.
	ErrNotFolder = errcode.New("not_a_folder", "not a folder",
		"name a folder, not a file")
)

// DirPerm is the permission (before the umask) of every folder a Dir
// creates, its top folder included, so that all come out alike.
const DirPerm fs.FileMode = 0o755

// A Dir is a folder being written: files go to a temporary folder beside
// the target, renamed into place on Commit, so that on any failure
// nothing is written. When the target is an existing empty folder (which
// may be a mount point, or lie in a folder the writer may not change), the
// temporary folder is made inside it instead, and its entries are moved up
// on Commit. Like a File's, the temporary folder is locked while its
// writer lives; RemoveStale collects it once its writer died.
type Dir struct {
	name   string
	target string   // the folder Commit creates or fills
	tmp    string   // the temporary folder
	inside bool     // tmp lies inside target, an existing empty folder
	lock   *os.File // tmp, open and locked
	root   *os.Root // tmp, for writes that cannot leave it
	done   bool
}

// CreateDir starts writing the folder name, which must not exist or be an
// empty folder (ErrNotEmpty). A symbolic link to a folder is followed and
// kept.
func CreateDir(name string) (*Dir, error) {
	if name == "" || name == "-" {
		return nil, fmt.Errorf("%q is not a folder name", name)
	}
	target, exists, err := resolveDir(name)
	if err != nil {
		return nil, err
	}
	// The temporary folder's name: beside a new target; inside an
	// existing one, named as if beside target/<base>, so that RemoveStale
	// of that name collects what dead writers left there.
	near := target
	if exists {
		near = filepath.Join(target, filepath.Base(target))
	}
	RemoveStale(near)
	if exists {
		if err := checkEmpty(name, target); err != nil {
			return nil, err
		}
	}
	for try := 0; try < 100; try++ {
		tmp := tempName(near)
		if err := os.Mkdir(tmp, DirPerm); errors.Is(err, fs.ErrExist) {
			continue
		} else if err != nil {
			return nil, tempError(name, filepath.Dir(tmp), err)
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
		return &Dir{name: name, target: target, tmp: tmp, inside: exists, lock: lf, root: root}, nil
	}
	return nil, fmt.Errorf("write %s: cannot create a temporary folder for it", name)
}

// resolveDir follows name's links to the folder to create or fill, and
// says whether it exists (then it is a folder, which CreateDir checks is
// empty once dead writers' leftovers are collected).
func resolveDir(name string) (string, bool, error) {
	c, err := follow(name)
	switch {
	case err != nil:
		return "", false, err
	case c.fi == nil && c.hops > 0:
		return "", false, refuse(name, ErrDangling, "%s is a symbolic link to %s, which does not exist: create that folder, or remove the link", name, c.path)
	case c.fi == nil:
		return c.path, false, nil
	case !c.fi.IsDir():
		return "", false, refuse(name, ErrNotFolder, "%s is a file, not a folder: name a new or empty folder", name)
	}
	return c.path, true, nil
}

// checkEmpty refuses a folder that holds anything but except (a name).
func checkEmpty(name, dir string, except ...string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if len(except) == 0 || e.Name() != except[0] {
			return refuse(name, ErrNotEmpty, "%s is not empty: name a new or empty folder", name)
		}
	}
	return nil
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
	if d.inside {
		return d.moveUp()
	}
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

// journalName is the file, in a temporary folder inside its target, that
// lists the entries moveUp is moving into the target. No entry can have
// that name: ':' is a character entry names may not hold (Windows
// reserves it; assembly.CheckName refuses it).
const journalName = ":moving"

// testHookMoved, when set (by tests), is called after each entry moveUp
// moves, with the count so far.
var testHookMoved func(moved int)

// moveUp commits a Dir whose temporary folder lies inside the target: each
// of its entries is renamed into the target (on failure, those moved go
// back), then the target gets the mode the temporary folder was made with,
// as a folder Commit creates would, and the temporary folder is removed.
// The renames are many, so a writer killed among them (kill -9) would leave
// part of the tree in the target: first the names to move are written to a
// journal in the temporary folder, and the next writer of the target, which
// collects the dead writer's temporary folder (RemoveStale), removes from
// the target every journalled name that left it (rollBack). So the target
// holds the whole tree, or after any rerun nothing of a killed one.
func (d *Dir) moveUp() error {
	if err := checkEmpty(d.name, d.target, filepath.Base(d.tmp)); err != nil {
		return refuse(d.name, ErrNotEmpty, "%s was filled by another program meanwhile", d.name)
	}
	ents, err := os.ReadDir(d.tmp)
	if err != nil {
		return err
	}
	journal := filepath.Join(d.tmp, journalName)
	var list strings.Builder
	for _, e := range ents {
		list.WriteString(e.Name() + "\n")
	}
	if err := writeSynced(journal, []byte(list.String())); err != nil {
		return err
	}
	for i, e := range ents {
		if err := os.Rename(filepath.Join(d.tmp, e.Name()), filepath.Join(d.target, e.Name())); err != nil {
			for _, back := range ents[:i] {
				os.Rename(filepath.Join(d.target, back.Name()), filepath.Join(d.tmp, back.Name()))
			}
			return err
		}
		if testHookMoved != nil {
			testHookMoved(i + 1)
		}
	}
	if st, err := os.Stat(d.tmp); err == nil {
		// Best effort: a mount point may belong to someone else.
		os.Chmod(d.target, st.Mode().Perm())
	}
	if err := os.Remove(journal); err != nil {
		return err
	}
	return os.Remove(d.tmp)
}

// writeSynced writes a new file and syncs it.
func writeSynced(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// rollBack undoes the moves of a dead writer's commit into the folder
// that holds its temporary folder tmp (locked by the caller): each name
// its journal lists that is no longer in tmp was moved into that folder,
// and is removed from it.
func rollBack(tmp string) {
	data, err := os.ReadFile(filepath.Join(tmp, journalName))
	if err != nil {
		return
	}
	parent := filepath.Dir(tmp)
	for _, name := range strings.Split(string(data), "\n") {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\") {
			continue
		}
		if _, err := os.Lstat(filepath.Join(tmp, name)); err == nil {
			continue // not moved
		}
		os.RemoveAll(filepath.Join(parent, name))
	}
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
