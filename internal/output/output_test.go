//go:build unix

package output

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

var ctx = context.Background()

func write(t *testing.T, name string, data string, opts Options) error {
	t.Helper()
	return WriteFile(ctx, name, []byte(data), opts)
}

func read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// leftovers lists the temporary files in dir.
func leftovers(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), tempSuffix) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestStdout(t *testing.T) {
	var buf bytes.Buffer
	f, err := Create(ctx, "-", Options{Stdout: &buf})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Direct() || f.Target() != "" {
		t.Errorf("- is not direct: target %q", f.Target())
	}
	io.WriteString(f, "hello")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "hello" {
		t.Errorf("stdout got %q", buf.String())
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("a file named - was created")
	}
}

func TestNewFileAtomic(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "app.cloud")
	f, err := Create(ctx, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "content")
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("output visible before Commit: %v", err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, out); got != "content" {
		t.Errorf("got %q", got)
	}
	st, _ := os.Stat(out)
	if want := fs.FileMode(0o644) &^ umask(t); st.Mode().Perm() != want {
		t.Errorf("mode %v, want %v", st.Mode().Perm(), want)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("left %v", l)
	}
}

func TestCloseDiscards(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "app.cloud")
	os.WriteFile(out, []byte("old"), 0o600)
	f, err := Create(ctx, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "half")
	f.Close()
	f.Close() // twice is fine
	if got := read(t, out); got != "old" {
		t.Errorf("failed write changed the file: %q", got)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("left %v", l)
	}
	if err := f.Commit(); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("Commit after Close: %v", err)
	}
}

func TestReplaceKeepsMode(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "app.cloud")
	os.WriteFile(out, []byte("old"), 0o600)
	os.Chmod(out, 0o640)
	if err := write(t, out, "new", Options{}); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(out)
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", st.Mode().Perm())
	}
}

// A link to a regular file: the target is replaced, the link kept.
func TestSymlinkKept(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	target := filepath.Join(dir, "real", "app.cloud")
	os.WriteFile(target, []byte("old"), 0o644)
	link1 := filepath.Join(dir, "link1")
	link2 := filepath.Join(dir, "link2")
	os.Symlink("real/app.cloud", link1) // relative
	os.Symlink(link1, link2)            // a chain
	f, err := Create(ctx, link2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Target() != target {
		t.Errorf("target %q, want %q", f.Target(), target)
	}
	io.WriteString(f, "new")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	for link, want := range map[string]string{link1: "real/app.cloud", link2: link1} {
		if got, err := os.Readlink(link); err != nil || got != want {
			t.Errorf("%s: link now %q (%v), want %q", link, got, err, want)
		}
	}
	if got := read(t, target); got != "new" {
		t.Errorf("target holds %q", got)
	}
	if l := leftovers(t, filepath.Join(dir, "real")); len(l) > 0 {
		t.Errorf("left %v", l)
	}
}

func TestDanglingSymlinkRefused(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	os.Symlink("nowhere", link)
	if err := write(t, link, "x", Options{}); !errors.Is(err, ErrDangling) {
		t.Fatalf("got %v, want ErrDangling", err)
	}
	if got, _ := os.Readlink(link); got != "nowhere" {
		t.Errorf("link changed to %q", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil {
		t.Error("the link's target was created")
	}
}

func TestFolderRefused(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	os.Symlink(".", link)
	for _, name := range []string{dir, link} {
		if err := write(t, name, "x", Options{}); !errors.Is(err, ErrFolder) {
			t.Errorf("%s: got %v, want ErrFolder", name, err)
		}
	}
}

// A FIFO is written directly and stays a FIFO.
func TestFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(fifo, link)
	for _, name := range []string{fifo, link} {
		got := make(chan string)
		go func() {
			r, err := os.Open(fifo)
			if err != nil {
				got <- err.Error()
				return
			}
			b, _ := io.ReadAll(r)
			r.Close()
			got <- string(b)
		}()
		f, err := Create(ctx, name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !f.Direct() {
			t.Errorf("%s: not written directly", name)
		}
		io.WriteString(f, "through the pipe")
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		if s := <-got; s != "through the pipe" {
			t.Errorf("%s: reader got %q", name, s)
		}
		st, _ := os.Lstat(fifo)
		if st.Mode()&fs.ModeNamedPipe == 0 {
			t.Fatalf("%s: the FIFO was replaced by %v", name, st.Mode())
		}
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("left %v", l)
	}
}

// /proc/self/fd/N is a descriptor, not a path: a pipe's is written
// directly, and so is a regular file's (appended, as the shell's
// descriptor would), whether named directly or through a link such as
// /dev/stdout. Nothing is replaced.
func TestProcDescriptor(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	dir := t.TempDir()
	t.Run("pipe", func(t *testing.T) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		link := filepath.Join(dir, "so")
		os.Symlink(fmt.Sprintf("/proc/self/fd/%d", w.Fd()), link)
		defer os.Remove(link)
		done := make(chan string)
		go func() { b, _ := io.ReadAll(r); done <- string(b) }()
		fdPath := fmt.Sprintf("/proc/self/fd/%d", w.Fd())
		for _, name := range []string{fdPath, link} {
			if err := write(t, name, name+";", Options{}); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
		if got, want := <-done, fdPath+";"+link+";"; got != want {
			t.Errorf("pipe got %q, want %q", got, want)
		}
		if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("the link was replaced: %v", err)
		}
	})
	t.Run("regular file", func(t *testing.T) {
		// As `assemble graph -o so > out.txt` with so -> /proc/self/fd/1.
		outTxt := filepath.Join(dir, "out.txt")
		fd, err := os.OpenFile(outTxt, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer fd.Close()
		before, _ := os.Stat(outTxt)
		link := filepath.Join(dir, "so")
		os.Symlink(fmt.Sprintf("/proc/self/fd/%d", fd.Fd()), link)
		io.WriteString(fd, "printed;")
		if err := write(t, link, "written", Options{}); err != nil {
			t.Fatal(err)
		}
		if got := read(t, outTxt); got != "printed;written" {
			t.Errorf("out.txt holds %q", got)
		}
		after, _ := os.Stat(outTxt)
		if !os.SameFile(before, after) {
			t.Error("out.txt was replaced, not written through the descriptor")
		}
		if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 {
			t.Error("the link was replaced")
		}
		if l := leftovers(t, dir); len(l) > 0 {
			t.Errorf("left %v", l)
		}
	})
}

// A folder that does not exist (or may not be written) is named, not the
// temporary file that could not be created in it.
func TestMissingFolder(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "nodir", "x.cloud")
	err := write(t, name, "out", Options{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v, want fs.ErrNotExist", err)
	}
	want := "write " + name + ": the folder " + filepath.Join(dir, "nodir") + " does not exist"
	if !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), tempSuffix) {
		t.Errorf("got %q, want %q...", err, want)
	}
	_, err = CreateDir(name)
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), tempSuffix) {
		t.Errorf("CreateDir: got %q, want %q...", err, want)
	}
}

