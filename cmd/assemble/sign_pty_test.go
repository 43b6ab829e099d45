//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair with /dev/ptmx, or skips.
func openPTY(t *testing.T) (ptm, pts *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		ptm.Close()
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		ptm.Close()
		t.Skipf("ptsname: %v", err)
	}
	pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		ptm.Close()
		t.Skipf("open pts: %v", err)
	}
	t.Cleanup(func() { pts.Close(); ptm.Close() })
	return ptm, pts
}

// The real prompt on a terminal: the prompt text reaches the terminal, the
// typed passphrase is not echoed, and it decrypts the fixture key.
func TestReadPassphraseOnPTY(t *testing.T) {
	ptm, pts := openPTY(t)
	e := promptedKey(t, "passphrase.sec.asc")
	pass, err := os.ReadFile("../../fixtures/keys/passphrase.txt")
	if err != nil {
		t.Fatal(err)
	}
	pass = bytes.TrimRight(pass, "\r\n")

	var seen bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&seen, ptm); close(done) }()
	type result struct {
		p   []byte
		err error
	}
	res := make(chan result, 1)
	go func() {
		p, err := readPassphrase(pts, int(pts.Fd()), e)
		res <- result{p, err}
	}()
	// Type only once echo is off, as a person would after the prompt.
	deadline := time.Now().Add(5 * time.Second)
	for {
		tio, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatal(err)
		}
		if tio.Lflag&unix.ECHO == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("readPassphrase never turned echo off")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := ptm.Write(append(append([]byte{}, pass...), '\n')); err != nil {
		t.Fatal(err)
	}
	r := <-res
	got, err := r.p, r.err
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, pass) {
		t.Errorf("read %q, want %q", got, pass)
	}
	if err := e.DecryptPrivateKeys(got); err != nil {
		t.Errorf("the prompted passphrase does not decrypt the key: %v", err)
	}
	pts.Close()
	ptm.SetReadDeadline(time.Now().Add(2 * time.Second))
	<-done
	if !bytes.Contains(seen.Bytes(), []byte(passphrasePrompt(e))) {
		t.Errorf("terminal shows %q, want the prompt %q", seen.String(), passphrasePrompt(e))
	}
	if bytes.Contains(seen.Bytes(), pass) {
		t.Errorf("the passphrase was echoed: %q", seen.String())
	}
}
