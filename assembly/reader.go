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
	dirs     []*File // directory entries
	ra       io.ReaderAt
	size     int64
	cdOffset int64
}

// A File is one entry of an assembly.
type File struct {
	zf  *zip.File
	ent entry
	ra  io.ReaderAt
}

// centralRecord reads the entry's raw central directory record, for writing
// an archive that keeps the entry byte for byte (AppendSignature).
func (f *File) centralRecord() ([]byte, error) {
	b := make([]byte, f.ent.centralSize)
	if _, err := f.ra.ReadAt(b, int64(f.ent.centralAt)); err != nil {
		return nil, fmt.Errorf("%w: %q: reading its central directory record: %v", ErrFormat, f.Name(), err)
	}
	return b, nil
}

// Name is the entry's slash-separated name.
func (f *File) Name() string { return f.zf.Name }

// Size is the entry's uncompressed size, as its header states.
func (f *File) Size() int64 { return int64(f.zf.UncompressedSize64) }

// CompressedSize is the entry's stored size.
func (f *File) CompressedSize() int64 { return int64(f.zf.CompressedSize64) }

// NewReader reads the assembly in r, which is size bytes long.
//
// Before anything else it checks the raw bytes (see checkStructure): one end
// record at the very end, entries tiling the file, local headers agreeing
// with the central directory, no comments and only known extra fields,
// stored or deflated unencrypted regular files and empty directory entries,
// names that CheckName allows, unique after Unicode NFC and case folding and
// forming a tree (no name both a file and a folder), bounded sizes, names
// and central directory. Content is checked as it is read (File.Open).
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
	for i, zf := range zr.File {
		e := entries[i]
		ar.cdOffset = max(ar.cdOffset, int64(e.end))
		f := &File{zf: zf, ent: e, ra: r}
		if e.dir {
			// A directory entry (as zip -r writes) is structure: no data,
			// not a file, not attested. Its (empty) data is still checked.
			if err := f.checkEmpty(); err != nil {
				return nil, err
			}
			ar.dirs = append(ar.dirs, f)
			continue
		}
		ar.index[zf.Name] = f
		ar.files = append(ar.files, f)
	}
	return ar, nil
}

// Raw returns the archive's bytes, all of them, as they were read: for
// hashing or copying the whole file.
func (r *Reader) Raw() *io.SectionReader { return io.NewSectionReader(r.ra, 0, r.size) }

// Files lists the file entries in archive order. Directory entries (names
// ending in "/", as zip -r writes them) are not files: see Dirs.
func (r *Reader) Files() []*File { return r.files }

// Dirs lists the archive's directory entries (names ending in "/"), in
// archive order. They hold no data and are not attested: the folders of an
// assembly are those its files' names imply. Sign keeps them as they are.
func (r *Reader) Dirs() []*File { return r.dirs }

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
