package assembly

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/klauspost/compress/zip"
)

// A Reader gives access to the files of a Cloud Assembly. Creating one checks
// the container's structure and entry names; it establishes no trust. Use
// package signing to verify a signed assembly before reading its files.
type Reader struct {
	zr       *zip.Reader
	files    []*File
	index    map[string]*File
	ra       io.ReaderAt
	size     int64
	cdOffset int64
}

// A File is one entry of an assembly.
type File struct {
	zf  *zip.File
	ent entry
}

// HeaderOffset is where the entry's local header starts in the archive.
func (f *File) HeaderOffset() int64 { return int64(f.ent.offset) }

// EndOffset is just past the entry's data (and data descriptor): the entry
// occupies [HeaderOffset, EndOffset) of the archive.
func (f *File) EndOffset() int64 { return int64(f.ent.end) }

// CentralRecord returns a copy of the entry's raw central directory record,
// for writing an archive that keeps the entry byte for byte.
func (f *File) CentralRecord() []byte { return append([]byte{}, f.ent.central...) }

// Name is the entry's slash-separated name.
func (f *File) Name() string { return f.zf.Name }

// Size is the entry's uncompressed size, as its header states.
func (f *File) Size() int64 { return int64(f.zf.UncompressedSize64) }

// CompressedSize is the entry's stored size.
func (f *File) CompressedSize() int64 { return int64(f.zf.CompressedSize64) }

// Method is the entry's compression method (zip.Store or zip.Deflate).
func (f *File) Method() uint16 { return f.zf.Method }

// CRC32 is the entry's CRC-32 as its header states.
func (f *File) CRC32() uint32 { return f.zf.CRC32 }

// Open returns the entry's uncompressed content.
func (f *File) Open() (io.ReadCloser, error) { return f.zf.Open() }

// OpenRaw returns the entry's stored (possibly compressed) bytes.
func (f *File) OpenRaw() (io.Reader, error) { return f.zf.OpenRaw() }

// Header returns a copy of the entry's ZIP header, for copying the entry raw.
func (f *File) Header() zip.FileHeader { return f.zf.FileHeader }

// NewReader reads the assembly in r, which is size bytes long.
//
// Before anything else it checks the raw bytes (see checkStructure): one end
// record at the very end, entries tiling the file, local headers agreeing
// with the central directory, stored or deflated unencrypted regular files,
// safe names unique after Unicode NFC and case folding, bounded sizes.
func NewReader(r io.ReaderAt, size int64) (*Reader, error) {
	entries, err := checkStructure(r, size)
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if len(zr.File) != len(entries) {
		return nil, fmt.Errorf("%w: central directory read two ways gives %d and %d entries", ErrFormat, len(zr.File), len(entries))
	}
	for i, zf := range zr.File {
		e := entries[i]
		if zf.Name != e.name || zf.UncompressedSize64 != e.usize || zf.CompressedSize64 != e.csize || zf.Method != e.method || zf.CRC32 != e.crc {
			return nil, fmt.Errorf("%w: %q: central directory read two ways disagrees", ErrFormat, e.name)
		}
	}
	if len(zr.File) > MaxFiles {
		return nil, fmt.Errorf("%w: %d files, at most %d allowed", ErrTooLarge, len(zr.File), MaxFiles)
	}
	ar := &Reader{zr: zr, index: make(map[string]*File, len(zr.File)), ra: r, size: size}
	for _, e := range entries {
		ar.cdOffset = max(ar.cdOffset, int64(e.end))
	}
	for _, zf := range zr.File {
		if err := CheckName(zf.Name); err != nil {
			return nil, err
		}
		if !zf.Mode().IsRegular() {
			return nil, fmt.Errorf("%w: %q is not a regular file", ErrFormat, zf.Name)
		}
		if _, dup := ar.index[zf.Name]; dup {
			return nil, fmt.Errorf("%w: %q", ErrDuplicate, zf.Name)
		}
		f := &File{zf: zf, ent: entries[len(ar.files)]}
		ar.index[zf.Name] = f
		ar.files = append(ar.files, f)
	}
	return ar, nil
}

