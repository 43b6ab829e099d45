package main

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/output"
)

// hintOf is the hint report prints for err: the truncated file's (it says
// more than any a command attaches), else the one a command attached (withHint), else the hint of its
// code (codeHint).
func hintOf(err error, attached string) string {
	if errors.Is(err, assembly.ErrTruncated) {
		return errcode.HintOf(assembly.ErrTruncated)
	}
	if attached != "" {
		return attached
	}
	var nf *output.NoFolderError
	if errors.As(err, &nf) {
		return fmt.Sprintf("create the folder first (mkdir -p %s), or name another output with -o", nf.Dir)
	}
	return codeHint(codeOf(err))
}

// ownHints are the hints of the codes of no sentinel (errcodes.go).
var ownHints = map[string]string{
	codeUsage:      "run 'assemble --help' for usage",
	codeNotFound:   "check the path: the file or folder it names does not exist",
	codePermission: "check the file's permissions, or name a file you may read (or a folder you may write)",
}

// codeHint is the one hint the command prints for code: the command's
// own (ownHints), else the one that names the flag (flagHints), else its
// sentinel's (package errcode); "" for none.
func codeHint(code string) string {
	if h, ok := ownHints[code]; ok {
		return h
	}
	return sentinelHints()[code]
}

// sentinelHints maps each sentinel's code to the hint the command prints:
// flagHints' where it has one, else the library's.
var sentinelHints = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, e := range errcode.All() {
		m[e.Code()] = e.Hint()
	}
	for e, h := range flagHints {
		m[errcode.Of(e)] = h
	}
	return m
})
