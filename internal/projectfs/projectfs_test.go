package projectfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/cloud-assembly/assemble/internal/limitio"
)

func setup(t testing.TB) (*os.Root, string) {
	t.Helper()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.json"), []byte(`{"k": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "sub", "a.json"), []byte(`{"a": 1}`), 0o644))
	must(os.Symlink(filepath.Join("sub", "a.json"), filepath.Join(dir, "inside.json")))
	must(os.Symlink(filepath.Join(outside, "secret.json"), filepath.Join(dir, "out.json")))
	must(os.Symlink(outside, filepath.Join(dir, "outdir")))
	if runtime.GOOS != "windows" {
		must(syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o644))
	}
	root, err := os.OpenRoot(dir)
	must(err)
	t.Cleanup(func() { root.Close() })
	return root, dir
}

// Issue 19 item 12: the one project-path rule: regular files inside the
// folder, links inside followed, links out refused, a FIFO refused at once.
func TestReadFile(t *testing.T) {
	root, _ := setup(t)
	for _, name := range []string{"sub/a.json", "inside.json", "sub/../sub/a.json"} {
		if b, err := ReadFile(root, name, 1<<10); err != nil || string(b) != `{"a": 1}` {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
	cases := map[string]error{
		"out.json":           ErrOutside,
		"outdir/secret.json": ErrOutside,
		"../x.json":          ErrOutside,
		"/etc/passwd":        ErrOutside,
		"sub":                ErrNotRegular,
		"missing.json":       fs.ErrNotExist,
	}
	if runtime.GOOS != "windows" {
		cases["fifo.json"] = ErrNotRegular
	}
	for name, want := range cases {
		if _, err := ReadFile(root, name, 1<<10); !errors.Is(err, want) {
			t.Errorf("%s: got %v, want %v", name, err, want)
		}
	}
	var tl *limitio.TooLargeError
	if _, err := ReadFile(root, "sub/a.json", 3); !errors.As(err, &tl) {
		t.Errorf("limit: got %v", err)
	}
}

func TestOpenFile(t *testing.T) {
	_, dir := setup(t)
	f, err := OpenFile(filepath.Join(dir, "out.json")) // no folder rule here
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if runtime.GOOS != "windows" {
		if _, err := OpenFile(filepath.Join(dir, "fifo.json")); !errors.Is(err, ErrNotRegular) {
			t.Errorf("fifo: %v", err)
		}
	}
	if _, err := OpenFile(dir); !errors.Is(err, ErrNotRegular) {
		t.Errorf("folder: %v", err)
	}
}

// FuzzOpen: whatever the name, Open either refuses it or opens a regular
// file whose real path lies inside the folder (issue 19 item 12).
func FuzzOpen(f *testing.F) {
	for _, s := range []string{"sub/a.json", "inside.json", "out.json", "outdir/secret.json", "../x", "sub/../../x", "fifo.json", "sub", ".", "", "/etc/passwd", "sub//a.json", "./inside.json"} {
		f.Add(s)
	}
	root, dir := setup(f)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, name string) {
		file, err := Open(root, name)
		if err != nil {
			return
		}
		defer file.Close()
		st, err := file.Stat()
		if err != nil || !st.Mode().IsRegular() {
			t.Fatalf("%q: opened something not regular: %v", name, err)
		}
		if runtime.GOOS == "linux" {
			p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", file.Fd()))
			if err != nil {
				t.Fatal(err)
			}
			if rel, err := filepath.Rel(real, p); err != nil || !filepath.IsLocal(rel) {
				t.Fatalf("%q opened %s, outside %s", name, p, real)
			}
		}
	})
}
