// Package output writes what a command produces, one way for every command
// and library writer:
//
//   - "-" is standard output.
//   - A path whose target is not a regular file (a pipe, a terminal, a
//     device, a /proc/self/fd descriptor) is written to directly.
//   - A regular file is replaced atomically: the content goes to a
//     temporary file beside it, renamed over it only on Commit, so nobody
//     ever sees it half-written and a failed write leaves it untouched.
//   - A symbolic link to a regular file is followed: its target is replaced
//     and the link kept. A link itself is never replaced, and a link to
//     nothing is refused.
//   - The output is never one of the files the command read (os.SameFile
//     over Options.Inputs), standard output redirected to one included.
//   - While it writes, a writer holds an advisory lock on the file it
//     replaces: a second writer waits (up to Options.Wait) or fails with
//     ErrLocked, and a writer that reads the file first (sign in place)
//     reads it only once the lock is its own.
//   - Each temporary file is locked by its owner. Temporary files whose lock
//     is free belong to a writer that died (kill -9, power loss); the next
//     writer of the same output removes them.
//
// Locks are flock(2) locks: advisory, released by the kernel when their
// owner exits. On systems without flock, files are still written
// atomically, unlocked, and leftovers are not collected.
package output

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/cloud-assembly/assemble/errcode"
)

// Sentinel errors; every error of this package that is not the file
// system's own wraps one of them.
var (
	// ErrInput: the output is a file the command read.
	ErrInput = errcode.New("output_is_input", "would overwrite an input",
		"name another output file with -o: this one is read by the command")
	// ErrFolder: the output names a folder (or a link to one).
	ErrFolder = errcode.New("output_is_folder", "is a folder",
		"name a file with -o, not a folder")
	// ErrDangling: the output is a symbolic link to a file that does not exist.
	ErrDangling = errcode.New("dangling_link", "symbolic link to nothing",
		"create the file the link points to, or remove the link")
	// ErrLocked: another writer held the output longer than Options.Wait.
	ErrLocked = errcode.New("output_locked", "locked by another writer",
		"another assemble writes this file now: wait for it, or write elsewhere")
	// ErrDirect: an output written as it goes (standard output, a pipe)
	// cannot be written out of order (File.WriteAt).
	ErrDirect = errcode.New("output_direct", "written in order only",
		"write to a file with -o FILE: standard output and pipes are written in order only")
)

// An Error is an output refused for one of the reasons above: Err is the
// sentinel (errors.Is works), Reason says it in words, with the fix.
type Error struct {
	Path   string // the output as named
	Err    error
	Reason string
}

func (e *Error) Error() string { return "write " + e.Path + ": " + e.Reason }
func (e *Error) Unwrap() error { return e.Err }

func refuse(path string, sentinel error, format string, args ...any) error {
	return &Error{Path: path, Err: sentinel, Reason: fmt.Sprintf(format, args...)}
}

// DefaultWait is how long Create waits for another writer's lock when
// Options.Wait is zero.
const DefaultWait = 10 * time.Minute

// maxLinks bounds the symbolic links followed from the name given.
const maxLinks = 40

// Options configures Create.
type Options struct {
	// Stdout receives the output when the name is "-" (default os.Stdout).
	Stdout io.Writer
	// Inputs are the files the command read (templates, modules, keys...).
	// Create refuses an output that is any of them (ErrInput). Names that
	// do not exist are ignored.
	Inputs []string
	// Perm is the permission of a new file, before the umask (default
	// 0644). A replaced file keeps its own permission.
	Perm fs.FileMode
	// Wait bounds the wait for another writer's lock: 0 means DefaultWait,
	// a negative value fails at once with ErrLocked.
	Wait time.Duration
	// Waiting, if set, is called once when Create has to wait for another
	// writer, with the path it waits for.
	Waiting func(path string)
	// Sync flushes the file to stable storage before it is renamed into
	// place.
	Sync bool
}

// A File is an output being written. Write to it, then Commit; Close
// discards whatever was not committed (call it in a defer).
type File struct {
	name   string      // as given
	target string      // the regular file that Commit replaces ("" when direct)
	w      io.Writer   // where Write goes
	f      *os.File    // the temporary file, or the file written directly
	lock   *os.File    // the replaced file, locked; nil if it did not exist
	perm   fs.FileMode // for the temporary file, when the target existed
	keep   bool        // perm is the target's: apply it exactly
	sync   bool
	done   bool
}

