package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/limitio"
)

// Options tune how locations are read and written. The zero value is
// ready to use.
type Options struct {
	// Transport carries HTTPS and OCI requests (TLS roots, proxies); nil:
	// a clone of http.DefaultTransport. Whatever it is, plain HTTP goes
	// only to loopback hosts and redirects keep their scheme.
	Transport http.RoundTripper
	// S3 is the client for s3:// locations; nil: one made from the AWS
	// SDK's default configuration (environment, profiles, SSO, roles,
	// AWS_ENDPOINT_URL).
	S3 *s3.Client
	// Keychain finds registry credentials; nil: authn.DefaultKeychain (the
	// Docker configuration and its credential helpers).
	Keychain authn.Keychain
	// Digest, when set, pins what must arrive: an OCI manifest naming
	// another blob fails at Open, and SHA256 fails on other bytes.
	Digest digest.Digest

	// RequestTimeout bounds each request, headers and body (default 2m).
	RequestTimeout time.Duration
	// StallTimeout bounds how long a body may send nothing (default 30s).
	StallTimeout time.Duration
	// Retries is how many times a transient failure (network error,
	// timeout, 5xx, 429) is retried, with exponential backoff (default 4;
	// negative: never).
	Retries int
	// Parallel bounds the ranged requests in flight (default 8).
	Parallel int

	// TempDir is where an Object spools the bytes it fetched, in an
	// unnamed file (default os.TempDir()).
	TempDir string

	// PartSize is the part size of S3 multipart uploads, used for files
	// larger than it (default 64 MiB, at least 5 MiB).
	PartSize int64
	// Progress, if set, is called as a push sends the file, with the
	// bytes sent so far and the total.
	Progress func(done, total int64)
}

const (
	blockSize  = 64 << 10  // the spool's unit, and an isolated small read's request
	runBlocks  = 64        // a sequential read's first request, and a large read's: 4 MiB
	maxRun     = 256       // and its largest, in blocks: 16 MiB (the run grows with the stream)
	nearTail   = 1 << 20   // a read this close before the tail fetches up to it
	aheadRuns  = 2         // read-ahead of a sequential stream, in runs
	tailSize   = 256 << 10 // read with the first request: end of central directory, signature, manifest
	maxStreams = 16        // sequential streams tracked
	fillChunk  = 16 << 20  // what SHA256 asks for at once when it fills the gaps
)

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.RequestTimeout <= 0 {
		r.RequestTimeout = 2 * time.Minute
	}
	if r.StallTimeout <= 0 {
		r.StallTimeout = 30 * time.Second
	}
	if r.Retries == 0 {
		r.Retries = 4
	} else if r.Retries < 0 {
		r.Retries = 0
	}
	if r.Parallel <= 0 {
		r.Parallel = 8
	}
	if r.PartSize <= 0 {
		r.PartSize = 64 << 20
	}
	r.PartSize = max(r.PartSize, 5<<20)
	if r.Keychain == nil {
		r.Keychain = authn.DefaultKeychain
	}
	return r
}

// A source is one scheme's ranged reads of one object.
type source interface {
	// open makes the first request: the object's size and pin, and its
	// last bytes (up to n).
	open(ctx context.Context, n int64) (size int64, pin string, tail []byte, err error)
	// get returns the body of bytes [off, off+n), its status, bounds, size
	// and pin checked against the first response's.
	get(ctx context.Context, off, n int64) (io.ReadCloser, error)
}

