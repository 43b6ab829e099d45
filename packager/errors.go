package packager

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors of the build.
var (
	// ErrProject: assembly.yaml (or the project folder) is invalid.
	ErrProject = errors.New("packager: invalid project")
	// ErrOutsideProject: a path leaves the project folder ("..", an
	// absolute path, or a symlink pointing outside).
	ErrOutsideProject = errors.New("packager: path outside the project")
	// ErrMissing: with Strict, something the assembly needs has no value.
	ErrMissing = errors.New("packager: missing information")
	// ErrChanged: a project file was replaced (for instance by a symbolic
	// link) between the check and the write; nothing was written.
	ErrChanged = errors.New("packager: project file changed during the build")
)

// A ProjectError is a problem at a place in a project file: the file, the
// line and column when known, the droplet and the field. It wraps the cause
// (and through it the sentinel classes, such as assembly.ErrReference).
type ProjectError struct {
	File         string
	Line, Column int
	Droplet      string
	Field        string
	Err          error
}

func (e *ProjectError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
	}
	b.WriteString(": ")
	if e.Droplet != "" {
		fmt.Fprintf(&b, "droplet %s: ", e.Droplet)
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *ProjectError) Unwrap() error { return e.Err }