// Create opens the output name for writing, as the package doc describes.
// The context bounds the wait for another writer's lock.
func Create(ctx context.Context, name string, opts Options) (*File, error) {
	if name == "-" {
		w := opts.Stdout
		if w == nil {
			w = os.Stdout
		}
		if f, ok := w.(*os.File); ok {
			// Standard output redirected to a file (>> template.yaml).
			if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
				if err := refuseInput(name, st, opts.Inputs); err != nil {
					return nil, err
				}
			}
		}
		return &File{name: name, w: w}, nil
	}
	if name == "" {
		return nil, errors.New("empty file name")
	}
	if err := checkInputs(name, opts.Inputs); err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		target, direct, err := resolve(name)
		if err != nil {
			return nil, err
		}
		if direct {
			// A pipe, terminal or descriptor: appending is what writing to
			// it means (a /proc/self/fd link to a regular file opened by
			// the shell keeps what was written before, as the descriptor
			// would).
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return nil, err
			}
			return &File{name: name, w: f, f: f}, nil
		}
		out := &File{name: name, target: target, sync: opts.Sync, perm: opts.Perm}
		if out.perm == 0 {
			out.perm = 0o644
		}
		retry, err := out.lockTarget(ctx, opts)
		if err != nil {
			return nil, err
		}
		if retry && try < 100 {
			continue // the path was replaced while we waited: lock the new file
		}
		if err := out.createTemp(); err != nil {
			out.unlock()
			return nil, err
		}
		return out, nil
	}
}

// WriteFile writes data to name through Create and Commit.
func WriteFile(ctx context.Context, name string, data []byte, opts Options) error {
	f, err := Create(ctx, name, opts)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// Name returns the name given to Create.
func (f *File) Name() string { return f.name }

// Target returns the regular file that Commit replaces: the name given,
// or the final target of a symbolic link. It is "" when the output is
// written directly (standard output, a pipe, a device).
func (f *File) Target() string { return f.target }

// Direct reports whether the output is written as it goes (standard
// output, a pipe, a terminal, a device), not replaced on Commit.
func (f *File) Direct() bool { return f.target == "" }

// Write writes to the temporary file (or directly).
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, fs.ErrClosed
	}
	return f.w.Write(p)
}

// WriteAt writes p at off of the temporary file, for outputs written out
// of order (pull writes ranges as they arrive). A direct output cannot be
// written so (ErrDirect).
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	switch {
	case f.done:
		return 0, fs.ErrClosed
	case f.Direct() || f.f == nil:
		return 0, ErrDirect
	}
	return f.f.WriteAt(p, off)
}

// ReadFrom lets io.Copy from a file use the kernel's copy (copy_file_range).
func (f *File) ReadFrom(r io.Reader) (int64, error) {
	if f.done {
		return 0, fs.ErrClosed
	}
	if f.f != nil {
		return f.f.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{f.w}, r)
}

// Commit makes the output visible: the temporary file is renamed over the
// target. Direct outputs are closed (standard output is left open).
func (f *File) Commit() (err error) {
	if f.done {
		return fs.ErrClosed
	}
	f.done = true
	defer f.unlock()
	if f.Direct() {
		return f.closeDirect()
	}
	tmp := f.f.Name()
	defer func() {
		if err != nil {
			f.f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", f.name, err)
		}
	}()
	if f.keep {
		// The umask applied at creation: give the replaced file's mode back.
		if err := f.f.Chmod(f.perm); err != nil {
			return err
		}
	}
	if f.sync {
		if err := f.f.Sync(); err != nil {
			return err
		}
	}
	if runtime.GOOS == "windows" {
		// Windows renames no open file; there is no lock to keep either.
		if err := f.f.Close(); err != nil {
			return err
		}
		return os.Rename(tmp, f.target)
	}
	// Rename while the temporary file is still open and locked, so that
	// no other writer takes it for a leftover in between.
	if err := os.Rename(tmp, f.target); err != nil {
		return err
	}
	return f.f.Close()
}

// Close discards the output unless it was committed. It is safe to call
// more than once, and after Commit.
func (f *File) Close() error {
	if f.done {
		return nil
	}
	f.done = true
	defer f.unlock()
	if f.Direct() {
		return f.closeDirect() // what was written is out already
	}
	f.f.Close()
	return os.Remove(f.f.Name())
}

// closeDirect closes a file written directly; standard output stays open.
func (f *File) closeDirect() error {
	if f.f == nil {
		return nil
	}
	return f.f.Close()
}