// An Object is a remote file opened for reading: an io.ReaderAt with a
// size, for assembly.NewReader. It is safe for concurrent use. Close it to
// stop read-ahead and remove its spool.
//
// Every byte of the object is fetched from the network at most once: the
// last bytes come with the first request and stay in memory, every other
// byte goes, as it arrives, to an unnamed temporary file (the spool), and
// every read is served from there. A server that would send other bytes
// the second time (no validator, If-Match ignored, a file replaced) is
// never asked twice, so the bytes a caller verified, the bytes SHA256
// hashed and the bytes read again to be written somewhere are the same
// bytes.
type Object struct {
	loc     *Location
	size    int64
	pin     string
	want    digest.Digest // the SHA-256 the bytes must have, when known
	src     source
	opts    Options
	ctx     context.Context
	cancel  context.CancelFunc
	sem     chan struct{}
	tail    []byte
	tailOff int64
	spool   *os.File // nil when the tail is the whole file
	spoolRm string   // the spool's name when it could not be removed at once
	wg      sync.WaitGroup
	bufs    sync.Pool

	mu       sync.Mutex
	inflight map[int64]*fetch // block index: the fetch bringing it
	have     []uint64         // blocks in the spool, a bit each
	streams  [maxStreams]stream
	tick     uint64

	// The whole file's SHA-256, taken from the spool in order as the
	// blocks arrive (see SHA256).
	hmu  sync.Mutex
	h    *digest.Hasher
	hoff int64
	herr error
	sum  digest.Digest

	requests, received atomic.Int64

	// The referrers, read once (Referrers).
	refOnce sync.Once
	refs    []Referrer
	refErr  error
}

// A fetch is one ranged request for the blocks [first, first+n).
type fetch struct {
	first, n int64
	done     chan struct{}
	err      error
}

type stream struct {
	end, run int64
	used     uint64
	hops     int  // reads that continued it
	skips    bool // some of them skipped bytes
}

// Open opens the location for reading, with one request to the server
// (OCI: also the registry's ping and the manifest) that learns the size
// and the version to pin and reads the end of the file. The object's
// reads stop when ctx is done.
func Open(ctx context.Context, location string, opts *Options) (*Object, error) {
	loc, err := Parse(location)
	if err != nil {
		return nil, err
	}
	return OpenLocation(ctx, loc, opts)
}

// OpenLocation is Open of a parsed location.
func OpenLocation(ctx context.Context, loc *Location, opts *Options) (*Object, error) {
	o := &Object{loc: loc, opts: opts.withDefaults(), inflight: map[int64]*fetch{}, h: digest.NewHasher()}
	o.want = o.opts.Digest
	o.sem = make(chan struct{}, o.opts.Parallel)
	o.bufs.New = func() any { b := make([]byte, blockSize); return &b }
	var err error
	switch loc.Scheme {
	case SchemeHTTPS, SchemeHTTP:
		o.src = newHTTPSource(loc, &o.opts)
	case SchemeS3:
		o.src, err = newS3Source(ctx, loc, &o.opts)
	case SchemeOCI:
		var s *ociSource
		s, err = newOCISource(ctx, loc, &o.opts, o)
		if err == nil {
			blob, err := digest.Parse(s.digest.String())
			if err != nil {
				return nil, fmt.Errorf("%w: %s names blob %s: %w", ErrNotAssembly, loc, s.digest, err)
			}
			if !o.want.IsZero() && blob != o.want {
				return nil, fmt.Errorf("%w: %s names blob %s, not the %s asked for", ErrDigestMismatch, loc, blob, o.want)
			}
			o.want = blob
		}
		o.src = s
	}
	if err != nil {
		return nil, err
	}
	o.ctx, o.cancel = context.WithCancel(ctx)
	err = o.retry(ctx, func(rctx context.Context) error {
		size, pin, tail, err := o.src.open(rctx, tailSize)
		if err == nil {
			o.received.Add(int64(len(tail)))
			o.size, o.pin, o.tail, o.tailOff = size, pin, tail, size-int64(len(tail))
		}
		return err
	})
	if err == nil && o.tailOff > 0 {
		err = o.makeSpool()
	}
	if err != nil {
		o.cancel()
		return nil, fmt.Errorf("open %s: %w", loc, err)
	}
	o.have = make([]uint64, (o.blocks()+63)/64)
	return o, nil
}

