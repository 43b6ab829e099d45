package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
)

// islink PATH: PATH is a symbolic link (with !, it is not one).
func isLink(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: islink PATH")
	}
	st, err := os.Lstat(ts.MkAbs(args[0]))
	ts.Check(err)
	if link := st.Mode()&fs.ModeSymlink != 0; link == neg {
		ts.Fatalf("%s: symbolic link is %v", args[0], link)
	}
}

// samemode PATH...: every PATH has the same permission bits.
func sameMode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: samemode PATH PATH...")
	}
	var first fs.FileMode
	for i, a := range args {
		st, err := os.Stat(ts.MkAbs(a))
		ts.Check(err)
		if i == 0 {
			first = st.Mode().Perm()
		} else if st.Mode().Perm() != first {
			ts.Fatalf("%s has mode %v, %s has %v", args[0], first, a, st.Mode().Perm())
		}
	}
}

// filedigest FILE sets $SHA256 to FILE's SHA-256 (hex) and $SIZE to its
// size, for scripts that check what build, sign and verify report.
func fileDigest(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: filedigest FILE")
	}
	b, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	sum := sha256.Sum256(b)
	ts.Setenv("SHA256", hex.EncodeToString(sum[:]))
	ts.Setenv("SIZE", strconv.Itoa(len(b)))
}