func (f *File) unlock() {
	if f.lock != nil {
		f.lock.Close() // closing releases the flock
		f.lock = nil
	}
}

// checkInputs refuses an output that is one of the inputs.
func checkInputs(name string, inputs []string) error {
	out, err := os.Stat(name)
	if err != nil {
		return nil // nothing there yet (or resolve reports why)
	}
	return refuseInput(name, out, inputs)
}

// refuseInput refuses the output name, the file out, when it is one of
// the inputs.
func refuseInput(name string, out fs.FileInfo, inputs []string) error {
	for _, in := range inputs {
		if in == "" || in == "-" {
			continue
		}
		if st, err := os.Stat(in); err == nil && os.SameFile(out, st) {
			if name == "-" {
				return refuse(name, ErrInput, "standard output is %s, which this command reads: write the output elsewhere", relWD(in))
			}
			if samePath(in, name) {
				return refuse(name, ErrInput, "%s is a file this command reads: write the output elsewhere", name)
			}
			return refuse(name, ErrInput, "%s is %s, which this command reads: write the output elsewhere", name, relWD(in))
		}
	}
	return nil
}

// relWD names p relative to the working folder when it lies below it.
func relWD(p string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && filepath.IsLocal(rel) {
			return rel
		}
	}
	return p
}

// samePath reports whether a and b are one path (once made absolute),
// not two names of one file.
func samePath(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

// A chain is where name's symbolic links lead.
type chain struct {
	path string      // the first path that is not a link (or a /proc descriptor link)
	fi   fs.FileInfo // its Lstat; nil when nothing is there
	hops int         // links followed
	proc bool        // path is a /proc descriptor link, not followed
}

// follow walks name's symbolic links, one at a time, to the first path
// that is not a link. It stops at a link on procfs (/proc/self/fd/N),
// whose "target" is a descriptor such as "pipe:[123]", not a path.
func follow(name string) (chain, error) {
	p := name
	for hops := 0; ; hops++ {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return chain{path: p, hops: hops}, nil
		}
		if err != nil {
			return chain{}, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return chain{path: p, fi: fi, hops: hops}, nil
		}
		if hops >= maxLinks {
			return chain{}, fmt.Errorf("%s: too many levels of symbolic links", name)
		}
		if onProcfs(filepath.Dir(p)) {
			return chain{path: p, fi: fi, hops: hops, proc: true}, nil
		}
		t, err := os.Readlink(p)
		if err != nil {
			return chain{}, err
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = t
	}
}

// resolve follows name's symbolic links to the file a write must replace.
// direct reports an output that is not a regular file (or is reached
// through a /proc descriptor link), to be opened and written as it is.
func resolve(name string) (target string, direct bool, err error) {
	c, err := follow(name)
	switch {
	case err != nil:
		return "", false, err
	case c.proc:
		return c.path, true, nil
	case c.fi == nil && c.hops > 0:
		return "", false, refuse(name, ErrDangling, "%s is a symbolic link to %s, which does not exist: create that file, or remove the link", name, c.path)
	case c.fi == nil:
		return c.path, false, nil // a new file
	case c.fi.IsDir() && c.hops > 0:
		return "", false, refuse(name, ErrFolder, "%s links to the folder %s: name a file to write", name, c.path)
	case c.fi.IsDir():
		return "", false, refuse(name, ErrFolder, "%s is a folder: name a file to write", name)
	case c.fi.Mode().IsRegular():
		return c.path, false, nil
	}
	return c.path, true, nil // pipe, socket, device
}

// lockTarget takes the advisory lock on the existing target. retry says
// that the path now names another file than the one locked.
func (f *File) lockTarget(ctx context.Context, opts Options) (retry bool, err error) {
	lf, err := os.Open(f.target)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // a new file: nothing to lock, nothing to read
	}
	if err != nil {
		// Unreadable (write-only permission): write unlocked.
		return false, nil
	}
	st, err := lf.Stat()
	if err != nil || !st.Mode().IsRegular() {
		lf.Close()
		return true, nil
	}
	if err := waitLock(ctx, lf, f.target, opts); err != nil {
		lf.Close()
		return false, err
	}
	// The lock is ours; is the path still the file we locked? A writer
	// that held it may have renamed a new file into place meanwhile.
	now, err := os.Stat(f.target)
	if err != nil || !os.SameFile(st, now) {
		lf.Close()
		return true, nil
	}
	f.lock = lf
	f.perm, f.keep = st.Mode().Perm(), true
	return false, nil
}