// makeSpool creates the unnamed file the fetched bytes go to.
func (o *Object) makeSpool() error {
	f, err := os.CreateTemp(o.opts.TempDir, ".assemble-spool-*")
	if err != nil {
		return fmt.Errorf("creating the spool: %w", err)
	}
	if os.Remove(f.Name()) != nil { // an open file cannot be removed everywhere
		o.spoolRm = f.Name()
	}
	o.spool = f
	return nil
}

// Manifest is the OCI manifest the assembly was found through, as the
// registry sent it (for Push to copy it as it is); nil for S3, HTTPS and
// a blob read by its digest.
func (o *Object) Manifest() []byte {
	if s, ok := o.src.(*ociSource); ok && s.raw != nil {
		return s.raw
	}
	return nil
}

// Size is the object's size in bytes.
func (o *Object) Size() int64 { return o.size }

// Location is the location as given to Open.
func (o *Object) Location() *Location { return o.loc }

// Version is what pins the object: the ETag or version ID the first
// response had, or the OCI blob's digest.
func (o *Object) Version() string { return o.pin }

// Digest is the SHA-256 the bytes must have: the OCI blob's digest or
// Options.Digest; zero when neither says.
func (o *Object) Digest() digest.Digest { return o.want }

// Stats are the requests made and the bytes received so far.
func (o *Object) Stats() (requests, bytes int64) { return o.requests.Load(), o.received.Load() }

// Close stops read-ahead and removes the spool; reads after Close fail.
func (o *Object) Close() error {
	o.cancel()
	o.wg.Wait()
	if o.spool != nil {
		o.spool.Close()
		if o.spoolRm != "" {
			os.Remove(o.spoolRm)
		}
	}
	return nil
}

// blocks is the number of blocks before the tail.
func (o *Object) blocks() int64 { return (o.tailOff + blockSize - 1) / blockSize }

// has reports whether block i is in the spool. The caller holds o.mu.
func (o *Object) has(i int64) bool { return o.have[i/64]&(1<<(i%64)) != 0 }

// ReadAt reads len(p) bytes at off, as io.ReaderAt does.
func (o *Object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("negative offset %d", off)
	}
	if off >= o.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	var eof error
	if int64(len(p)) > o.size-off {
		p, eof = p[:o.size-off], io.EOF
	}
	if o.ctx.Err() != nil {
		return 0, fmt.Errorf("read %s: %w", o.loc, o.closed())
	}
	n := 0
	if off < o.tailOff {
		end := min(off+int64(len(p)), o.tailOff)
		if err := o.ensure(o.ctx, off, end, true); err != nil {
			return 0, fmt.Errorf("read %s: %w", o.loc, err)
		}
		m, err := o.spool.ReadAt(p[:end-off], off)
		if err != nil {
			return m, fmt.Errorf("read %s: the spool: %w", o.loc, err)
		}
		n = m
	}
	if n < len(p) {
		n += copy(p[n:], o.tail[off+int64(n)-o.tailOff:])
	}
	return n, eof
}

