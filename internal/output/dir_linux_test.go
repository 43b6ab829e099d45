package output

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// An existing empty folder may be a mount point (a container's volume,
// `docker run -v $PWD/out:/out`), which cannot be removed or replaced, and
// whose parent may not be writable: the files are written inside it, and
// moved into place on Commit. Needs the right to mount a tmpfs (root);
// skips otherwise.
func TestDirIntoMountPoint(t *testing.T) {
	mnt := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs to stand for a volume (%v): run as root", err)
	}
	defer syscall.Unmount(mnt, syscall.MNT_DETACH)
	d, err := CreateDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.MkdirAll("a"); err != nil {
		t.Fatal(err)
	}
	if err := d.Root().WriteFile(filepath.Join("a", "x.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(); err != nil {
		t.Fatalf("Commit into an empty mount point: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "a", "x.txt")); err != nil || string(b) != "x" {
		t.Fatalf("a/x.txt: %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(mnt); len(ents) != 1 {
		t.Errorf("the folder holds %v, want only a/", ents)
	}
}