func TestInputRefused(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "template.yaml")
	os.WriteFile(tmpl, []byte("in"), 0o644)
	hard := filepath.Join(dir, "hard.yaml")
	os.Link(tmpl, hard)
	soft := filepath.Join(dir, "soft.yaml")
	os.Symlink("template.yaml", soft)
	for _, name := range []string{tmpl, hard, soft, "./" + filepath.Base(tmpl)} {
		if strings.HasPrefix(name, "./") {
			wd, _ := os.Getwd()
			os.Chdir(dir)
			err := write(t, name, "out", Options{Inputs: []string{tmpl}})
			os.Chdir(wd)
			if !errors.Is(err, ErrInput) {
				t.Errorf("%s: got %v, want ErrInput", name, err)
			}
			continue
		}
		if err := write(t, name, "out", Options{Inputs: []string{"/does/not/exist", tmpl}}); !errors.Is(err, ErrInput) {
			t.Errorf("%s: got %v, want ErrInput", name, err)
		}
	}
	if got := read(t, tmpl); got != "in" {
		t.Errorf("input overwritten: %q", got)
	}
	// Another file is fine.
	if err := write(t, filepath.Join(dir, "out.yaml"), "out", Options{Inputs: []string{tmpl}}); err != nil {
		t.Error(err)
	}
	// "-" when standard output is an input (assemble package t.yaml -o -
	// >> t.yaml), as cat refuses "input file is output file".
	f, err := os.OpenFile(tmpl, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := write(t, "-", "out", Options{Stdout: f, Inputs: []string{hard}}); !errors.Is(err, ErrInput) {
		t.Errorf("- on an input: got %v, want ErrInput", err)
	}
	if got := read(t, tmpl); got != "in" {
		t.Errorf("input appended to: %q", got)
	}
	other, _ := os.Create(filepath.Join(dir, "other.yaml"))
	defer other.Close()
	if err := write(t, "-", "out", Options{Stdout: other, Inputs: []string{tmpl}}); err != nil {
		t.Errorf("- on another file: %v", err)
	}
}