// closed is why a read of a closed object fails: the context's end
// (ErrTimeout for a deadline), or Close.
func (o *Object) closed() error {
	if errors.Is(o.ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: the operation's deadline passed", ErrTimeout)
	}
	if err := context.Cause(o.ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return errors.New("object closed")
}

// ensure makes sure the blocks holding [from, to), all before the tail,
// are in the spool: it starts fetches for those that are neither there
// nor on their way and waits for all of them. A sequential stream (seq:
// the caller's reads, tracked) fetches in runs that grow with it and
// reads ahead.
func (o *Object) ensure(ctx context.Context, from, to int64, seq bool) error {
	first, last := from/blockSize, (to-1)/blockSize
	o.mu.Lock()
	var run int64
	var ahead bool
	if seq {
		run, ahead = o.track(from, to-from)
	}
	var waits []*fetch
	for i := first; i <= last; {
		if o.has(i) {
			i++
			continue
		}
		if f := o.inflight[i]; f != nil {
			waits = append(waits, f)
			i = f.first + f.n
			continue
		}
		j := i
		for j <= last && !o.has(j) && o.inflight[j] == nil {
			j++
		}
		chunk := int64(runBlocks)
		switch tb := o.blocks(); {
		case run > 0:
			// A stream's request runs past what it asked for.
			chunk = run
			j = max(j, min(i+run, tb))
		case j-i == 1 && (tb-i)*blockSize <= nearTail:
			// The entries just before the central directory (the
			// manifest, small files, the signature) are read one local
			// header at a time: one request takes them all.
			j = tb
		}
		for i < j {
			f := o.start(i, min(chunk, j-i), false)
			if f == nil {
				break
			}
			if f.first <= last {
				waits = append(waits, f)
			}
			i = f.first + f.n
		}
	}
	if run > 0 && ahead {
		o.readAhead(last, run)
	}
	o.mu.Unlock()
	for _, f := range waits {
		select {
		case <-f.done:
		case <-ctx.Done():
			if ctx == o.ctx {
				return o.closed()
			}
			return ctxError(ctx, ctx.Err())
		}
		if f.err != nil {
			return f.err
		}
	}
	return nil
}

// track notes a read of [off, off+n). A read that starts where a
// stream's last read ended, or up to a block after it (a ZIP's local
// headers read one after another, the small entries between them
// skipped), continues that stream; once the stream has covered a block,
// or after its third read, it returns the blocks to fetch at once for it:
// 4 MiB, growing with the stream to 16 MiB (a quarter of what it
// covered), so that a long read, or many headers, take few requests;
// else 0. ahead says whether the stream reads every byte (read-ahead
// pays), not only some. The caller holds o.mu.
func (o *Object) track(off, n int64) (run int64, ahead bool) {
	o.tick++
	oldest := 0
	for i := range o.streams {
		s := &o.streams[i]
		if s.used != 0 && off >= s.end && off <= s.end+blockSize {
			s.hops++
			if s.run >= blockSize || s.hops >= 3 {
				run = min(maxRun, max(runBlocks, s.run/blockSize/4))
			}
			s.skips = s.skips || off > s.end
			s.run += off + n - s.end
			s.end, s.used = off+n, o.tick
			return run, !s.skips
		}
		if s.used < o.streams[oldest].used {
			oldest = i
		}
	}
	o.streams[oldest] = stream{end: off + n, run: n, used: o.tick}
	return 0, false
}

// readAhead starts fetching the first missing run of blocks after last
// within the read-ahead window, when a request slot is free. The caller
// holds o.mu.
func (o *Object) readAhead(last, run int64) {
	for j := last + 1; j <= min(last+aheadRuns*run, o.blocks()-1); j++ {
		if o.has(j) || o.inflight[j] != nil {
			continue
		}
		select {
		case o.sem <- struct{}{}:
			o.start(j, run, true)
		default:
		}
		return
	}
}

// start fetches up to n blocks from first (stopping before the tail and
// before a block that is in the spool or on its way) in one request, in
// the background, and returns the fetch (nil when block first needs
// none). The caller holds o.mu, and a request slot if slot (else the
// fetch waits for one); the fetch frees it.
func (o *Object) start(first, n int64, slot bool) *fetch {
	f := &fetch{first: first, done: make(chan struct{})}
	for i := first; i < first+n && i < o.blocks() && !o.has(i) && o.inflight[i] == nil; i++ {
		o.inflight[i] = f
		f.n++
	}
	if f.n == 0 {
		if slot {
			<-o.sem
		}
		return nil
	}
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		err := o.closed()
		if !slot {
			select {
			case o.sem <- struct{}{}:
				slot = true
			case <-o.ctx.Done():
			}
		}
		if slot {
			err = o.fetchSpan(f)
			<-o.sem
		}
		o.mu.Lock()
		for i := f.first; i < f.first+f.n; i++ {
			delete(o.inflight, i)
			if err == nil {
				o.have[i/64] |= 1 << (i % 64)
			}
		}
		f.err = err
		close(f.done)
		o.mu.Unlock()
		if err == nil {
			o.advanceHash()
		}
	}()
	return f
}

