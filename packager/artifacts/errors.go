package artifacts

import (
	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/errcode"
)

// Sentinel errors. Every error of the package wraps one of them.
var (
	// ErrArtifact: a local artifact is missing, or not what the property
	// takes (a folder where one file is needed, a broken zip, ...).
	ErrArtifact = errcode.New("invalid_artifact", "invalid local artifact",
		"fix the artifact's path or value at the place shown (a file or folder of the project, or an s3:// URL)")
	// ErrOutsideProject: an artifact path leaves the project folder ("..",
	// an absolute path, a symbolic link out). It matches
	// assembly.ErrInsecurePath too.
	ErrOutsideProject error = errcode.Sub(assembly.ErrInsecurePath, "artifact_outside_project", "artifact outside the project",
		"keep local artifacts (Lambda code, nested templates) inside the project folder (Options.Root): the folder that holds the template and its artifacts")
	// ErrCycle: nested templates include each other.
	ErrCycle = errcode.New("nested_template_cycle", "nested template cycle",
		"a nested stack includes itself through the chain shown: break the cycle")
	// ErrTooLarge: an artifact exceeds a bound (MaxArtifactBytes,
	// MaxArtifactFiles, MaxTotalBytes), a zip bomb among them.
	ErrTooLarge = errcode.New("artifact_too_large", "artifact too large",
		"the artifact is larger than assemble packages; upload it yourself and name it by its s3:// URL")
	// ErrChanged: a file changed between packaging and writing.
	ErrChanged = errcode.New("artifact_changed", "artifact changed during the build",
		"a file changed while it was packaged: build again once nothing else writes it")
	// ErrBucketName: an asset bucket's name is not an S3 bucket name
	// (CheckBucket). It matches ErrArtifact too.
	ErrBucketName = errcode.Sub(ErrArtifact, "bad_bucket_name", "not an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens)",
		"name the bucket as S3 does: 3 to 63 lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit")
)

// Error is an error at the place in a template where an artifact is named.
type Error struct {
	At  Pos
	Err error
}

func (e *Error) Error() string { return e.At.String() + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }
