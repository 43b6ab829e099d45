package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zip"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cloud-assembly/assemble/assembly"
)

// envfile VAR FILE sets the environment variable VAR to FILE's content
// (an armored key for $ASSEMBLE_SIGNING_KEY, say).
func envfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envfile VAR FILE")
	}
	ts.Setenv(args[0], ts.ReadFile(args[1]))
}

// mkcloud OUT DIR writes an unsigned assembly of the files under DIR with
// the library's writer (for scripts that run before a build is needed).
func mkcloud(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: mkcloud OUT DIR")
	}
	dir := ts.MkAbs(args[1])
	w := assembly.NewWriter(assembly.WriterOptions{})
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		return w.AddFile(filepath.ToSlash(rel), p)
	})
	ts.Check(err)
	ts.Check(w.WriteFile(context.Background(), ts.MkAbs(args[0])))
}

// tamper FILE ENTRY flips the first byte of ENTRY's content in the assembly
// FILE (same size, same signature.asc), rewriting the archive consistently
// so that only the signature can tell.
func tamper(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tamper FILE ENTRY")
	}
	path := ts.MkAbs(args[0])
	rc, err := zip.OpenReader(path)
	ts.Check(err)
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	found := false
	for _, f := range rc.File {
		if f.Name != args[1] {
			ts.Check(zw.Copy(f))
			continue
		}
		found = true
		r, err := f.Open()
		ts.Check(err)
		body, err := io.ReadAll(r)
		ts.Check(err)
		if len(body) == 0 {
			ts.Fatalf("tamper: %s is empty", args[1])
		}
		body[0] ^= 0x20
		w, err := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate})
		ts.Check(err)
		w.Write(body)
	}
	rc.Close()
	if !found {
		ts.Fatalf("tamper: no entry %q in %s (entries: %s)", args[1], args[0], strings.Join(names(rc), ", "))
	}
	ts.Check(zw.Close())
	ts.Check(os.WriteFile(path, out.Bytes(), 0o644))
}

func names(rc *zip.ReadCloser) []string {
	var n []string
	for _, f := range rc.File {
		n = append(n, f.Name)
	}
	return n
}
