package assembly

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zip"

	"github.com/cloud-assembly/assemble/internal/output"
)

// DeflateLevel is the one compression level every entry is written with.
const DeflateLevel = 6

// chunkSize is the unit of parallel compression: each entry is cut into
// chunks of this size, compressed independently (each primed with the
// previous 32 KiB as a dictionary) and joined into one deflate stream, as
// pigz does. The output does not depend on the number of workers.
const chunkSize = 1 << 20

// dictSize is deflate's window.
const dictSize = 32 << 10

// FileMode is the permission every entry is written with.
const FileMode = 0o644

// DefaultModTimeUnix is the time every entry carries when
// SOURCE_DATE_EPOCH is not set: 1980-01-01 00:00:00 UTC, the first time
// ZIP can store, in seconds since 1970.
const DefaultModTimeUnix = 315532800

// DefaultModTime returns DefaultModTimeUnix as a time.Time in UTC.
func DefaultModTime() time.Time { return time.Unix(DefaultModTimeUnix, 0).UTC() }

// SourceDateEpoch returns the time from the SOURCE_DATE_EPOCH environment
// variable (reproducible-builds.org), or DefaultModTime when it is unset. A
// value ZIP cannot store (before 1980, after 2107) is an error.
func SourceDateEpoch() (time.Time, error) {
	v, ok := os.LookupEnv("SOURCE_DATE_EPOCH")
	if !ok || v == "" {
		return DefaultModTime(), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want whole seconds since 1970-01-01 UTC", v)
	}
	t := time.Unix(n, 0).UTC()
	if t.Unix() < DefaultModTimeUnix || t.Year() > 2107 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: a ZIP file time must lie between 1980 and 2107", v)
	}
	return t, nil
}

// WriterOptions configures a Writer.
type WriterOptions struct {
	// ModTime is the time written for every entry (kept in UTC, to the
	// even second ZIP stores). Zero means SourceDateEpoch().
	ModTime time.Time
	// Workers is the number of compressing goroutines; 0 means GOMAXPROCS.
	// It changes the speed, never the bytes.
	Workers int
	// Progress, if set, is called as the entries are read, with the bytes
	// read so far and the total (-1 when an entry's size is not known in
	// advance), from one goroutine, at most once per MiB and once at the end.
	Progress func(done, total int64)
	// Sealer, if set, sees every entry's content as it is read and writes
	// the end of the archive in place of the central directory: one-pass
	// signing (see Sealer).
	Sealer Sealer
}

// A Sealer completes an archive as a Writer writes it, in one pass: it sees
// each entry's content as the writer reads it, and then, instead of the
// writer, writes what follows the entries. Package signing has one that
// hashes the entries for the attestation and appends signature.asc, so a
// build is signed without reading the assembly again.
type Sealer interface {
	// Entry returns where the content of the entry name goes, in order,
	// as the writer reads it (before it is compressed).
	Entry(name string) io.Writer
	// Seal writes the rest of the archive once every entry is written:
	// offset is the number of bytes written so far (where the central
	// directory would start) and records are the entries' central
	// directory records, in entry order, as the writer would have written
	// them.
	Seal(dst io.Writer, offset int64, records [][]byte) error
}

// A Writer builds a byte-reproducible assembly: entries sorted by name,
// "/" separators, no directory entries, mode 0644, one fixed time, deflate
// at DeflateLevel. Add entries, then call WriteTo or WriteFile; file
// contents are streamed when the archive is written, in chunks, so memory
// does not grow with file sizes.
type Writer struct {
	opts      WriterOptions
	entries   []input
	names     map[string]bool
	set       *nameSet // the reader's name rules
	nameBytes int
}

type input struct {
	name string
	size int64                         // content length, -1 if unknown
	path string                        // file to read, or
	open func() (io.ReadCloser, error) // a source to stream, or
	data []byte                        // content
}

