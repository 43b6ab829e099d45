package assembly

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zip"

	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/output"
)

// DeflateLevel is the compression every entry is written with, in zip's
// terms: the output is within 2% of `zip -6`'s on text, JSON and base64
// (see compressChunks for how), and incompressible data is stored at the
// speed of a copy.
const DeflateLevel = 6

// Levels of klauspost/compress/flate used for DeflateLevel. Its level 6 is
// a fast greedy encoder that stores a block in which it found no match,
// and it skips ahead in data where matches are rare: base64 of random
// bytes, which Huffman coding alone shrinks by a quarter, came out 1%
// smaller instead of zip -6's 24%, and text 3% larger than zip -6. Its
// level 7 searches lazily with hash chains, as zlib's level 6 does, and
// matches zip -6 within 2% on text, JSON and base64, at about half the
// speed of level 6 (still twice zlib's); on random data it is 15 times
// slower than level 6, so a chunk whose bytes look random (order-0
// entropy of at least highEntropy bits a byte, where Huffman coding
// could save under 1.5%) is given to level 6, which stores it at once.
const (
	levelCompressible   = 7
	levelIncompressible = 6
	highEntropy         = 7.88
)

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
// each entry's content as the writer reads it, and then gives the
// signature.asc the writer appends after them. Package signing has one that
// hashes the entries for the attestation and appends signature.asc, so a
// build is signed without reading the assembly again.
type Sealer interface {
	// Entry returns where the content of the entry name goes, in order,
	// as the writer reads it (before it is compressed).
	Entry(name string) io.Writer
	// Seal returns signature.asc's content, and its date, once every
	// entry is written; the writer appends it as AppendSignature does.
	Seal() (data []byte, mod time.Time, err error)
}

// A Writer builds a byte-reproducible assembly: entries sorted by name,
// "/" separators, no directory entries, mode 0644, one fixed time, deflate
// at DeflateLevel. Add entries, then call WriteTo or WriteFile; file
// contents are streamed when the archive is written, in chunks, so memory
// does not grow with file sizes.
type Writer struct {
	opts      WriterOptions
	entries   []input
	trailer   *trailer
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

// A trailer is an entry made from the others' content (SetTrailer).
type trailer struct {
	name string
	make func(sums map[string][sha256.Size]byte) ([]byte, error)
}

// SetTrailer adds the entry name, written after all the others (and
// before a Sealer's end): make is called, once they are read, with the
// SHA-256 of every other entry's content by name, and returns its
// content. The sums are taken as the entries stream through, so nothing
// is read twice. Build's provenance is the one trailer (package
// provenance).
func (w *Writer) SetTrailer(name string, make func(sums map[string][sha256.Size]byte) ([]byte, error)) error {
	if w.trailer != nil {
		return fmt.Errorf("a trailer %q is already set", w.trailer.name)
	}
	if err := w.add(input{name: name, size: -1}); err != nil {
		return err
	}
	w.entries = w.entries[:len(w.entries)-1]
	w.trailer = &trailer{name: name, make: make}
	return nil
}

// Has reports whether an entry of that name was added.
func (w *Writer) Has(name string) bool { return w.names[name] }

// Names lists the entries added so far, sorted.
func (w *Writer) Names() []string { return slices.Sorted(maps.Keys(w.names)) }

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
	// flushed, when set (and c nil), is closed once every job before it
	// is done.
	flushed chan struct{}
}

