package source

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/projectfs"
	"github.com/klauspost/compress/zip"
)

// Sentinel errors; every error of this package wraps one of them.
var (
	ErrBadSource = errcode.New("bad_source", "invalid source",
		"a module Source is a path relative to the file that names it, an https:// URL or s3://bucket/key")
	ErrNotFound = errcode.New("source_not_found", "file not found",
		"check the module's Source (a path relative to the file that names it), or add the file")
	ErrOutsideRoot = errcode.New("source_outside_root", "path leaves the project folder",
		"keep module sources inside the project folder (or fetch them by https:// or s3:// with a Hash)")
	ErrOutsidePackage = errcode.New("outside_package", "path leaves its package",
		"a path in a package may not leave the package")
	ErrUnknownPackage = errcode.New("unknown_package", "unknown package alias",
		"declare the alias under Packages before writing $alias/path")
	ErrBadPackage = errcode.New("bad_package", "invalid package",
		"a package is a zip archive of modules: check its file or URL")
	ErrTooLarge = errcode.New("source_too_large", "file too large",
		"the module source is larger than assemble reads; split it")
	ErrBadHash = errcode.New("bad_hash", "invalid hash",
		"write the hash as Hash: sha256:<64 hex digits>")
	ErrHashMismatch = errcode.New("hash_mismatch", "hash mismatch",
		"the source changed since it was pinned: check it, then update Hash (sha256sum prints it)")
	ErrNoCredentials = errcode.New("no_credentials", "no AWS credentials",
		"set AWS credentials (AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY) and AWS_REGION")
	ErrUnsupportedScheme = errcode.New("unsupported_scheme", "unsupported URL scheme",
		"use a relative path, https:// or s3://")
	ErrFetch = errcode.New("fetch_failed", "download failed",
		"check the URL and the network (and credentials for s3://), then try again")
)

// Default limits; Options may lower or raise them.
const (
	DefaultTimeout         = 30 * time.Second
	DefaultMaxFileSize     = 8 << 20  // a template, module, inserted file or package entry
	DefaultMaxPackageSize  = 64 << 20 // a package zip
	DefaultMaxPackageFiles = 4096
	DefaultMaxDownloads    = 256 << 20 // all HTTPS downloads of one Resolver together
	maxRedirects           = 5
)

// Kind says where a Location's file lives.
type Kind uint8

const (
	// File is a file of the project folder.
	File Kind = iota + 1
	// PackageEntry is a file inside a package zip.
	PackageEntry
	// URL is a file fetched over HTTPS or from S3.
	URL
)

// A Location says where a file came from, so that the Sources and
// Fn::InsertFile paths inside it resolve from there, and errors can name it.
// Locations are comparable: use them as map keys to detect include cycles.
type Location struct {
	Kind Kind
	// Path is the absolute, clean file path for File, and the slash-separated
	// name inside the zip for PackageEntry.
	Path string
	// Package is the alias of the package, for PackageEntry.
	Package string
	// URL is the file's URL (https://... or s3://bucket/key), for URL.
	URL string
}

// String names the location for messages: the file path, "$alias/name" or
// the URL.
func (l Location) String() string {
	switch l.Kind {
	case File:
		return l.Path
	case PackageEntry:
		return "$" + l.Package + "/" + l.Path
	case URL:
		return l.URL
	}
	return "<nowhere>"
}

// A HashError is a content that does not match its pinned hash.
type HashError struct {
	Source string // the source as written
	Want   string // "sha256:..." as pinned
	Got    string // "sha256:..." of the content
}

func (e *HashError) Error() string {
	return fmt.Sprintf("%v: %s: pinned %s, got %s; update the Hash if the file changed on purpose", ErrHashMismatch, e.Source, e.Want, e.Got)
}

// Unwrap returns ErrHashMismatch.
func (e *HashError) Unwrap() error { return ErrHashMismatch }

// Options configures a Resolver. The zero value uses the defaults.
type Options struct {
	// Client fetches HTTPS and S3 sources. Nil means a client with Timeout.
	// Unless the client sets its own CheckRedirect, at most 5 redirects are
	// followed, all on HTTPS.
	Client *http.Client
	// Timeout bounds each download when Client is nil. Zero means
	// DefaultTimeout.
	Timeout time.Duration
	// MaxFileSize bounds a module, an inserted file or a package entry.
	MaxFileSize int64
	// MaxPackageSize bounds a package zip.
	MaxPackageSize int64
	// MaxPackageFiles bounds the number of entries of a package zip.
	MaxPackageFiles int
	// MaxDownloads bounds the bytes of all HTTPS and S3 downloads together.
	MaxDownloads int64
	// Read, if set, is told the absolute path of every local file read.
	Read func(path string)
}