// NewWriter returns an empty Writer.
func NewWriter(opts WriterOptions) *Writer {
	return &Writer{opts: opts, names: map[string]bool{}, set: newNameSet(0)}
}

func (w *Writer) add(e input) error {
	// Refuse what the reader refuses (the same name rules, nameSet), so a
	// build never writes an assembly that inspect, sign and verify then
	// reject.
	if len(w.entries) >= MaxFiles {
		return fmt.Errorf("%w: more than %d files", ErrTooLarge, MaxFiles)
	}
	if w.nameBytes+len(e.name) > MaxNameBytes {
		return fmt.Errorf("%w: file names add up to more than %d bytes", ErrTooLarge, MaxNameBytes)
	}
	if err := w.set.addFile(e.name); err != nil {
		return err
	}
	w.nameBytes += len(e.name)
	w.names[e.name] = true
	w.entries = append(w.entries, e)
	return nil
}

// AddFile adds the file at path (on disk) as the entry name. The file is
// read when the archive is written.
func (w *Writer) AddFile(name, path string) error {
	return w.add(input{name: name, size: -1, path: path})
}

// AddBytes adds data as the entry name.
func (w *Writer) AddBytes(name string, data []byte) error {
	return w.add(input{name: name, size: int64(len(data)), data: data})
}

// AddFunc adds an entry whose content open streams when the archive is
// written (for example an entry of another assembly, via File.Open).
func (w *Writer) AddFunc(name string, open func() (io.ReadCloser, error)) error {
	return w.AddOpener(name, -1, open)
}

// AddOpener is AddFunc for a content whose size is known (-1 if not),
// which WriterOptions.Progress then counts in its total.
func (w *Writer) AddOpener(name string, size int64, open func() (io.ReadCloser, error)) error {
	return w.add(input{name: name, size: size, open: open})
}

// Has reports whether an entry of that name was added.
func (w *Writer) Has(name string) bool { return w.names[name] }

// Names lists the entries added so far, sorted.
func (w *Writer) Names() []string { return sortedKeys(w.names) }

// WriteFile writes the archive to path through the project's one output
// writer (see internal/output): to a temporary file renamed over path only
// when everything succeeded, so a failed write leaves no file behind and
// an existing file untouched; a symbolic link is followed and kept, a
// pipe or device written directly, "-" is standard output, and another
// writer of the same file is waited for.
func (w *Writer) WriteFile(ctx context.Context, path string) error {
	f, err := output.Create(ctx, path, output.Options{Sync: true})
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := w.WriteTo(ctx, f); err != nil {
		return err
	}
	return f.Commit()
}

// A chunk is one piece of one entry on its way through the pipeline.
type chunk struct {
	entry int
	first bool
	last  bool
	data  []byte
	dict  []byte
	// buf is data's pooled buffer, back to the pool when refs (its
	// compressing worker, and a Sealer's hasher when there is one) are done.
	buf  *[]byte
	refs atomic.Int32
	// Set by the reader on the last chunk: the entry's CRC-32 and size.
	crc  uint32
	size int64
	// Set by a worker.
	out  *bytes.Buffer
	err  error
	done chan struct{}
}

var chunkPool = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// release drops one reference to c's buffer; the last one pools it.
func (c *chunk) release() {
	if c.refs.Add(-1) == 0 {
		c.data = nil
		chunkPool.Put(c.buf)
	}
}

// A hasher gives a Sealer the entries' content, chunk by chunk, in order,
// on a goroutine of its own: the reader goes on reading while a chunk is
// hashed (as the workers compress it).
type hasher struct {
	jobs chan hashJob
	done chan error
}

type hashJob struct {
	w io.Writer
	c *chunk
}

func startHasher(n int) *hasher {
	h := &hasher{jobs: make(chan hashJob, n), done: make(chan error, 1)}
	go func() {
		var err error
		for j := range h.jobs {
			if err == nil {
				_, err = j.w.Write(j.c.data)
			}
			j.c.release()
		}
		h.done <- err
	}()
	return h
}

