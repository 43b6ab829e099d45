package artifacts

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zip"
)

// Bounds on what one artifact may hold.
const (
	// MaxArtifactBytes bounds one artifact: the files a folder zip holds
	// (before compression), a file shipped as it is, and what a zip
	// offered as an artifact expands to. Lambda itself takes 250 MiB
	// unzipped; Elastic Beanstalk bundles 500 MB.
	MaxArtifactBytes = 1 << 30
	// MaxArtifactFiles bounds the files of one folder zip, and the entries
	// of a zip offered as an artifact.
	MaxArtifactFiles = 100_000
	// MaxTotalBytes bounds the zips and nested templates a build holds in
	// memory until the assembly is written.
	MaxTotalBytes = 4 << 30
)

// artifactLimit is MaxArtifactBytes, lowered by tests.
var artifactLimit int64 = MaxArtifactBytes

// ZipLevel is the deflate level of the zips made from folders.
const ZipLevel = 6

// smallLevel is the second deflate level tried on entries under smallFile
// bytes: klauspost's level 6 writes a stored block for inputs of up to
// about 100 bytes, where its lazy level 7 writes fixed Huffman codes as
// zlib does. The smaller of the two is kept, and an entry that neither
// makes smaller is stored (method 0): compressed only when it saves bytes.
const (
	smallLevel = 7
	smallFile  = 4 << 10
)

// Version fields of the zips made from folders (APPNOTE 4.4.2, 4.4.3):
// made by Unix (3), spec 2.0; needed to extract 2.0 for deflate, 1.0 for a
// stored entry.
const (
	zipMadeBy      = 3<<8 | 20
	zipNeedDeflate = 20
	zipNeedStore   = 10
)

// ZipTime is the time every entry of a zip made from a folder carries:
// 1980-01-01 00:00:00, the first time a ZIP can store. It is fixed (not
// SOURCE_DATE_EPOCH, not the files' times) so that the same sources give
// the same zip, and so the same object key, on every machine and after
// every clone.
func ZipTime() time.Time { return time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC) }

// zipFile is one file going into a zip.
type zipFile struct {
	name string // slash path in the zip
	rel  string // path under the os.Root
	exec bool
	size int64
}

// ZipMode returns the mode an entry is written with: 0755 for a file any
// execute bit of which is set (a custom runtime's bootstrap, a binary),
// 0644 otherwise. Lambda runs code as another user than the one who
// zipped it: every file must be readable by all, executables executable.
func ZipMode(m fs.FileMode) fs.FileMode {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// collect lists the regular files under dir (a path under root), following
// symbolic links that stay in root as aws-cli's os.walk(followlinks=True)
// does, sorted by their slash path. A folder that is one of skip (the
// output folder: see Options.OutputDir) is left out.
func collect(root *os.Root, dir string, display string, skip ...os.FileInfo) ([]zipFile, error) {
	var files []zipFile
	var total int64
	var visit func(rel, prefix string, seen []os.FileInfo) error
	visit = func(rel, prefix string, seen []os.FileInfo) error {
		d, err := root.Open(rel)
		if err != nil {
			return openErr(display, prefix, err)
		}
		st, err := d.Stat()
		if err != nil {
			d.Close()
			return err
		}
		for _, s := range seen {
			if os.SameFile(s, st) {
				d.Close()
				return fmt.Errorf("%w: %s: a symbolic link loops back to a folder above it: remove the link", ErrArtifact, path.Join(display, prefix))
			}
		}
		for _, s := range skip {
			if os.SameFile(s, st) {
				d.Close()
				return nil
			}
		}
		seen = append(seen, st)
		ents, err := d.ReadDir(-1)
		d.Close()
		if err != nil {
			return err
		}
		for _, e := range ents {
			crel := rel + "/" + e.Name()
			cname := path.Join(prefix, e.Name())
			info, err := root.Stat(crel) // follows links, within root only
			if err != nil {
				return openErr(display, cname, err)
			}
			switch {
			case info.IsDir():
				if err := visit(crel, cname, seen); err != nil {
					return err
				}
			case info.Mode().IsRegular():
				total += info.Size()
				if total > artifactLimit {
					return fmt.Errorf("%w: %s holds more than %d bytes: a Lambda zip takes 250 MiB unzipped; ship less, or a layer", ErrTooLarge, display, artifactLimit)
				}
				if len(files) >= MaxArtifactFiles {
					return fmt.Errorf("%w: %s holds more than %d files", ErrTooLarge, display, MaxArtifactFiles)
				}
				files = append(files, zipFile{name: cname, rel: crel, exec: info.Mode()&0o111 != 0, size: info.Size()})
			default:
				return fmt.Errorf("%w: %s is not a regular file, folder or link to one (%s): remove it from the folder", ErrArtifact, path.Join(display, cname), info.Mode().Type())
			}
		}
		return nil
	}
	if err := visit(dir, "", nil); err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files, nil
}

// openErr explains why a file under an artifact folder cannot be opened.
func openErr(display, name string, err error) error {
	what := path.Join(display, name)
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes") {
		return fmt.Errorf("%w: %s is a symbolic link out of the project: copy what it points at into the project", ErrOutsideProject, what)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s is a broken symbolic link: remove it or point it at a file inside the project", ErrArtifact, what)
	}
	return fmt.Errorf("%w: %s: %v", ErrArtifact, what, err)
}