type pkg struct {
	from   Location
	source string
	hash   string
	files  map[string]*zip.File // nil until loaded
	err    error
	busy   bool
}

// A Resolver reads sources for one packaging run. It caches downloads and
// packages. It is not safe for concurrent use. Close it when done: it holds
// the project folder open.
type Resolver struct {
	root     string   // absolute, clean
	realRoot string   // root with symbolic links evaluated
	fsRoot   *os.Root // realRoot, for reads that cannot escape it
	client   *http.Client
	opts     Options
	packages map[string]*pkg
	fetched  map[string][]byte
	download int64 // bytes downloaded so far
	s3c      s3Client
	s3err    error
}

// New returns a Resolver for the project folder root: no local file outside
// it can be read.
func New(root string, opts *Options) (*Resolver, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("%w: project folder %s: %v", ErrBadSource, root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("%w: project folder %s: %w", ErrNotFound, root, err)
	}
	fsRoot, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("%w: project folder %s: %v", ErrBadSource, root, err)
	}
	r := &Resolver{root: abs, realRoot: real, fsRoot: fsRoot, packages: map[string]*pkg{}, fetched: map[string][]byte{}}
	if opts != nil {
		r.opts = *opts
	}
	if r.opts.Timeout <= 0 {
		r.opts.Timeout = DefaultTimeout
	}
	if r.opts.MaxFileSize <= 0 {
		r.opts.MaxFileSize = DefaultMaxFileSize
	}
	if r.opts.MaxPackageSize <= 0 {
		r.opts.MaxPackageSize = DefaultMaxPackageSize
	}
	if r.opts.MaxPackageFiles <= 0 {
		r.opts.MaxPackageFiles = DefaultMaxPackageFiles
	}
	if r.opts.MaxDownloads <= 0 {
		r.opts.MaxDownloads = DefaultMaxDownloads
	}
	if r.opts.Client != nil {
		c := *r.opts.Client // shares the Transport; only the redirect policy changes
		if c.CheckRedirect == nil {
			c.CheckRedirect = checkRedirect
		}
		r.client = &c
	} else {
		r.client = &http.Client{Timeout: r.opts.Timeout, CheckRedirect: checkRedirect}
	}
	return r, nil
}

func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("more than %d redirects", maxRedirects)
	}
	if req.URL.Scheme != "https" {
		return fmt.Errorf("redirect to %s leaves HTTPS", req.URL.Redacted())
	}
	return nil
}

// Root returns the project folder, absolute.
func (r *Resolver) Root() string { return r.root }

// Close releases the project folder's handle. A Resolver cannot read local
// files once closed.
func (r *Resolver) Close() error { return r.fsRoot.Close() }

// FileLocation returns the Location of a local file, such as the template
// being packaged; it must lie inside the project folder.
func (r *Resolver) FileLocation(name string) (Location, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return Location{}, fmt.Errorf("%w: %s: %v", ErrBadSource, name, err)
	}
	if err := r.inside(abs, name); err != nil {
		return Location{}, err
	}
	return Location{Kind: File, Path: abs}, nil
}

// Rel names loc for output such as source maps: a slash-separated path
// relative to the project folder, "$alias/name" or the URL.
func (r *Resolver) Rel(loc Location) string {
	if loc.Kind == File {
		if rel, err := filepath.Rel(r.root, loc.Path); err == nil {
			return filepath.ToSlash(rel)
		}
	}
	return loc.String()
}

// AddPackage registers a package alias, as a Packages entry declares it in
// the file at from. The zip is read when a Source first uses the alias.
// Declaring the same alias again with the same source is allowed; with
// another source it is an error.
func (r *Resolver) AddPackage(from Location, alias, source, hash string) error {
	if alias == "" || strings.ContainsAny(alias, "/$\\") {
		return fmt.Errorf("%w: package alias %q must be a plain name", ErrBadSource, alias)
	}
	if source == "" {
		return fmt.Errorf("%w: package %s has no Source", ErrBadSource, alias)
	}
	if hash != "" {
		if _, err := parseHash(hash); err != nil {
			return fmt.Errorf("package %s: %w", alias, err)
		}
	}
	if p, ok := r.packages[alias]; ok {
		if p.source == source && p.hash == hash && p.from.Kind == from.Kind && pathDir(p.from) == pathDir(from) {
			return nil
		}
		return fmt.Errorf("%w: package alias %s declared twice (%s in %s, %s in %s)", ErrBadSource, alias, p.source, p.from, source, from)
	}
	r.packages[alias] = &pkg{from: from, source: source, hash: hash}
	return nil
}

