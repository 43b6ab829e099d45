package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/klauspost/compress/zip"
	"github.com/rogpeppe/go-internal/testscript"
)

// addentry ARCHIVE NAME FILE: rewrite ARCHIVE with one more entry NAME
// holding FILE's content (e.g. a signature.asc, to make a "signed" assembly).
// An empty ARCHIVE counts as an archive with no entries.
func addEntry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: addentry ARCHIVE NAME FILE")
	}
	src := ts.MkAbs(args[0])
	data, err := os.ReadFile(ts.MkAbs(args[2]))
	ts.Check(err)
	out, err := os.Create(src + ".new")
	ts.Check(err)
	zw := zip.NewWriter(out)
	if st, err := os.Stat(src); err == nil && st.Size() > 0 {
		r, err := zip.OpenReader(src)
		ts.Check(err)
		defer r.Close()
		for _, f := range r.File {
			ts.Check(zw.Copy(f))
		}
	}
	w, err := zw.Create(args[1])
	ts.Check(err)
	_, err = w.Write(data)
	ts.Check(err)
	ts.Check(zw.Close())
	ts.Check(out.Close())
	ts.Check(os.Rename(src+".new", src))
}

// touchall DIR: set the modification time of everything under DIR to now
// plus two days (a rebuild must not notice).
func touchAll(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: touchall DIR")
	}
	later := time.Now().Add(48 * time.Hour)
	ts.Check(filepath.WalkDir(ts.MkAbs(args[0]), func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, later, later)
	}))
}