// A second writer waits for the first, then locks the file the first
// wrote (not the one it replaced); with no wait it fails with ErrLocked.
func TestLockContention(t *testing.T) {
	if !canLock {
		t.Skip("no flock")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "app.cloud")
	os.WriteFile(out, []byte("v0"), 0o644)
	first, err := Create(ctx, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Create(ctx, out, Options{Wait: -1}); !errors.Is(err, ErrLocked) {
		t.Fatalf("no-wait writer: got %v, want ErrLocked", err)
	}
	if _, err := Create(ctx, out, Options{Wait: 50 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Fatalf("short-wait writer: got %v, want ErrLocked", err)
	}
	waited := make(chan string, 1)
	second := make(chan *File)
	go func() {
		f, err := Create(ctx, out, Options{Waiting: func(p string) { waited <- p }})
		if err != nil {
			t.Error(err)
		}
		second <- f
	}()
	if p := <-waited; p != out {
		t.Errorf("waiting for %q", p)
	}
	select {
	case <-second:
		t.Fatal("second writer did not wait")
	case <-time.After(100 * time.Millisecond):
	}
	io.WriteString(first, "v1")
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	f := <-second
	if f == nil {
		t.FailNow()
	}
	// It holds the lock on v1, the file now in place: a third writer
	// cannot get in.
	if _, err := Create(ctx, out, Options{Wait: -1}); !errors.Is(err, ErrLocked) {
		t.Errorf("third writer: got %v, want ErrLocked", err)
	}
	if got := read(t, out); got != "v1" {
		t.Errorf("second writer reads %q, want v1", got)
	}
	io.WriteString(f, "v2")
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, out); got != "v2" {
		t.Errorf("final %q", got)
	}
	// A cancelled context stops the wait.
	hold, _ := Create(ctx, out, Options{})
	defer hold.Close()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Create(cctx, out, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
}

// Leftovers whose lock is free are collected by the next writer; a live
// writer's temporary file is not.
func TestStaleTempRemoved(t *testing.T) {
	if !canLock {
		t.Skip("no flock")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "app.cloud")
	live, err := Create(ctx, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	stale := filepath.Join(dir, ".app.cloud.abcdefghijkl.tmp")
	os.WriteFile(stale, []byte("dead"), 0o600)
	staleDir := filepath.Join(dir, ".app.cloud.zzzzzzzzzzzz.tmp")
	os.MkdirAll(filepath.Join(staleDir, "sub"), 0o755)
	// Not ours: other names stay.
	others := []string{".app.cloud.1234.tmp", ".other.cloud.abcdefghijkl.tmp", ".app.cloud.abcdefghijkl.tmp.bak", "app.cloud.abcdefghijkl.tmp"}
	for _, o := range others {
		os.WriteFile(filepath.Join(dir, o), nil, 0o600)
	}
	removed := RemoveStale(out)
	if len(removed) != 2 {
		t.Errorf("removed %v, want the two stale ones", removed)
	}
	for _, gone := range []string{stale, staleDir} {
		if _, err := os.Lstat(gone); err == nil {
			t.Errorf("%s not removed", gone)
		}
	}
	for _, o := range others {
		if _, err := os.Lstat(filepath.Join(dir, o)); err != nil {
			t.Errorf("%s removed", o)
		}
	}
	if _, err := os.Stat(live.f.Name()); err != nil {
		t.Errorf("a live writer's temporary file was removed: %v", err)
	}
	io.WriteString(live, "ok")
	if err := live.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestHelperProcess is not a test: TestKilledWriter runs it in a child
// process that starts writing and is then killed.
func TestHelperProcess(t *testing.T) {
	out := os.Getenv("OUTPUT_HELPER_TARGET")
	if out == "" {
		t.Skip("helper process only")
	}
	f, err := Create(ctx, out, Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	io.WriteString(f, strings.Repeat("x", 1<<20))
	fmt.Println("writing", f.f.Name())
	time.Sleep(time.Minute)
	os.Exit(1)
}

// A writer killed with SIGKILL leaves its temporary file; the next writer
// of the same output removes it.
func TestKilledWriter(t *testing.T) {
	if !canLock || runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "app.cloud")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "OUTPUT_HELPER_TARGET="+out)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 4096)
	n, _ := stdout.Read(line)
	tmp, ok := strings.CutPrefix(strings.TrimSpace(string(line[:n])), "writing ")
	if !ok {
		cmd.Process.Kill()
		t.Fatalf("helper said %q", line[:n])
	}
	// While it lives, its file is not collected.
	if r := RemoveStale(out); len(r) > 0 {
		t.Errorf("collected a live writer's file: %v", r)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("the killed writer left nothing to collect: %v", err)
	}
	if err := write(t, out, "next", Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("leftover %s still there: %v", tmp, err)
	}
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("left %v", l)
	}
}

// The rules as a property: whatever chain of links leads to a regular file
// (or to where a new one goes), a write leaves every link as it was, the
// content at the end of the chain, and no temporary file.
func TestPropertyLinksKept(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		dir := t.TempDir()
		depth := rng.Intn(4)
		exists := rng.Intn(2) == 0 || depth > 0 // a link to nothing is refused
		final := filepath.Join(dir, fmt.Sprintf("f%d", i))
		if exists {
			os.WriteFile(final, []byte("old"), 0o600)
		}
		links := map[string]string{}
		name := final
		for d := 0; d < depth; d++ {
			l := filepath.Join(dir, fmt.Sprintf("l%d", d))
			text := name
			if rng.Intn(2) == 0 {
				text = filepath.Base(name)
			}
			os.Symlink(text, l)
			links[l] = text
			name = l
		}
		data := fmt.Sprintf("data %d", i)
		if err := write(t, name, data, Options{}); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		for l, text := range links {
			if got, err := os.Readlink(l); err != nil || got != text {
				t.Fatalf("case %d: link %s now %q (%v), want %q", i, l, got, err, text)
			}
		}
		if got := read(t, final); got != data {
			t.Fatalf("case %d: final holds %q", i, got)
		}
		if st, _ := os.Stat(final); exists && st.Mode().Perm() != 0o600 {
			t.Fatalf("case %d: mode %v not kept", i, st.Mode())
		}
		if l := leftovers(t, dir); len(l) > 0 {
			t.Fatalf("case %d: left %v", i, l)
		}
	}
}

