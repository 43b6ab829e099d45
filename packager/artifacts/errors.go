package artifacts

import (
	"errors"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/errcode"
)

// Sentinel errors. Every error of the package wraps one of them.
var (
	// ErrArtifact: a local artifact is missing, or not what the property
	// takes (a folder where one file is needed, a broken zip, ...).
	ErrArtifact = errors.New("invalid local artifact")
	// ErrOutsideProject: an artifact path leaves the project folder ("..",
	// an absolute path, a symbolic link out). It matches
	// assembly.ErrInsecurePath too.
	ErrOutsideProject error = &classError{"artifact outside the project", assembly.ErrInsecurePath}
	// ErrCycle: nested templates include each other.
	ErrCycle = errors.New("nested template cycle")
	// ErrTooLarge: an artifact exceeds a bound (MaxArtifactBytes,
	// MaxArtifactFiles, MaxTotalBytes), a zip bomb among them.
	ErrTooLarge = errors.New("artifact too large")
	// ErrChanged: a file changed between packaging and writing.
	ErrChanged = errors.New("artifact changed during the build")
	// ErrBucketName: an asset bucket's name is not an S3 bucket name
	// (CheckBucket). It matches ErrArtifact too.
	ErrBucketName = errcode.Sub(ErrArtifact, "bad_bucket_name", "not an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens)",
		"name the bucket as S3 does: 3 to 63 lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit")
)

type classError struct {
	msg    string
	parent error
}

func (e *classError) Error() string { return e.msg }
func (e *classError) Unwrap() error { return e.parent }

// Error is an error at the place in a template where an artifact is named.
type Error struct {
	At  Pos
	Err error
}

func (e *Error) Error() string { return e.At.String() + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }
