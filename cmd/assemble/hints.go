package main

import (
	"errors"

	"github.com/cloud-assembly/assemble/assembly"
)

// overridingHints say more than any hint a command attaches to an error
// of their class: a truncated file is not an assembly to rebuild.
var overridingHints = []struct {
	err  error
	hint string
}{
	{assembly.ErrTruncated, "the file was cut short (an interrupted download or copy): download or copy it again"},
}

// hintOf is the hint report prints for err: an overriding hint of its
// class, else the one a command attached (withHint), else the hint of its
// code (codeHints).
func hintOf(err error, attached string) string {
	for _, h := range overridingHints {
		if errors.Is(err, h.err) {
			return h.hint
		}
	}
	if attached != "" {
		return attached
	}
	return codeHints[codeOf(err)]
}

// codeHints is the hint of each error code (errcodes.go), for errors no
// command attached a hint to.
var codeHints = map[string]string{
	codeUsage: "run 'assemble --help' for usage",
}