func pathDir(l Location) string {
	switch l.Kind {
	case File:
		return filepath.Dir(l.Path)
	case PackageEntry:
		return l.Package + ":" + path.Dir(l.Path)
	}
	return l.URL
}

// Resolve reads the file that source names in the file at from, checks it
// against hash ("sha256:<hex>", or "" for none) and returns its content and
// Location.
func (r *Resolver) Resolve(ctx context.Context, from Location, source, hash string) ([]byte, Location, error) {
	return r.resolve(ctx, from, source, hash, r.opts.MaxFileSize)
}

func (r *Resolver) resolve(ctx context.Context, from Location, source, hash string, limit int64) ([]byte, Location, error) {
	var want []byte
	if hash != "" {
		var err error
		if want, err = parseHash(hash); err != nil {
			return nil, Location{}, fmt.Errorf("%s: %w", source, err)
		}
	}
	b, loc, err := r.read(ctx, from, source, limit)
	if err != nil {
		return nil, Location{}, err
	}
	if want != nil {
		if got := sha256.Sum256(b); !bytes.Equal(got[:], want) {
			return nil, Location{}, &HashError{Source: source, Want: hash, Got: "sha256:" + hex.EncodeToString(got[:])}
		}
	}
	return b, loc, nil
}

func (r *Resolver) read(ctx context.Context, from Location, source string, limit int64) ([]byte, Location, error) {
	if source == "" {
		return nil, Location{}, fmt.Errorf("%w: empty source in %s", ErrBadSource, from)
	}
	if scheme, _, ok := strings.Cut(source, "://"); ok && !strings.ContainsAny(scheme, "/.$") {
		return r.get(ctx, source, limit)
	}
	if alias, name, ok := strings.Cut(source, "/"); ok && strings.HasPrefix(alias, "$") {
		clean := path.Clean(name)
		if path.IsAbs(name) || clean == ".." || strings.HasPrefix(clean, "../") {
			return nil, Location{}, fmt.Errorf("%w: %s", ErrOutsidePackage, source)
		}
		return r.readPackage(ctx, alias[1:], clean, source, limit)
	}
	if strings.HasPrefix(source, "$") {
		return nil, Location{}, fmt.Errorf("%w: %s in %s: write $alias/path/to/file", ErrBadSource, source, from)
	}
	switch from.Kind {
	case File:
		return r.readFile(from, source, limit)
	case PackageEntry:
		name := source
		if !path.IsAbs(name) {
			name = path.Join(path.Dir(from.Path), source)
		}
		if path.IsAbs(source) || name == ".." || strings.HasPrefix(name, "../") {
			return nil, Location{}, fmt.Errorf("%w: %s in %s", ErrOutsidePackage, source, from)
		}
		return r.readPackage(ctx, from.Package, name, source, limit)
	case URL:
		base, err := url.Parse(from.URL)
		if err != nil {
			return nil, Location{}, fmt.Errorf("%w: %s: %v", ErrBadSource, from.URL, err)
		}
		ref, err := url.Parse(filepath.ToSlash(source))
		if err != nil {
			return nil, Location{}, fmt.Errorf("%w: %s in %s: %v", ErrBadSource, source, from, err)
		}
		return r.get(ctx, base.ResolveReference(ref).String(), limit)
	}
	return nil, Location{}, fmt.Errorf("%w: %s: no location to resolve it from", ErrBadSource, source)
}

// inside checks that abs, and the file it links to, lie in the project.
func (r *Resolver) inside(abs, source string) error {
	rel, err := filepath.Rel(r.root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%w: %s is outside %s", ErrOutsideRoot, source, r.root)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: %s: %w", ErrNotFound, source, err)
		}
		return fmt.Errorf("%w: %s: %v", ErrBadSource, source, err)
	}
	rel, err = filepath.Rel(r.realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%w: %s links to %s, outside %s", ErrOutsideRoot, source, real, r.root)
	}
	return nil
}