// CheckName reports whether name is a safe entry name: a non-empty, relative,
// slash-separated path without "." or ".." segments, backslashes, drive
// letters or control characters.
func CheckName(name string) error {
	bad := func(why string) error { return fmt.Errorf("%w: %q: %s", ErrInsecurePath, name, why) }
	switch {
	case name == "":
		return bad("empty name")
	case len(name) > MaxNameLength:
		return fmt.Errorf("%w: name of %d bytes, at most %d allowed", ErrTooLarge, len(name), MaxNameLength)
	case strings.HasPrefix(name, "/"):
		return bad("absolute path")
	case strings.Contains(name, `\`):
		return bad("backslash")
	case len(name) >= 2 && name[1] == ':':
		return bad("drive letter")
	}
	for _, c := range name {
		if c < 0x20 || c == 0x7f {
			return bad("control character")
		}
	}
	for _, seg := range strings.Split(name, "/") {
		switch seg {
		case "":
			return bad("empty path segment")
		case ".", "..":
			return bad("relative path segment")
		}
	}
	return nil
}

// Raw returns the archive's bytes, and the offset where its central
// directory starts (all entries lie before it, tiling [0, offset)).
func (r *Reader) Raw() (*io.SectionReader, int64) {
	return io.NewSectionReader(r.ra, 0, r.size), r.cdOffset
}

// Files lists the entries in archive order.
func (r *Reader) Files() []*File { return r.files }

// File returns the named entry, or nil.
func (r *Reader) File(name string) *File { return r.index[name] }

// Signed reports whether the assembly carries a signature.asc.
func (r *Reader) Signed() bool { return r.index[SignatureName] != nil }

// Open opens the named file; with it Reader is an fs.FS.
func (r *Reader) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if f := r.index[name]; f != nil {
		rc, err := f.Open()
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return &openFile{ReadCloser: rc, f: f}, nil
	}
	if entries, ok := r.dir(name); ok {
		return &openDir{name: name, entries: entries}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// dir lists the implicit directory name (the archive has no directory entries).
func (r *Reader) dir(name string) ([]fs.DirEntry, bool) {
	prefix := name + "/"
	if name == "." {
		prefix = ""
	}
	seen := map[string]fs.DirEntry{}
	for _, f := range r.files {
		rest, ok := strings.CutPrefix(f.Name(), prefix)
		if !ok {
			continue
		}
		child, _, isDir := strings.Cut(rest, "/")
		if _, done := seen[child]; done {
			continue
		}
		if isDir {
			seen[child] = fs.FileInfoToDirEntry(dirInfo{name: child})
		} else {
			seen[child] = fs.FileInfoToDirEntry(fileInfo{f})
		}
	}
	if len(seen) == 0 && name != "." {
		return nil, false
	}
	entries := make([]fs.DirEntry, 0, len(seen))
	for _, e := range seen {
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	return entries, true
}

// ReadCloser is a Reader over a file opened by Open.
type ReadCloser struct {
	Reader
	f *os.File
}

// Open opens the assembly file name and checks its structure.
func Open(name string) (*ReadCloser, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	r, err := NewReader(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &ReadCloser{Reader: *r, f: f}, nil
}

// Close closes the underlying file.
func (rc *ReadCloser) Close() error { return rc.f.Close() }

type openFile struct {
	io.ReadCloser
	f *File
}

func (o *openFile) Stat() (fs.FileInfo, error) { return fileInfo{o.f}, nil }

type fileInfo struct{ f *File }

func (i fileInfo) Name() string       { return path.Base(i.f.Name()) }
func (i fileInfo) Size() int64        { return i.f.Size() }
func (i fileInfo) Mode() fs.FileMode  { return 0o444 }
func (i fileInfo) ModTime() time.Time { return i.f.zf.Modified }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return nil }

type dirInfo struct{ name string }

func (i dirInfo) Name() string       { return i.name }
func (i dirInfo) Size() int64        { return 0 }
func (i dirInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o555 }
func (i dirInfo) ModTime() time.Time { return time.Time{} }
func (i dirInfo) IsDir() bool        { return true }
func (i dirInfo) Sys() any           { return nil }

type openDir struct {
	name    string
	entries []fs.DirEntry
	off     int
}

func (d *openDir) Stat() (fs.FileInfo, error) { return dirInfo{name: path.Base(d.name)}, nil }
func (d *openDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errors.New("is a directory")}
}
func (d *openDir) Close() error { return nil }
func (d *openDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	if n > len(rest) {
		n = len(rest)
	}
	d.off += n
	return rest[:n], nil
}
