package cdk

import (
	"errors"
	"strings"
)

// Sentinel errors. Every error Map, Find and OutFiles return wraps one.
var (
	// ErrCloudAssembly: a CDK manifest, asset manifest or metadata file is
	// malformed, or names something CDK would refuse.
	ErrCloudAssembly = errors.New("invalid cloud assembly")
	// ErrNotCopied: a file or folder the cloud assembly names is not in the
	// cdk.out folder (a partial copy, or assets deleted after synthesis).
	ErrNotCopied = errors.New("file missing from the cdk.out folder")
	// ErrOutside: a path leaves the cdk.out folder (an absolute path, "..",
	// or a symlink pointing out of it).
	ErrOutside = errors.New("path outside the cdk.out folder")
	// ErrNotSynthesized: a CDK app folder (cdk.json) holds no cloud assembly.
	ErrNotSynthesized = errors.New("no synthesized cloud assembly")
	// ErrNoCDKOut: an assembly holds no cdk.out to extract.
	ErrNoCDKOut = errors.New("no cdk.out in the assembly")
)

// An Error is a problem in one file of the cdk.out (named by its archive
// path, "cdk.out/Stack1.assets.json") at a field path
// ("files.<id>.source.path"), or with the folder as a whole when File is
// empty.
type Error struct {
	File  string
	Field string
	Err   error
}

func (e *Error) Error() string {
	var parts []string
	if e.File != "" {
		parts = append(parts, e.File)
	}
	if e.Field != "" {
		parts = append(parts, e.Field)
	}
	parts = append(parts, e.Err.Error())
	return strings.Join(parts, ": ")
}

func (e *Error) Unwrap() error { return e.Err }