func (r *Resolver) readFile(from Location, source string, limit int64) ([]byte, Location, error) {
	name := filepath.FromSlash(source)
	if !filepath.IsAbs(name) {
		name = filepath.Join(filepath.Dir(from.Path), name)
	}
	name = filepath.Clean(name)
	if err := r.inside(name, source); err != nil {
		return nil, Location{}, err
	}
	// inside checked the path and its links; opening through the os.Root
	// also refuses a link swapped in since.
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		return nil, Location{}, fmt.Errorf("%w: %s: %w", ErrNotFound, source, err)
	}
	rel, err := filepath.Rel(r.realRoot, real)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return nil, Location{}, fmt.Errorf("%w: %s is outside %s", ErrOutsideRoot, source, r.root)
	}
	// The one rule for a path a project names (internal/projectfs): a
	// regular file, no link out, a FIFO refused rather than waited on.
	f, err := projectfs.Open(r.fsRoot, rel)
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, Location{}, fmt.Errorf("%w: %s: %w", ErrNotFound, source, err)
		case errors.Is(err, projectfs.ErrOutside):
			return nil, Location{}, fmt.Errorf("%w: %s leads outside %s", ErrOutsideRoot, source, r.root)
		case errors.Is(err, projectfs.ErrNotRegular):
			return nil, Location{}, fmt.Errorf("%w: %s is not a regular file", ErrBadSource, source)
		}
		return nil, Location{}, fmt.Errorf("%w: %s: %v", ErrBadSource, source, err)
	}
	defer f.Close()
	b, err := readLimited(f, limit, source)
	if err != nil {
		return nil, Location{}, err
	}
	if r.opts.Read != nil {
		r.opts.Read(name)
	}
	return b, Location{Kind: File, Path: name}, nil
}

func readLimited(rd io.Reader, limit int64, what string) ([]byte, error) {
	b, err := limitio.ReadAll(rd, limit)
	var tl *limitio.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, what, limit)
	case err != nil:
		return nil, fmt.Errorf("%w: reading %s: %v", ErrFetch, what, err)
	}
	return b, nil
}

// get reads a URL: https:// or s3://.
func (r *Resolver) get(ctx context.Context, rawURL string, limit int64) ([]byte, Location, error) {
	scheme, _, _ := strings.Cut(rawURL, "://")
	switch strings.ToLower(scheme) {
	case "https":
		return r.fetch(ctx, rawURL, limit)
	case "s3":
		return r.fetchS3(ctx, rawURL, limit)
	}
	return nil, Location{}, fmt.Errorf("%w: %s; use a local path, an https:// URL or an s3:// URI", ErrUnsupportedScheme, rawURL)
}

// readDownload reads a download's body up to limit and within what is
// left of MaxDownloads, and counts it.
func (r *Resolver) readDownload(body io.Reader, limit int64, what string) ([]byte, error) {
	capped := false
	if left := r.opts.MaxDownloads - r.download; left < limit {
		limit, capped = left, true
	}
	b, err := readLimited(body, limit, what)
	if err != nil {
		if errors.Is(err, ErrTooLarge) && capped {
			return nil, fmt.Errorf("%w: downloads exceed %d bytes in all", ErrTooLarge, r.opts.MaxDownloads)
		}
		return nil, err
	}
	r.download += int64(len(b))
	return b, nil
}