// wait waits for the chunks given so far, and returns the first error of
// the Sealer's writers.
func (h *hasher) wait() error {
	close(h.jobs)
	return <-h.done
}

var outPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// WriteTo streams the archive to dst and returns the bytes written.
func (w *Writer) WriteTo(ctx context.Context, dst io.Writer) (int64, error) {
	mod := w.opts.ModTime
	if mod.IsZero() {
		var err error
		if mod, err = SourceDateEpoch(); err != nil {
			return 0, err
		}
	}
	mod = mod.UTC().Truncate(2 * time.Second)
	if mod.Unix() < DefaultModTimeUnix {
		mod = DefaultModTime()
	}
	workers := w.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	entries := append([]input(nil), w.entries...)
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *chunk)
	ordered := make(chan *chunk, 2*workers+2)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			compressChunks(jobs)
		}()
	}
	readErr := make(chan error, 1)
	progress := newProgress(w.opts.Progress, entries)
	go func() {
		err := readEntries(ctx, entries, jobs, ordered, progress, w.opts.Sealer, workers)
		close(jobs)
		close(ordered)
		readErr <- err
	}()

	cw := &countingWriter{w: dst}
	zw := zip.NewWriter(cw)
	err := writeChunks(ctx, zw, entries, mod, ordered)
	if err != nil {
		cancel()
		for range ordered {
		}
	}
	wg.Wait()
	if rerr := <-readErr; rerr != nil && (err == nil || errors.Is(err, context.Canceled)) {
		err = rerr
	}
	if err == nil {
		if w.opts.Sealer != nil {
			err = seal(zw, cw, w.opts.Sealer, len(entries))
		} else {
			err = zw.Close()
		}
	}
	return cw.n, err
}

// seal ends the archive through s: the zip writer's own end (the central
// directory and end records) is written to a buffer, from which the
// entries' records are taken for s, which writes the end instead. What the
// zip writer still had to write for the last entry (its data descriptor)
// goes out first.
func seal(zw *zip.Writer, cw *countingWriter, s Sealer, n int) error {
	if err := zw.Flush(); err != nil {
		return err
	}
	flushed := cw.n
	var tail bytes.Buffer
	dst := cw.w
	cw.w = &tail
	err := zw.Close()
	cw.w, cw.n = dst, flushed
	if err != nil {
		return err
	}
	cd, err := centralDirectoryOffset(tail.Bytes(), flushed)
	if err != nil {
		return err
	}
	if _, err := cw.Write(tail.Bytes()[:cd-flushed]); err != nil {
		return err
	}
	records, err := splitRecords(tail.Bytes()[cd-flushed:], n)
	if err != nil {
		return err
	}
	return s.Seal(cw, cd, records)
}

// centralDirectoryOffset reads where the central directory starts from the
// end records at the end of tail (no comment), which begins at offset
// start of the archive.
func centralDirectoryOffset(tail []byte, start int64) (int64, error) {
	le := binary.LittleEndian
	if len(tail) < 22 || le.Uint32(tail[len(tail)-22:]) != 0x06054b50 {
		return 0, errors.New("assembly: sealing: no end record")
	}
	off := int64(le.Uint32(tail[len(tail)-22+16:]))
	if off == math.MaxUint32 {
		// Zip64: the locator before the end record gives the zip64 end
		// record's offset, which gives the directory's.
		loc := len(tail) - 22 - 20
		if loc < 0 || le.Uint32(tail[loc:]) != 0x07064b50 {
			return 0, errors.New("assembly: sealing: no zip64 end locator")
		}
		rec := int64(le.Uint64(tail[loc+8:])) - start
		if rec < 0 || rec+56 > int64(len(tail)) || le.Uint32(tail[rec:]) != 0x06064b50 {
			return 0, errors.New("assembly: sealing: no zip64 end record")
		}
		off = int64(le.Uint64(tail[rec+48:]))
	}
	if off < start || off > start+int64(len(tail)) {
		return 0, fmt.Errorf("assembly: sealing: central directory at %d, outside the end written at %d", off, start)
	}
	return off, nil
}

