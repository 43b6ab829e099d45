//go:build unix

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 23, item 7: a command whose context is cancelled (Ctrl-C) exits
// 130 with "interrupted", and --json says code "interrupted"; it said
// "context canceled", exit 1.
func TestInterruptCancelledContext(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr strings.Builder
	code := run(ctx, []string{"assemble", "build", "--json", "-o", filepath.Join(dir, "a.cloud"), filepath.Join("..", "..", "fixtures", "examples", "webapp")},
		strings.NewReader(""), &stdout, &stderr)
	if code != exitInterrupted || stderr.String() != "assemble: error: interrupted\n" || !strings.Contains(stdout.String(), `"code": "interrupted"`) {
		t.Errorf("exit %d, stderr %q, stdout %s; want 130, interrupted", code, stderr.String(), stdout.String())
	}
}

// A real SIGINT to a command blocked where it cannot watch its context
// (reading a FIFO nobody writes, as `--key /dev/stdin` on a terminal would
// wait): the process still exits 130, its own timer (interruptGrace)
// ending a command that does not stop by itself. The test sends the
// signal once the command has opened the FIFO (a writer's non-blocking
// open succeeds only when a reader has it open), not after a sleep.
func TestInterruptSignal(t *testing.T) {
	bin, err := exec.LookPath("assemble") // testscript.Main puts the test binary on PATH as assemble
	if err != nil {
		t.Skip("assemble is not on PATH:", err)
	}
	dir := t.TempDir()
	app := filepath.Join(dir, "app.cloud")
	var out strings.Builder
	if code := run(context.Background(), []string{"assemble", "build", "-q", "-o", app, filepath.Join("..", "..", "fixtures", "examples", "webapp")}, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("build: %d\n%s", code, out.String())
	}
	fifo := filepath.Join(dir, "key.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	cmd := exec.Command(bin, "sign", "--json", "--key", fifo, app)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	// Ready: the command has the FIFO open for reading. The writer is
	// kept open, writing nothing, so the command waits in its read.
	var w *os.File
	for w == nil {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		switch {
		case err == nil:
			w = f
		case !errors.Is(err, syscall.ENXIO):
			t.Fatal(err)
		}
		select {
		case <-exited:
			t.Fatalf("the command exited before reading the key: %s%s", stdout.String(), stderr.String())
		case <-time.After(10 * time.Millisecond): // poll again
		}
	}
	defer w.Close()
	cmd.Process.Signal(syscall.SIGINT)
	<-exited
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || stderr.String() != "assemble: error: interrupted\n" || !strings.Contains(stdout.String(), `"code": "interrupted"`) {
		t.Errorf("exit %d, stderr %q, stdout %s; want 130, interrupted", code, stderr.String(), stdout.String())
	}
}
