//go:build unix

package output

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// killTree is what the killed writer and the rerun write: top-level files
// and folders, so that the commit into an existing folder renames several.
var killTree = []string{"a.txt", "b/c.txt", "d/e/f.txt", "g.txt", "h/i.txt"}

func writeTree(t testing.TB, d *Dir, tag string) {
	for _, name := range killTree {
		if dir := filepath.Dir(name); dir != "." {
			if err := d.MkdirAll(dir); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Root().WriteFile(name, []byte(tag+" "+name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Issue 19 item 13: extract into an existing empty folder (a mount point)
// killed with SIGKILL in the middle of its commit, after some entries were
// moved in: the next writer of the folder rolls the dead one's moves back,
// so the rerun finds the folder empty and writes the whole tree, with
// nothing of the killed run left. The writer is a real child process (this
// test binary), paused by a hook after two of the five entries moved.
func TestDirKilledMidCommit(t *testing.T) {
	if target := os.Getenv("OUTPUT_TEST_KILL_TARGET"); target != "" {
		d, err := CreateDir(target)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		writeTree(t, d, "killed")
		testHookMoved = func(n int) {
			if n == 2 {
				fmt.Println("paused")
				select {}
			}
		}
		d.Commit()
		fmt.Println("error: not paused")
		os.Exit(1)
	}
	if !canLock {
		t.Skip("no file locks here: dead writers cannot be told from live ones")
	}
	target := t.TempDir() // exists, empty
	cmd := exec.Command(os.Args[0], "-test.run=^TestDirKilledMidCommit$")
	cmd.Env = append(os.Environ(), "OUTPUT_TEST_KILL_TARGET="+target)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "paused" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child says %q", line)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()
	ents, _ := os.ReadDir(target)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	// What the dead writer left: two entries moved, and its temporary folder.
	if len(left) != 3 {
		t.Fatalf("the killed run left %q, want two entries and its temporary folder", left)
	}

	d, err := CreateDir(target)
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	defer d.Close()
	if ents, _ := os.ReadDir(target); len(ents) != 1 || ents[0].Name() != filepath.Base(d.tmp) {
		t.Fatalf("rerun: the folder holds %v besides nothing but the new temporary folder", ents)
	}
	writeTree(t, d, "rerun")
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	var got []string
	filepath.WalkDir(target, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(target, p)
			b, _ := os.ReadFile(p)
			if string(b) != "rerun "+rel {
				t.Errorf("%s holds %q", rel, b)
			}
			got = append(got, rel)
		}
		return nil
	})
	slices.Sort(got)
	if !slices.Equal(got, killTree) {
		t.Errorf("after the rerun: %q, want %q", got, killTree)
	}
}