// waitLock takes an exclusive lock on f, waiting as opts says.
func waitLock(ctx context.Context, f *os.File, name string, opts Options) error {
	ok, err := tryLock(f)
	if err != nil || ok {
		return err
	}
	wait := opts.Wait
	if wait == 0 {
		wait = DefaultWait
	}
	if wait > 0 && opts.Waiting != nil {
		opts.Waiting(name)
	}
	deadline := time.Now().Add(wait)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if wait < 0 || time.Now().After(deadline) {
			return refuse(name, ErrLocked, "another process is writing %s: try again when it is done", name)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if ok, err := tryLock(f); err != nil || ok {
			return err
		}
	}
}

// tempPrefix and tempSuffix frame a temporary file's name: "." + the
// target's base name + "." + token + ".tmp".
const tempSuffix = ".tmp"

// tokenChars and tokenLen make the random part of a temporary name.
const (
	tokenChars = "abcdefghijklmnopqrstuvwxyz234567"
	tokenLen   = 12
)

func token() string {
	b := make([]byte, tokenLen)
	rand.Read(b)
	for i := range b {
		b[i] = tokenChars[int(b[i])%len(tokenChars)]
	}
	return string(b)
}

// isToken reports whether s could be a token.
func isToken(s string) bool {
	if len(s) != tokenLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune(tokenChars, rune(s[i])) {
			return false
		}
	}
	return true
}

// tempName is the name of a temporary file or folder for target.
func tempName(target string) string {
	return filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+"."+token()+tempSuffix)
}

// createTemp creates and locks the temporary file beside the target,
// after removing the leftovers of dead writers.
func (f *File) createTemp() error {
	RemoveStale(f.target)
	for try := 0; try < 100; try++ {
		name := tempName(f.target)
		tf, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, f.perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return tempError(f.name, filepath.Dir(name), err)
		}
		if ok, err := tryLock(tf); err != nil || !ok || !sameAs(tf, name) {
			// A collector took it for a leftover between the two calls.
			tf.Close()
			continue
		}
		f.f, f.w = tf, tf
		return nil
	}
	return fmt.Errorf("write %s: cannot create a temporary file beside it", f.name)
}

// A NoFolderError says that the folder an output goes to does not exist
// (nothing creates it: a typo should not make folders). It matches
// fs.ErrNotExist.
type NoFolderError struct {
	Name, Dir string
	Err       error
}

func (e *NoFolderError) Error() string {
	return fmt.Sprintf("write %s: the folder %s does not exist: %v", e.Name, e.Dir, e.Err)
}
func (e *NoFolderError) Unwrap() error { return e.Err }

// tempError says why no file could be created in dir for the output
// name, naming the folder rather than the temporary file.
func tempError(name, dir string, err error) error {
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return fmt.Errorf("write %s: %w", name, err)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &NoFolderError{Name: name, Dir: dir, Err: pe.Err}
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("write %s: no file may be created in %s: %w", name, dir, pe.Err)
	}
	return fmt.Errorf("write %s: creating a file in %s: %w", name, dir, pe.Err)
}

// sameAs reports whether name still names the open file f.
func sameAs(f *os.File, name string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(name)
	return err == nil && os.SameFile(a, b)
}

// RemoveStale removes the temporary files and folders that writers of
// target left when they died: those whose lock is free. It returns the
// names removed. Errors are ignored: collecting is best effort.
func RemoveStale(target string) []string {
	if !canLock {
		return nil
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	prefix := "." + base + "."
	for _, e := range ents {
		mid, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		if mid, ok = strings.CutSuffix(mid, tempSuffix); !ok || !isToken(mid) {
			continue
		}
		name := filepath.Join(dir, e.Name())
		if removeIfUnlocked(name) {
			removed = append(removed, name)
		}
	}
	return removed
}

// removeIfUnlocked removes name (a file or a folder) if nobody holds its
// lock, holding the lock while it does.
func removeIfUnlocked(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	if ok, err := tryLock(f); err != nil || !ok || !sameAs(f, name) {
		return false
	}
	st, err := f.Stat()
	if err != nil {
		return false
	}
	if st.IsDir() {
		rollBack(name) // a commit into its parent that died midway
		return os.RemoveAll(name) == nil
	}
	return os.Remove(name) == nil
}
