package cfn

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cloud-assembly/assemble/packager/cfn/source"
)

// Sources finds the files a template names. It is the one place where a
// module Source (or an Fn::InsertFile path) is resolved: local files,
// package aliases and HTTPS all go through it.
type Sources interface {
	// Load reads what source names in the file from ("" for the template
	// being packaged, then source is its path), checked against hash
	// ("sha256:<hex>" or ""). file names the result: it is used for caching,
	// cycle detection, messages and source maps, and is passed back as from
	// for the sources inside it.
	Load(from, source, hash string) (file string, data []byte, err error)
	// AddPackage registers a Packages entry of the file from.
	AddPackage(from, alias, source, hash string) error
}

// resolverSources adapts a source.Resolver to Sources.
type resolverSources struct {
	r    *source.Resolver
	ctx  context.Context
	locs map[string]source.Location
}

// NewSources returns the Sources of a project folder: local files inside
// root, Packages zips and HTTPS URLs (package source), with opts' limits
// (nil for the defaults). The result is also an io.Closer: close it when
// done, it holds the project folder open.
func NewSources(ctx context.Context, root string, opts *source.Options) (Sources, error) {
	r, err := source.New(root, opts)
	if err != nil {
		return nil, err
	}
	return &resolverSources{r: r, ctx: ctx, locs: map[string]source.Location{}}, nil
}

func (s *resolverSources) from(from string) (source.Location, error) {
	if loc, ok := s.locs[from]; ok {
		return loc, nil
	}
	return s.r.FileLocation(from)
}

func (s *resolverSources) Load(from, src, hash string) (string, []byte, error) {
	if from == "" {
		loc, err := s.r.FileLocation(src)
		if err != nil {
			return "", nil, err
		}
		data, loc, err := s.r.Resolve(s.ctx, loc, filepath.Base(loc.Path), hash)
		if err != nil {
			return "", nil, err
		}
		s.locs[src] = loc
		return src, data, nil
	}
	fl, err := s.from(from)
	if err != nil {
		return "", nil, err
	}
	data, loc, err := s.r.Resolve(s.ctx, fl, src, hash)
	if err != nil {
		return "", nil, err
	}
	name := loc.String()
	if loc.Kind == source.File && fl.Kind == source.File {
		// Name it as the including file is named: relative stays relative.
		cand := filepath.Join(filepath.Dir(from), filepath.FromSlash(src))
		if abs, err := filepath.Abs(cand); err == nil && abs == loc.Path {
			name = cand
		}
	}
	if prev, ok := s.locs[name]; ok && prev != loc {
		name = loc.String()
	}
	s.locs[name] = loc
	return name, data, nil
}

// Close releases the project folder's handle.
func (s *resolverSources) Close() error { return s.r.Close() }

func (s *resolverSources) AddPackage(from, alias, src, hash string) error {
	fl, err := s.from(from)
	if err != nil {
		return err
	}
	return s.r.AddPackage(fl, alias, src, hash)
}

// sourceSentinel maps the source package's errors to ours.
func sourceSentinel(err error) error {
	switch {
	case errors.Is(err, source.ErrOutsideRoot), errors.Is(err, source.ErrOutsidePackage), errors.Is(err, ErrOutsideRoot):
		return ErrOutsideRoot
	case errors.Is(err, source.ErrTooLarge), errors.Is(err, ErrTooLarge):
		return ErrTooLarge
	case errors.Is(err, ErrSyntax):
		return ErrSyntax
	}
	return ErrInvalid
}

// wrapLoad turns a Sources error into an *Error at the place that named the
// source.
func wrapLoad(file string, line, col int, chain []Frame, err error) error {
	var ce *Error
	if errors.As(err, &ce) {
		return err
	}
	return &Error{File: file, Line: line, Col: col, Msg: err.Error(), Chain: chain, Err: sentinelError{sourceSentinel(err), err}}
}

// sentinelError makes an error match both our sentinel and the cause's.
type sentinelError struct {
	sentinel, cause error
}

func (e sentinelError) Error() string   { return e.cause.Error() }
func (e sentinelError) Unwrap() []error { return []error{e.sentinel, e.cause} }

var _ = fmt.Sprintf