func (r *Resolver) fetch(ctx context.Context, rawURL string, limit int64) ([]byte, Location, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, Location{}, fmt.Errorf("%w: %s is not a valid URL", ErrBadSource, rawURL)
	}
	if u.Scheme != "https" {
		return nil, Location{}, fmt.Errorf("%w: %s; only https:// is allowed", ErrUnsupportedScheme, u.Redacted())
	}
	u.Fragment = ""
	key := u.String()
	loc := Location{Kind: URL, URL: key}
	if b, ok := r.fetched[key]; ok {
		if int64(len(b)) > limit {
			return nil, Location{}, fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, u.Redacted(), limit)
		}
		return b, loc, nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, key, nil)
	if err != nil {
		return nil, Location{}, fmt.Errorf("%w: %s: %v", ErrBadSource, u.Redacted(), err)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, Location{}, fmt.Errorf("%w: GET %s: %v", ErrFetch, u.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.Request != nil && resp.Request.URL.Scheme != "https" {
		return nil, Location{}, fmt.Errorf("%w: %s redirected to %s", ErrUnsupportedScheme, u.Redacted(), resp.Request.URL.Redacted())
	}
	if resp.StatusCode != http.StatusOK {
		return nil, Location{}, fmt.Errorf("%w: GET %s: %s", ErrFetch, u.Redacted(), resp.Status)
	}
	if resp.ContentLength > limit {
		return nil, Location{}, fmt.Errorf("%w: %s is %d bytes, more than %d", ErrTooLarge, u.Redacted(), resp.ContentLength, limit)
	}
	b, err := r.readDownload(resp.Body, limit, u.Redacted())
	if err != nil {
		return nil, Location{}, err
	}
	r.fetched[key] = b
	return b, loc, nil
}

func (r *Resolver) readPackage(ctx context.Context, alias, name, source string, limit int64) ([]byte, Location, error) {
	p, ok := r.packages[alias]
	if !ok {
		return nil, Location{}, fmt.Errorf("%w: %s: no package %s in Packages", ErrUnknownPackage, source, alias)
	}
	if err := assembly.CheckName(name); err != nil {
		return nil, Location{}, fmt.Errorf("%w: %s: %w", ErrBadSource, source, err)
	}
	if err := r.loadPackage(ctx, alias, p); err != nil {
		return nil, Location{}, err
	}
	f := p.files[name]
	if f == nil {
		return nil, Location{}, fmt.Errorf("%w: %s: package %s (%s) has no %s", ErrNotFound, source, alias, p.source, name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, Location{}, fmt.Errorf("%w: %s: %v", ErrBadPackage, source, err)
	}
	defer rc.Close()
	b, err := readLimited(rc, limit, source)
	if err != nil {
		if errors.Is(err, ErrFetch) {
			return nil, Location{}, fmt.Errorf("%w: %v", ErrBadPackage, err)
		}
		return nil, Location{}, err
	}
	return b, Location{Kind: PackageEntry, Package: alias, Path: name}, nil
}

func (r *Resolver) loadPackage(ctx context.Context, alias string, p *pkg) error {
	if p.files != nil || p.err != nil {
		return p.err
	}
	if p.busy {
		return fmt.Errorf("%w: package %s is read from itself", ErrBadPackage, alias)
	}
	p.busy = true
	defer func() { p.busy = false }()
	b, _, err := r.resolve(ctx, p.from, p.source, p.hash, r.opts.MaxPackageSize)
	if err != nil {
		p.err = fmt.Errorf("package %s: %w", alias, err)
		return p.err
	}
	p.files, p.err = r.openZip(b, alias, p.source)
	return p.err
}

func (r *Resolver) openZip(b []byte, alias, source string) (map[string]*zip.File, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: package %s (%s): %s", ErrBadPackage, alias, source, fmt.Sprintf(format, args...))
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, bad("not a zip file: %v", err)
	}
	if len(zr.File) > r.opts.MaxPackageFiles {
		return nil, fmt.Errorf("%w: package %s (%s) has %d files, at most %d allowed", ErrTooLarge, alias, source, len(zr.File), r.opts.MaxPackageFiles)
	}
	files := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		name := f.Name
		if dir, ok := strings.CutSuffix(name, "/"); ok && f.Mode().IsDir() {
			if err := assembly.CheckName(dir); err != nil {
				return nil, fmt.Errorf("%w: package %s (%s): %w", ErrBadPackage, alias, source, err)
			}
			continue
		}
		if err := assembly.CheckName(name); err != nil {
			return nil, fmt.Errorf("%w: package %s (%s): %w", ErrBadPackage, alias, source, err)
		}
		if !f.Mode().IsRegular() {
			return nil, bad("%q is not a regular file", name)
		}
		if _, dup := files[name]; dup {
			return nil, bad("%q appears twice", name)
		}
		files[name] = f
	}
	return files, nil
}

// parseHash parses "sha256:<64 hex digits>".
func parseHash(h string) ([]byte, error) {
	algo, hexDigits, ok := strings.Cut(h, ":")
	if !ok || algo != "sha256" || len(hexDigits) != 2*sha256.Size {
		return nil, fmt.Errorf("%w: %q: write sha256:<64 hex digits>", ErrBadHash, h)
	}
	b, err := hex.DecodeString(hexDigits)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %v", ErrBadHash, h, err)
	}
	return b, nil
}

// CheckHash checks data against hash, "sha256:<64 hex digits>": an invalid
// hash is ErrBadHash, a mismatch a *HashError.
func CheckHash(hash string, data []byte) error {
	want, err := parseHash(hash)
	if err != nil {
		return err
	}
	if got := sha256.Sum256(data); !bytes.Equal(got[:], want) {
		return &HashError{Source: "content", Want: hash, Got: "sha256:" + hex.EncodeToString(got[:])}
	}
	return nil
}