func TestDir(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	d, err := CreateDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.MkdirAll("a/b"); err != nil {
		t.Fatal(err)
	}
	f, err := d.Root().Create(filepath.Join("a", "b", "c.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := os.Stat(out); err == nil {
		t.Fatal("visible before Commit")
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	want := DirPerm &^ umask(t)
	for _, p := range []string{out, filepath.Join(out, "a"), filepath.Join(out, "a", "b")} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v (every folder alike)", p, st.Mode().Perm(), want)
		}
	}
	if _, err := CreateDir(out); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("non-empty: got %v, want ErrNotEmpty", err)
	}
	// An empty folder is replaced; a failed write leaves nothing.
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o700)
	d, err = CreateDir(empty)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if l := leftovers(t, dir); len(l) > 0 {
		t.Errorf("left %v", l)
	}
	d, _ = CreateDir(empty)
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(empty); st.Mode().Perm() != want {
		t.Errorf("replaced folder: mode %v, want %v", st.Mode().Perm(), want)
	}
	// A link to an empty folder is followed and kept.
	os.Mkdir(filepath.Join(dir, "real"), 0o755)
	link := filepath.Join(dir, "link")
	os.Symlink("real", link)
	d, err = CreateDir(link)
	if err != nil {
		t.Fatal(err)
	}
	d.Root().WriteFile("x", nil, 0o644)
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 {
		t.Error("link replaced")
	}
	if _, err := os.Stat(filepath.Join(dir, "real", "x")); err != nil {
		t.Error(err)
	}
}

func umask(t *testing.T) fs.FileMode {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("umask unknown")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Umask:"); ok {
			var m uint32
			fmt.Sscanf(strings.TrimSpace(v), "%o", &m)
			return fs.FileMode(m)
		}
	}
	t.Skip("umask unknown")
	return 0
}

// Writing into an existing empty folder leaves nothing on failure, collects
// what a dead writer left inside it, and refuses a folder filled meanwhile.
func TestDirIntoEmptyFolder(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	os.Mkdir(out, 0o700)
	d, err := CreateDir(out)
	if err != nil {
		t.Fatal(err)
	}
	d.Root().WriteFile("x", []byte("x"), 0o644)
	d.Close()
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Fatalf("a closed write left %v", ents)
	}
	if l := leftovers(t, parent); len(l) > 0 {
		t.Fatalf("left %v", l)
	}
	// A dead writer's folder (its lock free) is collected, not "not empty".
	dead := tempName(filepath.Join(out, "out"))
	if err := os.Mkdir(dead, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dead, "half"), nil, 0o644)
	d, err = CreateDir(out)
	if err != nil {
		t.Fatalf("a dead writer's leftover made the folder count as full: %v", err)
	}
	if _, err := os.Stat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("leftover %s not collected", dead)
	}
	d.Root().WriteFile("y", []byte("y"), 0o644)
	os.WriteFile(filepath.Join(out, "intruder"), nil, 0o644)
	if err := d.Commit(); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("folder filled meanwhile: got %v, want ErrNotEmpty", err)
	}
	if _, err := os.Stat(filepath.Join(out, "y")); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a refused Commit wrote y")
	}
}