func startHasher(n int) *hasher {
	h := &hasher{jobs: make(chan hashJob, n), done: make(chan error, 1)}
	go func() {
		var err error
		for j := range h.jobs {
			if j.flushed != nil {
				close(j.flushed)
				continue
			}
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
	sizes, err := entrySizes(entries)
	if err != nil {
		return 0, err
	}
	if w.trailer != nil {
		entries = append(entries, input{name: w.trailer.name, size: -1})
	}

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
	progress := newProgress(w.opts.Progress, sizes)
	go func() {
		err := readEntries(ctx, entries, w.trailer, jobs, ordered, progress, w.opts.Sealer, workers)
		close(jobs)
		close(ordered)
		readErr <- err
	}()

	cw := &limitio.Writer{W: dst}
	zw := zip.NewWriter(cw)
	err = writeChunks(ctx, zw, entries, mod, ordered)
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
		err = end(zw, cw, w.opts.Sealer, len(entries))
	}
	return cw.N, err
}

// end writes the end of the archive: the zip writer's central directory
// and end records go to a buffer first, to be mended (mendZip64Offsets),
// then out, or, with a Sealer, the entries' records are kept and the
// Sealer's signature.asc is appended before them (writeSignedTail). What the zip writer still had
// to write for the last entry (its data descriptor) goes out first.
func end(zw *zip.Writer, cw *limitio.Writer, s Sealer, n int) error {
	if err := zw.Flush(); err != nil {
		return err
	}
	flushed := cw.N
	var tail bytes.Buffer
	dst := cw.W
	cw.W = &tail
	err := zw.Close()
	cw.W, cw.N = dst, flushed
	if err != nil {
		return err
	}
	b := tail.Bytes()
	records, start, ok := centralRecords(b)
	if !ok {
		return errors.New("the zip writer's central directory cannot be read back")
	}
	mendZip64Offsets(records)
	if s == nil {
		_, err := cw.Write(b)
		return err
	}
	if len(records) != n {
		return fmt.Errorf("sealing: %d central directory records for %d entries", len(records), n)
	}
	if _, err := cw.Write(b[:start]); err != nil {
		return err
	}
	sig, mod, err := s.Seal()
	if err != nil {
		return err
	}
	return writeSignedTail(cw, flushed+int64(start), records, sig, mod)
}

// centralRecords finds the central directory in b, what the zip writer
// wrote after the last entry's data (its data descriptor, the directory,
// the end records and no comment), and returns its records (slices of b)
// and where it starts in b.
func centralRecords(b []byte) (records [][]byte, start int, ok bool) {
	if len(b) < endLen || le32(b[len(b)-endLen:]) != sigEnd {
		return nil, 0, false
	}
	end := len(b) - endLen
	size := uint64(le32(b[end+12:]))
	if size == u32max {
		if end < loc64Len+end64Len || le32(b[end-loc64Len-end64Len:]) != sigEnd64 {
			return nil, 0, false
		}
		end -= loc64Len + end64Len
		size = le64(b[end+40:])
	}
	if size > uint64(end) {
		return nil, 0, false
	}
	start = end - int(size)
	for p := start; p < end; {
		if p+centralLen > end || le32(b[p:]) != sigCentral {
			return nil, 0, false
		}
		next := p + centralLen + int(le16(b[p+28:])) + int(le16(b[p+30:])) + int(le16(b[p+32:]))
		if next > end {
			return nil, 0, false
		}
		records = append(records, b[p:next])
		p = next
	}
	return records, start, true
}

// mendZip64Offsets mends central directory records (in place). For a file
// of 4 GiB or more the zip package, like archive/zip (golang/go#33116),
// writes a zip64 field holding the sizes and the local header offset, but
// the offset itself in the record's offset field; APPNOTE 4.5.3 allows a
// value in the zip64 field only when the record field is 0xFFFFFFFF, and
// 7-Zip reports "Headers Error". The record's offset field is set to
// 0xFFFFFFFF, as the rule wants: same length, same values.
func mendZip64Offsets(records [][]byte) {
	for _, r := range records {
		nameLen, extraLen := int(le16(r[28:])), int(le16(r[30:]))
		offset := le32(r[42:])
		for extra := r[centralLen+nameLen : centralLen+nameLen+extraLen]; len(extra) >= 4; {
			n := int(le16(extra[2:]))
			if len(extra) < 4+n {
				break
			}
			if le16(extra) == 0x0001 && n == 24 && offset != u32max && le32(r[20:]) == u32max && le32(r[24:]) == u32max && le64(extra[20:]) == uint64(offset) {
				binary.LittleEndian.PutUint32(r[42:], u32max)
			}
			extra = extra[4+n:]
		}
	}
}

// flush waits until every chunk given so far is hashed.
func (h *hasher) flush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case h.jobs <- hashJob{flushed: done}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// readEntries reads every entry in order, cuts it into chunks, and hands
// each chunk both to the workers and, in order, to the writer. With a
// trailer, entries ends with its placeholder: the others' content is
// hashed as it passes, and the trailer's content made from the sums.
func readEntries(ctx context.Context, entries []input, tr *trailer, jobs, ordered chan<- *chunk, progress func(int64), sealer Sealer, workers int) (err error) {
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
	if sealer != nil || tr != nil {
		h = startHasher(2*workers + 2)
		defer func() {
			if herr := h.wait(); err == nil && herr != nil {
				err = fmt.Errorf("sealing: %w", herr)
			}
		}()
	}
	var total int64
	var sums map[string]hash.Hash
	if tr != nil {
		sums = make(map[string]hash.Hash, len(entries)-1)
	}
	for i, e := range entries {
		if tr != nil && i == len(entries)-1 {
			if err := h.flush(ctx); err != nil {
				return err
			}
			got := make(map[string][sha256.Size]byte, len(sums))
			for name, s := range sums {
				got[name] = [sha256.Size]byte(s.Sum(nil))
			}
			data, err := tr.make(got)
			if err != nil {
				return fmt.Errorf("%s: %w", e.name, err)
			}
			e = input{name: e.name, size: int64(len(data)), data: data}
		}
		hash := func(*chunk) error { return nil }
		if h != nil {
			var sink io.Writer
			if sealer != nil {
				sink = sealer.Entry(e.name)
			}
			if tr != nil && i < len(entries)-1 {
				s := sha256.New()
				sums[e.name] = s
				if sink == nil {
					sink = s
				} else {
					sink = io.MultiWriter(sink, s)
				}
			}
			if sink == nil {
				sink = io.Discard
			}
			hash = func(c *chunk) error {
				c.refs.Add(1)
				select {
				case h.jobs <- hashJob{w: sink, c: c}:
					return nil
				case <-ctx.Done():
					c.release()
					return ctx.Err()
				}
			}
		}
		if err := readEntry(i, e, send, progress, &total, hash); err != nil {
			return err
		}
	}
	progress(0)
	return nil
}

// entrySizes returns each entry's size as far as it is known before it is
// read (-1 when not), and refuses, before anything is read, what the
// reader would refuse: a file over MaxFileSize, files adding up to more
// than MaxTotalSize. (readEntry checks the bytes it really reads.)
func entrySizes(entries []input) ([]int64, error) {
	sizes := make([]int64, len(entries))
	var total int64
	for i, e := range entries {
		size := e.size
		if size < 0 && e.path != "" {
			if st, err := os.Stat(e.path); err == nil && st.Mode().IsRegular() {
				size = st.Size()
			}
		}
		sizes[i] = size
		if size > MaxFileSize {
			return nil, fmt.Errorf("%w: %s is %d bytes, at most %d allowed", ErrTooLarge, e.name, size, int64(MaxFileSize))
		}
		if total += max(size, 0); total > MaxTotalSize {
			return nil, fmt.Errorf("%w: files add up to more than %d bytes", ErrTooLarge, int64(MaxTotalSize))
		}
	}
	return sizes, nil
}

// newProgress returns the function readEntries calls with the bytes of
// each chunk it read: it keeps the count and passes it on to report, with
// the total of sizes (-1 when a size is not known in advance).
func newProgress(report func(done, total int64), sizes []int64) func(n int64) {
	if report == nil {
		return func(int64) {}
	}
	var total int64
	for _, size := range sizes {
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

// readEntry reads entry i, adding its bytes to *total (all entries so
// far), and gives each chunk to hash (a Sealer's) before send.
func readEntry(i int, e input, send func(*chunk) error, progress func(int64), total *int64, hash func(*chunk) error) error {
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
		if *total += int64(n); *total > MaxTotalSize {
			return fmt.Errorf("%w: files add up to more than %d bytes", ErrTooLarge, int64(MaxTotalSize))
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
	lazy, _ := flate.NewWriter(io.Discard, levelCompressible)
	fast, _ := flate.NewWriter(io.Discard, levelIncompressible)
	for c := range jobs {
		out := outPool.Get().(*bytes.Buffer)
		out.Reset()
		fw := lazy
		if entropy(c.data) >= highEntropy {
			fw = fast
		}
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

// entropy is the order-0 entropy of p in bits a byte: 8 for random bytes,
// about 6 for base64, 4 to 5 for text.
func entropy(p []byte) float64 {
	if len(p) == 0 {
		return 0
	}
	// Four tables, so that runs of one byte do not serialize on one counter.
	var h [4][256]uint32
	i := 0
	for ; i+4 <= len(p); i += 4 {
		h[0][p[i]]++
		h[1][p[i+1]]++
		h[2][p[i+2]]++
		h[3][p[i+3]]++
	}
	for ; i < len(p); i++ {
		h[0][p[i]]++
	}
	n := float64(len(p))
	var e float64
	for b := 0; b < 256; b++ {
		if c := h[0][b] + h[1][b] + h[2][b] + h[3][b]; c > 0 {
			f := float64(c) / n
			e -= f * math.Log2(f)
		}
	}
	return e
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