// fetchSpan reads the blocks of f in one request, straight into the
// spool. A failed request may leave part of them written: they are not
// marked as there, and the retry writes them again before anyone reads
// them.
func (o *Object) fetchSpan(f *fetch) error {
	off := f.first * blockSize
	end := min((f.first+f.n)*blockSize, o.tailOff)
	buf := o.bufs.Get().(*[]byte)
	defer o.bufs.Put(buf)
	return o.get(o.ctx, off, end-off, func(body io.Reader) error {
		for at := off; at < end; {
			p := (*buf)[:min(int64(len(*buf)), end-at)]
			if err := readFull(body, p); err != nil {
				return err
			}
			if _, err := o.spool.WriteAt(p, at); err != nil {
				return fmt.Errorf("writing the spool: %w", err)
			}
			at += int64(len(p))
		}
		return nil
	})
}

// readFull fills p from a range body; a body that ends early is a
// transient failure (a cut connection looks the same).
func readFull(body io.Reader, p []byte) error {
	n, err := io.ReadFull(body, p)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return transient{fmt.Errorf("%w: range response ended after %d of %d bytes", ErrBadResponse, n, len(p))}
	}
	return err
}

// get fetches [off, off+n) with retries, passing the body to fill, and
// checks that the body holds no more than n bytes.
func (o *Object) get(ctx context.Context, off, n int64, fill func(io.Reader) error) error {
	return o.retry(ctx, func(rctx context.Context) error {
		body, err := o.src.get(rctx, off, n)
		if err != nil {
			return err
		}
		defer body.Close()
		cr := &limitio.Reader{R: body, Add: func(n int64) { o.received.Add(n) }}
		if err := fill(cr); err != nil {
			return err
		}
		var one [1]byte
		if m, _ := io.ReadFull(cr, one[:]); m > 0 {
			return fmt.Errorf("%w: range response for bytes %d-%d is longer than %d bytes", ErrBadResponse, off, off+n-1, n)
		}
		return nil
	})
}

// A transient error is worth retrying.
type transient struct{ err error }

func (t transient) Error() string { return t.err.Error() }
func (t transient) Unwrap() error { return t.err }

func isTransient(err error) bool {
	var t transient
	if errors.As(err, &t) || errors.Is(err, ErrTimeout) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	if errors.Is(err, ErrChanged) || errors.Is(err, ErrBadResponse) || errors.Is(err, ErrNotFound) ||
		errors.Is(err, ErrRedirect) || errors.Is(err, ErrLocation) || errors.Is(err, ErrNotAssembly) ||
		errors.Is(err, ErrDigestMismatch) || errors.Is(err, context.Canceled) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || strings.Contains(err.Error(), "connection reset")
}

// errStall is the cause of a request cancelled because its body stalled.
var errStall = errors.New("stalled")

// retry runs one request at a time under its own deadline and stall
// watch, retrying transient failures with exponential backoff and jitter.
func (o *Object) retry(ctx context.Context, req func(context.Context) error) error {
	var err error
	for attempt := 0; ; attempt++ {
		o.requests.Add(1)
		err = o.attempt(ctx, req)
		if err == nil || ctx.Err() != nil || !isTransient(err) || attempt >= o.opts.Retries {
			if ctx.Err() != nil && err != nil {
				err = ctxError(ctx, err)
			}
			return err
		}
		d := min(100*time.Millisecond<<attempt, 5*time.Second)
		d = d/2 + rand.N(d/2+1)
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctxError(ctx, err)
		}
	}
}

// ctxError is err, a request's failure once ctx ended: a deadline passed
// is ErrTimeout.
func ctxError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: the operation's deadline passed (%v)", ErrTimeout, err)
	}
	if errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("%w (%w)", ctx.Err(), err)
}