// splitRecords cuts the first n central directory records off b.
func splitRecords(b []byte, n int) ([][]byte, error) {
	le := binary.LittleEndian
	out := make([][]byte, 0, n)
	for range n {
		if len(b) < 46 || le.Uint32(b) != 0x02014b50 {
			return nil, errors.New("assembly: sealing: malformed central directory record")
		}
		l := 46 + int(le.Uint16(b[28:])) + int(le.Uint16(b[30:])) + int(le.Uint16(b[32:]))
		if l > len(b) {
			return nil, errors.New("assembly: sealing: truncated central directory record")
		}
		out = append(out, b[:l])
		b = b[l:]
	}
	return out, nil
}

// readEntries reads every entry in order, cuts it into chunks, and hands
// each chunk both to the workers and, in order, to the writer.
func readEntries(ctx context.Context, entries []input, jobs, ordered chan<- *chunk, progress func(int64), sealer Sealer, workers int) (err error) {
	send := func(c *chunk) error {
		select {
		case ordered <- c:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case jobs <- c:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	var h *hasher
	if sealer != nil {
		h = startHasher(2*workers + 2)
		defer func() {
			if herr := h.wait(); err == nil && herr != nil {
				err = fmt.Errorf("sealing: %w", herr)
			}
		}()
	}
	for i, e := range entries {
		hash := func(*chunk) error { return nil }
		if h != nil {
			sink := sealer.Entry(e.name)
			hash = func(c *chunk) error {
				c.refs.Add(1)
				select {
				case h.jobs <- hashJob{sink, c}:
					return nil
				case <-ctx.Done():
					c.release()
					return ctx.Err()
				}
			}
		}
		if err := readEntry(i, e, send, progress, hash); err != nil {
			return err
		}
	}
	progress(0)
	return nil
}

// newProgress returns the function readEntries calls with the bytes of
// each chunk it read: it keeps the count and passes it on to report.
func newProgress(report func(done, total int64), entries []input) func(n int64) {
	if report == nil {
		return func(int64) {}
	}
	var total int64
	for _, e := range entries {
		size := e.size
		if size < 0 && e.path != "" {
			if st, err := os.Stat(e.path); err == nil {
				size = st.Size()
			}
		}
		if size < 0 || total < 0 {
			total = -1
			continue
		}
		total += size
	}
	var done int64
	return func(n int64) {
		done += n
		report(done, total)
	}
}

func readEntry(i int, e input, send func(*chunk) error, progress func(int64), hash func(*chunk) error) error {
	r := io.Reader(bytes.NewReader(e.data))
	switch {
	case e.path != "":
		f, err := os.Open(e.path)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	case e.open != nil:
		rc, err := e.open()
		if err != nil {
			return fmt.Errorf("open %s: %w", e.name, err)
		}
		defer rc.Close()
		r = rc
	}
	var crc uint32
	var size int64
	var dict []byte
	// Read one chunk ahead, so the last chunk is known as such.
	cur, n, err := readChunk(r)
	if err != nil {
		return fmt.Errorf("read %s: %w", e.name, err)
	}
	for first := true; ; first = false {
		next, m, err := readChunk(r)
		if err != nil {
			return fmt.Errorf("read %s: %w", e.name, err)
		}
		data := (*cur)[:n]
		crc = crc32.Update(crc, crc32.IEEETable, data)
		size += int64(n)
		if n > 0 {
			progress(int64(n))
		}
		if size > MaxFileSize {
			return fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, e.name, int64(MaxFileSize))
		}
		c := &chunk{entry: i, first: first, last: m == 0, data: data, dict: dict, buf: cur, done: make(chan struct{})}
		c.refs.Store(1)
		if c.last {
			c.crc, c.size = crc, size
		} else {
			dict = append([]byte(nil), data[n-min(n, dictSize):]...)
		}
		if err := hash(c); err != nil {
			c.release()
			return err
		}
		if err := send(c); err != nil {
			return err
		}
		if m == 0 {
			chunkPool.Put(next)
			return nil
		}
		cur, n = next, m
	}
}

func readChunk(r io.Reader) (*[]byte, int, error) {
	buf := chunkPool.Get().(*[]byte)
	n, err := io.ReadFull(r, *buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return buf, n, err
}

func compressChunks(jobs <-chan *chunk) {
	fw, _ := flate.NewWriter(io.Discard, DeflateLevel)
	for c := range jobs {
		out := outPool.Get().(*bytes.Buffer)
		out.Reset()
		fw.ResetDict(out, c.dict)
		_, err := fw.Write(c.data)
		if err == nil {
			if c.last {
				err = fw.Close()
			} else {
				err = fw.Flush()
			}
		}
		c.release()
		c.dict = nil
		c.out, c.err = out, err
		close(c.done)
	}
}

// writeChunks writes the compressed chunks in order. An entry that fits in
// one chunk gets its sizes in the local header; a longer one, whose sizes
// are known only at its end, gets a data descriptor.
func writeChunks(ctx context.Context, zw *zip.Writer, entries []input, mod time.Time, ordered <-chan *chunk) error {
	var fh *zip.FileHeader
	var out io.Writer
	var csize int64
	for c := range ordered {
		select {
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if c.err != nil {
			return fmt.Errorf("compress %s: %w", entries[c.entry].name, c.err)
		}
		if c.first {
			fh = header(entries[c.entry].name, mod)
			csize = 0
			if c.last {
				setSizes(fh, c.crc, c.size, int64(c.out.Len()))
			} else {
				fh.Flags |= 0x8 // data descriptor
			}
			var err error
			if out, err = zw.CreateRaw(fh); err != nil {
				return err
			}
		}
		csize += int64(c.out.Len())
		if _, err := out.Write(c.out.Bytes()); err != nil {
			return err
		}
		outPool.Put(c.out)
		c.out = nil
		if c.last && !c.first {
			// The zip writer reads these when it writes the data
			// descriptor and the central directory.
			setSizes(fh, c.crc, c.size, csize)
		}
	}
	return ctx.Err()
}

func setSizes(fh *zip.FileHeader, crc uint32, size, csize int64) {
	fh.CRC32 = crc
	fh.UncompressedSize64, fh.CompressedSize64 = uint64(size), uint64(csize)
	fh.UncompressedSize = uint32(min(fh.UncompressedSize64, math.MaxUint32))
	fh.CompressedSize = uint32(min(fh.CompressedSize64, math.MaxUint32))
}

func header(name string, mod time.Time) *zip.FileHeader {
	fh := &zip.FileHeader{Name: name, Method: zip.Deflate, ReaderVersion: 20}
	fh.SetMode(FileMode)
	fh.ModifiedDate, fh.ModifiedTime = msDosTime(mod)
	fh.Modified = mod
	// Extended timestamp (0x5455): the time in UTC, as Info-ZIP writes it.
	u := uint32(mod.Unix())
	fh.Extra = []byte{0x55, 0x54, 5, 0, 1, byte(u), byte(u >> 8), byte(u >> 16), byte(u >> 24)}
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			fh.Flags |= 0x800 // UTF-8 name
			break
		}
	}
	return fh
}

func msDosTime(t time.Time) (date, tm uint16) {
	date = uint16(t.Day() + int(t.Month())<<5 + (t.Year()-1980)<<9)
	tm = uint16(t.Second()/2 + t.Minute()<<5 + t.Hour()<<11)
	return date, tm
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
