package packager

import (
	"fmt"
	"strings"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/errcode"
)

// Sentinel errors of the build.
var (
	// ErrProject: assembly.yaml (or the project folder) is invalid.
	ErrProject = errcode.New("invalid_project", "invalid project",
		"fix assembly.yaml at the line and column shown (its YAML, or the key named; see Projects in the README)")
	// ErrOutsideProject: a path leaves the project folder ("..", an
	// absolute path, or a symlink pointing outside). It matches
	// assembly.ErrInsecurePath too: such a path could not name a file
	// inside the assembly either.
	ErrOutsideProject error = &classError{"path outside the project", assembly.ErrPathUnsafe}
	// ErrMissing: with Strict, something the assembly needs has no value.
	ErrMissing = errcode.New("missing", "missing information",
		"give the value (properties.parameters in assembly.yaml, or a Default), or build without BuildOptions.Strict: the assembly then lists it under missing for the deployer")
	// ErrOption: a PackageOptions field holds a value PackageTemplate
	// does not take (a Format other than yaml or json); the error is an
	// *errcode.FieldError naming the field.
	ErrOption = errcode.New("package_option", "invalid package option",
		"write the packaged template as yaml or json, or leave the format empty to keep the input's")
	// ErrChanged: a project file was replaced (for instance by a symbolic
	// link) between the check and the write; nothing was written.
	ErrChanged = errcode.New("project_changed", "project file changed during the build",
		"a file changed while the project was built: build again once nothing else writes it")
)

// classError is a sentinel that also matches a sentinel of package assembly.
type classError struct {
	msg    string
	parent error
}

func (e *classError) Error() string { return e.msg }
func (e *classError) Unwrap() error { return e.parent }

// also returns err, matching sentinel too (a class of package assembly that
// names the same problem as the project error: a missing file, an unknown
// key).
func also(err, sentinel error) error { return &alsoError{err, sentinel} }

type alsoError struct{ err, also error }

func (e *alsoError) Error() string   { return e.err.Error() }
func (e *alsoError) Unwrap() []error { return []error{e.err, e.also} }

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
