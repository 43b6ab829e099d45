package cfn

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Loader reads the module that source names. from is the file (as a Loader
// returned it, or the top template's path) whose Modules section names it.
// file identifies the module: it is used for caching, cycle detection,
// messages and source maps, and is passed back as from for the module's own
// Modules section.
//
// It is the one place where a module Source is resolved; local files,
// package aliases and remote sources all go through it.
type Loader func(from, source string) (file string, data []byte, err error)

// LocalLoader resolves sources as paths relative to the file that names them
// and reads them from root only: a path that leaves root (by "..", an
// absolute path or a symbolic link) is refused with ErrOutsideRoot.
func LocalLoader(root string) (Loader, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("cfn: project folder: %w", err)
	}
	return func(from, source string) (string, []byte, error) {
		if strings.Contains(source, "://") || strings.HasPrefix(source, "$") {
			return "", nil, fmt.Errorf("%w: source %q: only local files are supported", ErrInvalid, source)
		}
		p := filepath.FromSlash(source)
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(from), p)
		}
		file := filepath.Clean(p)
		ap, err := filepath.Abs(file)
		if err != nil {
			return "", nil, err
		}
		rel, err := filepath.Rel(abs, ap)
		if err != nil || !filepath.IsLocal(rel) {
			return "", nil, fmt.Errorf("%w: %s leaves the project folder %s; move the module into it", ErrOutsideRoot, source, root)
		}
		f, err := r.Open(rel)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", nil, fmt.Errorf("%w: %s does not exist", ErrInvalid, file)
			}
			if strings.Contains(err.Error(), "escapes") {
				return "", nil, fmt.Errorf("%w: %s leads outside the project folder %s (symbolic link)", ErrOutsideRoot, source, root)
			}
			return "", nil, err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
		if err != nil {
			return "", nil, err
		}
		if len(data) > MaxFileBytes {
			return "", nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, file, MaxFileBytes)
		}
		return file, data, nil
	}, nil
}
