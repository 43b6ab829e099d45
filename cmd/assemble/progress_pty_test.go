//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// On a terminal, progress is drawn in place (carriage return, clear to the
// end of the line) and erased at the end, without --progress; the summary
// still goes to standard output.
func TestProgressOnTerminal(t *testing.T) {
	ptm, pts := openPTY(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "proj"), 0o755)
	os.WriteFile(filepath.Join(dir, "proj", "template.yaml"), []byte("Resources:\n  B:\n    Type: AWS::S3::Bucket\n"), 0o644)
	var seen bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&seen, ptm); close(done) }()
	var stdout bytes.Buffer
	out := filepath.Join(dir, "app.cloud")
	code := run(context.Background(), []string{"assemble", "build", "--environment", "aws://123456789012/eu-west-1", "-o", out, filepath.Join(dir, "proj", "template.yaml")}, strings.NewReader(""), &stdout, pts)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	pts.Close()
	ptm.SetReadDeadline(time.Now().Add(2 * time.Second))
	<-done
	got := seen.String()
	if !strings.Contains(got, "\r\x1b[Kassemble: building "+out+": ") || !strings.Contains(got, "(100%)") {
		t.Errorf("terminal shows %q, want progress drawn in place up to 100%%", got)
	}
	if !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("progress line not erased at the end: %q", got)
	}
	if !strings.HasPrefix(stdout.String(), "built "+out) {
		t.Errorf("stdout %q", stdout.String())
	}
}

// build -o - and sign -o - write no ZIP to a terminal: a usage error,
// nothing written to it.
func TestBinaryNotToTerminal(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "template.yaml")
	os.WriteFile(tmpl, []byte("Resources:\n  B:\n    Type: AWS::S3::Bucket\n"), 0o644)
	app := filepath.Join(dir, "app.cloud")
	if code := run(context.Background(), []string{"assemble", "build", "--environment", "aws://123456789012/eu-west-1", "-o", app, tmpl}, strings.NewReader(""), io.Discard, io.Discard); code != 0 {
		t.Fatalf("build: exit %d", code)
	}
	key, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "keys", "ed25519.sec.asc"))
	for _, args := range [][]string{
		{"build", "--environment", "aws://123456789012/eu-west-1", "-o", "-", tmpl},
		{"sign", "--key", key, "-o", "-", app},
	} {
		ptm, pts := openPTY(t)
		var seen bytes.Buffer
		done := make(chan struct{})
		go func() { io.Copy(&seen, ptm); close(done) }()
		var stderr bytes.Buffer
		code := run(context.Background(), append([]string{"assemble"}, args...), strings.NewReader(""), pts, &stderr)
		pts.Close()
		ptm.SetReadDeadline(time.Now().Add(2 * time.Second))
		<-done
		if code != exitUsage || seen.Len() != 0 || !strings.Contains(stderr.String(), "standard output is a terminal") {
			t.Errorf("%v: exit %d, %d bytes on the terminal, stderr %q", args, code, seen.Len(), stderr.String())
		}
	}
}