// compressed is one entry of a zip, compressed (or stored: see
// smallLevel).
type compressed struct {
	data   []byte
	crc    uint32
	size   int64
	stored bool
	err    error
}

// flaters are one worker's deflate writers: ZipLevel, and smallLevel for
// small entries.
type flaters struct{ std, small *flate.Writer }

func newFlaters() flaters {
	std, _ := flate.NewWriter(io.Discard, ZipLevel)
	small, _ := flate.NewWriter(io.Discard, smallLevel)
	return flaters{std, small}
}

// makeZip writes the files into a byte-reproducible zip: entries sorted by
// name, no folder entries, ZipTime, ZipMode, deflate at ZipLevel, made by
// Unix. Entries are compressed in parallel; the bytes do not depend on
// the number of workers.
func makeZip(root *os.Root, files []zipFile) ([]byte, error) {
	out := make([]compressed, len(files))
	workers := min(runtime.GOMAXPROCS(0), len(files))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fw := newFlaters()
			for i := range next {
				out[i] = compressOne(root, files[i], fw)
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	return writeZip(files, out)
}

// writeZip writes the compressed entries out[i] of files into a zip (see
// makeZip).
func writeZip(files []zipFile, out []compressed) ([]byte, error) {
	var buf bytes.Buffer
	need := 22 // the end record
	for i, f := range files {
		need += len(out[i].data) + 2*len(f.name) + 128 // headers
	}
	buf.Grow(need)
	zw := zip.NewWriter(&buf)
	for i, f := range files {
		c := out[i]
		if c.err != nil {
			return nil, c.err
		}
		// CreateRaw writes the MS-DOS time as given: ZipTime, and no
		// extended timestamp.
		fh := &zip.FileHeader{Name: f.name, Method: zip.Deflate, ModifiedDate: 1<<5 | 1, ModifiedTime: 0}
		mode := ZipMode(0)
		if f.exec {
			mode = ZipMode(0o111)
		}
		fh.SetMode(mode)
		fh.CreatorVersion, fh.ReaderVersion = zipMadeBy, zipNeedDeflate
		if c.stored {
			fh.Method, fh.ReaderVersion = zip.Store, zipNeedStore
		}
		if !utf8.ValidString(f.name) || strings.ContainsFunc(f.name, func(r rune) bool { return r >= utf8.RuneSelf }) {
			fh.Flags |= 0x800 // UTF-8 name
		}
		fh.CRC32 = c.crc
		fh.UncompressedSize64 = uint64(c.size)
		fh.CompressedSize64 = uint64(len(c.data))
		w, err := zw.CreateRaw(fh)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(c.data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// wholeFile is the size under which a file is read in one piece.
const wholeFile = 1 << 20

// bufPool holds the buffers files under wholeFile are read into.
var bufPool = sync.Pool{New: func() any { b := make([]byte, wholeFile); return &b }}

func compressOne(root *os.Root, f zipFile, fw flaters) compressed {
	r, err := root.Open(f.rel)
	if err != nil {
		return compressed{err: openErr("", f.rel, err)}
	}
	defer r.Close()
	var dst bytes.Buffer
	dst.Grow(int(f.size/2) + 64) // source text deflates to about a third
	fw.std.Reset(&dst)
	var n int64
	var crc uint32
	stored := false
	if f.size < wholeFile {
		// One read and one write: the deflate stream does not depend on
		// how the input is cut into writes.
		b := bufPool.Get().(*[]byte)
		defer bufPool.Put(b)
		buf := (*b)[:f.size+1]
		m, rerr := io.ReadFull(r, buf)
		n = int64(m)
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			rerr = nil
		}
		err = rerr
		if err == nil {
			data := buf[:m]
			crc = crc32.ChecksumIEEE(data)
			err = deflateTo(fw.std, &dst, data)
			if err == nil && m < smallFile {
				var alt bytes.Buffer
				if err = deflateTo(fw.small, &alt, data); alt.Len() < dst.Len() {
					dst = alt
				}
			}
			if err == nil && dst.Len() >= m {
				dst.Reset()
				dst.Write(data)
				stored = true
			}
		}
	} else {
		h := crc32.NewIEEE()
		n, err = io.Copy(io.MultiWriter(fw.std, h), io.LimitReader(r, f.size+1))
		if err == nil {
			err = fw.std.Close()
		}
		crc = h.Sum32()
	}
	if err == nil && n != f.size {
		err = fmt.Errorf("%w: %s changed size while it was zipped: build again", ErrArtifact, f.name)
	}
	return compressed{data: dst.Bytes(), crc: crc, size: n, stored: stored, err: err}
}

// deflateTo deflates data into dst with fw, in one write.
func deflateTo(fw *flate.Writer, dst *bytes.Buffer, data []byte) error {
	fw.Reset(dst)
	if _, err := fw.Write(data); err != nil {
		return err
	}
	return fw.Close()
}

// checkZip checks a zip offered as an artifact (shipped as it is): its
// entries must be local names, at most MaxArtifactFiles, and expand to at
// most MaxArtifactBytes in all, counted by decompressing them (declared
// sizes can lie, and entries can overlap).
func checkZip(data io.ReaderAt, size int64, display string) error {
	zr, err := zip.NewReader(data, size)
	if err != nil {
		return fmt.Errorf("%w: %s looks like a zip but does not read as one (%v): fix or remake it", ErrArtifact, display, err)
	}
	if len(zr.File) > MaxArtifactFiles {
		return fmt.Errorf("%w: zip %s holds %d entries, more than %d", ErrTooLarge, display, len(zr.File), MaxArtifactFiles)
	}
	var total int64
	for _, f := range zr.File {
		name := strings.TrimSuffix(f.Name, "/")
		if name != "" && !fsValidLocal(name) {
			return fmt.Errorf("%w: zip %s holds the entry %q, which would unzip outside its folder: remake the zip", ErrArtifact, display, f.Name)
		}
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("%w: zip %s: entry %s: %v", ErrArtifact, display, f.Name, err)
		}
		n, err := io.Copy(io.Discard, io.LimitReader(rc, artifactLimit-total+1))
		rc.Close()
		total += n
		if total > artifactLimit {
			return fmt.Errorf("%w: zip %s expands to more than %d bytes (a zip bomb?): ship a smaller archive", ErrTooLarge, display, artifactLimit)
		}
		if err != nil {
			return fmt.Errorf("%w: zip %s: entry %s: %v", ErrArtifact, display, f.Name, err)
		}
	}
	return nil
}

func fsValidLocal(name string) bool {
	return fs.ValidPath(name) && !strings.Contains(name, `\`)
}

// isZip tells a zip file by its first bytes (a local file header or the
// end record of an empty zip).
func isZip(head []byte) bool {
	return bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06"))
}

// isZipFile tells whether the file f of size bytes is a zip, as Python's
// zipfile.is_zipfile (aws-cli's test) does: it starts as one (isZip), or
// an end of central directory record lies in its last 64 KiB and the
// central directory it names reads. The second is an executable jar or
// a self-extracting archive: a launch script or program before the zip
// data. A file that only holds the record's signature by chance is not
// a zip.
func isZipFile(f io.ReaderAt, size int64) bool {
	head := make([]byte, 4)
	n, _ := f.ReadAt(head, 0)
	if isZip(head[:n]) {
		return true
	}
	if !hasEndRecord(f, size) {
		return false
	}
	_, err := zip.NewReader(f, size)
	return err == nil
}

// hasEndRecord tells whether an end of central directory record (APPNOTE
// 4.3.16: its signature, 18 bytes, a comment of the length it gives) ends
// the file.
func hasEndRecord(f io.ReaderAt, size int64) bool {
	const rec, maxComment = 22, 1<<16 - 1
	n := min(size, rec+maxComment)
	if n < rec {
		return false
	}
	tail := make([]byte, n)
	if _, err := f.ReadAt(tail, size-n); err != nil && err != io.EOF {
		return false
	}
	for i := len(tail) - rec; i >= 0; i-- {
		if tail[i] == 'P' && bytes.HasPrefix(tail[i:], []byte("PK\x05\x06")) {
			comment := int(tail[i+20]) | int(tail[i+21])<<8
			if i+rec+comment == len(tail) {
				return true
			}
		}
	}
	return false
}
