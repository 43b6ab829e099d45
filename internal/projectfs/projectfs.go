// Package projectfs holds the one rule for reading a file that a project
// (a template, a schema, a module) names by a relative path: a regular file
// inside the folder it is named from, reached by no symbolic link that
// leaves that folder, and opened without blocking, so that a FIFO or a
// device is refused rather than waited on.
//
// The folder is an *os.Root: links that stay inside it are followed, links
// out of it (or swapped in after a check) are refused by the kernel-backed
// lookup, and the handle itself is checked to be a regular file.
package projectfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/limitio"
)

// Sentinel errors; Open and ReadFile wrap one of them, or fs.ErrNotExist,
// or a *limitio.TooLargeError, or the error of the read.
var (
	// ErrOutside: the path, or a link on the way, leads out of the folder.
	ErrOutside = errcode.New("outside_folder", "leads outside the folder",
		"keep the file inside the project folder (a link may not lead out of it)")
	// ErrNotRegular: the path names a folder, a FIFO, a device or a socket.
	ErrNotRegular = errcode.New("not_regular_file", "not a regular file",
		"name a regular file (not a FIFO, socket or device)")
)

// Open opens name, a relative path (slash or OS separators), under root
// for reading.
func Open(root *os.Root, name string) (*os.File, error) {
	rel := filepath.Clean(filepath.FromSlash(name))
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("%s: %w", name, ErrOutside)
	}
	f, err := root.OpenFile(rel, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
		case strings.Contains(err.Error(), "escapes"):
			return nil, fmt.Errorf("%s: %w (a symbolic link?)", name, ErrOutside)
		}
		return nil, err
	}
	return regular(f, name)
}

// OpenFile opens the file at path, anywhere, for reading: a regular file,
// opened without blocking (a FIFO or device is refused, not waited on). For
// files that no project folder bounds (a blueprint validated on its own).
func OpenFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	return regular(f, path)
}

// regular returns f if it is a regular file, else closes it and says
// what it is (name is how errors call it).
func regular(f *os.File, name string) (*os.File, error) {
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", name, ErrNotRegular, Kind(st.Mode()))
	}
	return f, nil
}

// ReadFile reads name under root, at most limit bytes (a longer file gives
// a *limitio.TooLargeError).
func ReadFile(root *os.Root, name string, limit int64) ([]byte, error) {
	f, err := Open(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return limitio.ReadAll(f, limit)
}

// Kind names a file type that is not a regular file ("a FIFO").
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}
