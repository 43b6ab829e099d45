package cdk

import (
	"strings"

	"github.com/cloud-assembly/assemble/errcode"
)

// Sentinel errors. Every error Map, Find and OutFiles return wraps one.
var (
	// ErrCloudAssembly: a CDK manifest, asset manifest or metadata file is
	// malformed, or names something CDK would refuse.
	ErrCloudAssembly = errcode.New("invalid_cdk_out", "invalid cloud assembly",
		"synthesize again with a CDK version assemble reads ('cdk synth')")
	// ErrNotCopied: a file or folder the cloud assembly names is not in the
	// cdk.out folder (a partial copy, or assets deleted after synthesis).
	ErrNotCopied = errcode.New("cdk_file_missing", "file missing from the cdk.out folder",
		"synthesize again ('cdk synth'): the cdk.out is incomplete")
	// ErrOutside: a path leaves the cdk.out folder (an absolute path, "..",
	// or a symlink pointing out of it).
	ErrOutside = errcode.New("cdk_path_outside", "path outside the cdk.out folder",
		"keep assets inside cdk.out (leave asset staging on)")
	// ErrNotSynthesized: a CDK app folder (cdk.json) holds no cloud assembly.
	ErrNotSynthesized = errcode.New("cdk_not_synthesized", "no synthesized cloud assembly",
		"run 'cdk synth' first, then build the cdk.out it writes")
	// ErrNoCDKOut: an assembly holds no cdk.out to extract.
	ErrNoCDKOut = errcode.New("no_cdk_out", "no cdk.out in the assembly",
		"--cdk-out extracts an assembly built from a cdk.out; use -d DIR for this one")
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
