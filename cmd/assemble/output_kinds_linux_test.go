//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Issue #12, defect 1, as a rule: every command that writes -o (build,
// sign, package, graph, module schema, attest) writes it the one way,
// whatever the path is: "-" is standard output; a link to a /proc/self/fd
// descriptor (here a pipe) and a FIFO are written to as they are; a link
// to a regular file replaces the file and stays a link; a link to nothing
// and a folder are refused, and nothing is created or replaced.
func TestOutputKinds(t *testing.T) {
	_, env := jsonFixture(t)
	commands := map[string][]string{
		"build":         {"build", "-o", "OUT", env["webapp"]},
		"sign":          {"sign", "--key", env["secret"], "-o", "OUT", env["unsigned"]},
		"package":       {"package", "-o", "OUT", env["template"]},
		"graph":         {"graph", "-o", "OUT", env["signed"]},
		"module schema": {"module", "schema", "--type-name", "Demo::S3::Bucket::MODULE", "-o", "OUT", env["fragment"]},
		"attest":        {"attest", "-o", "OUT", env["unsigned"]},
	}
	for name, args := range commands {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			runOut := func(out string) (int, string, string) {
				t.Helper()
				a := []string{"assemble"}
				for _, s := range args {
					if s == "OUT" {
						s = out
					}
					a = append(a, s)
				}
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), a, strings.NewReader(""), &stdout, &stderr)
				return code, stdout.String(), stderr.String()
			}
			isLink := func(p string) bool {
				fi, err := os.Lstat(p)
				return err == nil && fi.Mode()&os.ModeSymlink != 0
			}

			// "-": standard output.
			if code, stdout, stderr := runOut("-"); code != 0 || stdout == "" {
				t.Errorf("-: exit %d, %d bytes out\n%s", code, len(stdout), stderr)
			}
			if _, err := os.Stat("-"); err == nil {
				t.Errorf("-: a file named - was written")
			}

			// A link to /proc/self/fd/N, N a pipe.
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			got := make(chan []byte)
			go func() { b, _ := io.ReadAll(r); got <- b }()
			proc := filepath.Join(dir, "so")
			os.Symlink(fmt.Sprintf("/proc/self/fd/%d", w.Fd()), proc)
			code, _, stderr := runOut(proc)
			w.Close()
			if b := <-got; code != 0 || len(b) == 0 || !isLink(proc) {
				t.Errorf("link to a pipe descriptor: exit %d, %d bytes through it, still a link %v\n%s", code, len(b), isLink(proc), stderr)
			}
			r.Close()

			// A FIFO.
			fifo := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			go func() { b, _ := os.ReadFile(fifo); got <- b }()
			code, _, stderr = runOut(fifo)
			if b := <-got; code != 0 || len(b) == 0 {
				t.Errorf("fifo: exit %d, %d bytes through it\n%s", code, len(b), stderr)
			}
			if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				t.Errorf("fifo replaced: %v %v", fi, err)
			}

			// A link to a regular file: the file is replaced, the link kept.
			target := filepath.Join(dir, "target")
			os.WriteFile(target, []byte("old"), 0o644)
			link := filepath.Join(dir, "link")
			os.Symlink("target", link)
			code, _, stderr = runOut(link)
			if b, _ := os.ReadFile(target); code != 0 || !isLink(link) || len(b) == 0 || string(b) == "old" {
				t.Errorf("link to a file: exit %d, still a link %v, target %q\n%s", code, isLink(link), b, stderr)
			}

			// A link to nothing, a folder: refused, nothing made.
			dangling := filepath.Join(dir, "dangling")
			os.Symlink("nowhere", dangling)
			code, _, stderr = runOut(dangling)
			if _, err := os.Lstat(filepath.Join(dir, "nowhere")); code != 1 || !isLink(dangling) || err == nil || !strings.Contains(stderr, "which does not exist") {
				t.Errorf("dangling link: exit %d, still a link %v\n%s", code, isLink(dangling), stderr)
			}
			folder := filepath.Join(dir, "folder")
			os.Mkdir(folder, 0o755)
			code, _, stderr = runOut(folder)
			if ents, _ := os.ReadDir(folder); code != 1 || len(ents) != 0 || !strings.Contains(stderr, "is a folder") {
				t.Errorf("folder: exit %d, %d entries\n%s", code, len(ents), stderr)
			}
			// No temporary file is left beside any of them.
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".tmp") {
					t.Errorf("left %s", e.Name())
				}
			}
		})
	}
}