func (o *Object) attempt(ctx context.Context, req func(context.Context) error) error {
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	rctx, cancelT := context.WithTimeout(rctx, o.opts.RequestTimeout)
	defer cancelT()
	// The stall watch: sources call stalled.Reset on progress through
	// the context (watchBody).
	w := &watch{d: o.opts.StallTimeout}
	w.t = time.AfterFunc(w.d, func() { cancel(errStall) })
	defer w.t.Stop()
	err := req(context.WithValue(rctx, watchKey{}, w))
	if err != nil {
		switch {
		case context.Cause(rctx) == errStall:
			return fmt.Errorf("%w: no data for %v", ErrTimeout, o.opts.StallTimeout)
		case ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded):
			return fmt.Errorf("%w: the request took longer than %v", ErrTimeout, o.opts.RequestTimeout)
		}
	}
	return err
}

type watchKey struct{}

type watch struct {
	t *time.Timer
	d time.Duration
}

// watchBody wraps a response body so that each read that makes progress
// resets the request's stall timer.
func watchBody(ctx context.Context, body io.ReadCloser) io.ReadCloser {
	w, _ := ctx.Value(watchKey{}).(*watch)
	if w == nil {
		return body
	}
	return &watchedBody{body, w}
}

type watchedBody struct {
	io.ReadCloser
	w *watch
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.w.t.Reset(b.w.d)
	}
	return n, err
}

// advanceHash hashes, from the spool, the blocks that continue the whole
// file's hash. Every fetch calls it once its blocks are in the spool, so
// that blocks that arrive out of order are hashed when the ones before
// them arrive.
func (o *Object) advanceHash() {
	o.hmu.Lock()
	defer o.hmu.Unlock()
	buf := o.bufs.Get().(*[]byte)
	defer o.bufs.Put(buf)
	for o.hoff < o.tailOff && o.herr == nil {
		o.mu.Lock()
		ok := o.has(o.hoff / blockSize)
		o.mu.Unlock()
		if !ok {
			return
		}
		p := (*buf)[:min(int64(len(*buf)), o.tailOff-o.hoff)]
		if _, err := o.spool.ReadAt(p, o.hoff); err != nil {
			o.herr = fmt.Errorf("reading the spool: %w", err)
			return
		}
		o.h.Write(p)
		o.hoff += int64(len(p))
	}
}

// SHA256 returns the whole file's SHA-256, and checks it against Digest
// (ErrDigestMismatch). The bytes were hashed as they arrived in order;
// SHA256 fetches those that never arrived, so that a file read from start
// to end, as verify reads it, is fetched once.
func (o *Object) SHA256(ctx context.Context) (digest.Digest, error) {
	for {
		o.advanceHash()
		o.hmu.Lock()
		off, herr, sum := o.hoff, o.herr, o.sum
		o.hmu.Unlock()
		if herr != nil {
			return digest.Digest{}, fmt.Errorf("read %s: %w", o.loc, herr)
		}
		if !sum.IsZero() {
			return o.check(sum)
		}
		if off >= o.tailOff {
			break
		}
		if err := o.ensure(ctx, off, min(off+fillChunk, o.tailOff), false); err != nil {
			return digest.Digest{}, fmt.Errorf("read %s: %w", o.loc, err)
		}
		if err := ctx.Err(); err != nil {
			return digest.Digest{}, ctxError(ctx, err)
		}
	}
	o.hmu.Lock()
	if o.sum.IsZero() {
		o.h.Write(o.tail)
		o.sum = o.h.Digest()
	}
	sum := o.sum
	o.hmu.Unlock()
	return o.check(sum)
}

func (o *Object) check(sum digest.Digest) (digest.Digest, error) {
	if !o.want.IsZero() && sum != o.want {
		return digest.Digest{}, fmt.Errorf("%w: %s has %s, not %s", ErrDigestMismatch, o.loc, sum, o.want)
	}
	return sum, nil
}
