package remote

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-containerregistry/pkg/authn"
	"golang.org/x/sync/errgroup"
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
	// Digest, "sha256:HEX", pins what must arrive: an OCI manifest naming
	// another blob fails at Open, and CheckDigest fails on other bytes.
	Digest string

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
	// CacheSize bounds the bytes of blocks kept for small reads (default
	// 32 MiB); read-ahead and large reads add at most Parallel requests of
	// up to 16 MiB.
	CacheSize int64

	// Spool, if set, gets every byte as it arrives, written at its
	// offset (pull writes the file it verifies this way, from one
	// download). Once SHA256 has succeeded it holds the whole file. A
	// write error fails the read that brought the bytes.
	Spool io.WriterAt

	// PartSize is the part size of S3 multipart uploads, used for files
	// larger than it (default 64 MiB, at least 5 MiB).
	PartSize int64
	// Now is the creation time written into an OCI manifest (default
	// time.Now).
	Now func() time.Time
}

const (
	blockSize  = 64 << 10  // the cache's unit, and an isolated small read's request
	runBlocks  = 64        // a sequential read's first request: 4 MiB
	maxRun     = 256       // and its largest, in blocks: 16 MiB (the run grows with the stream)
	nearTail   = 1 << 20   // a read this close before the tail fetches up to it
	aheadRuns  = 2         // read-ahead of a sequential stream, in runs
	tailSize   = 256 << 10 // read with the first request: end of central directory, signature, manifest
	directMin  = 1 << 20   // reads this large bypass the cache
	maxStreams = 16        // sequential streams tracked
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
	if r.CacheSize <= 0 {
		r.CacheSize = 32 << 20
	}
	if r.PartSize <= 0 {
		r.PartSize = 64 << 20
	}
	r.PartSize = max(r.PartSize, 5<<20)
	if r.Now == nil {
		r.Now = time.Now
	}
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
// stop read-ahead.
type Object struct {
	loc     *Location
	size    int64
	pin     string
	want    string // the SHA-256 (hex) the bytes must have, when known
	src     source
	opts    Options
	ctx     context.Context
	cancel  context.CancelFunc
	sem     chan struct{}
	tail    []byte
	tailOff int64

	mu      sync.Mutex
	blocks  map[int64]*block
	lru     *list.List // completed blocks, most recently used first
	cached  int64
	streams [maxStreams]stream
	tick    uint64
	pool    sync.Pool

	// The whole file's SHA-256, taken from the bytes as they arrive in
	// order (see SHA256).
	hmu  sync.Mutex
	h    hash.Hash
	hoff int64

	requests, received atomic.Int64
}

type block struct {
	idx  int64
	data []byte
	done chan struct{}
	err  error
	refs int
	elem *list.Element
}

type stream struct {
	end, run int64
	used     uint64
}

// Open opens the location for reading, with one request to the server
// (OCI: also the registry's ping and the manifest) that learns the size
// and the version to pin and reads the end of the file.
func Open(ctx context.Context, location string, opts *Options) (*Object, error) {
	loc, err := Parse(location)
	if err != nil {
		return nil, err
	}
	return OpenLocation(ctx, loc, opts)
}

// OpenLocation is Open of a parsed location.
func OpenLocation(ctx context.Context, loc *Location, opts *Options) (*Object, error) {
	o := &Object{loc: loc, opts: opts.withDefaults(), blocks: map[int64]*block{}, lru: list.New(), h: sha256.New()}
	if d := o.opts.Digest; d != "" {
		hx, err := ParseDigest(d)
		if err != nil {
			return nil, err
		}
		o.want = hx
	}
	o.sem = make(chan struct{}, o.opts.Parallel)
	o.pool.New = func() any { b := make([]byte, blockSize); return &b }
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
			if o.want != "" && s.digest.Hex != o.want {
				return nil, fmt.Errorf("%w: %s names blob %s, not the sha256:%s asked for", ErrDigestMismatch, loc, s.digest, o.want)
			}
			o.want = s.digest.Hex
		}
		o.src = s
	}
	if err != nil {
		return nil, err
	}
	o.ctx, o.cancel = context.WithCancel(context.WithoutCancel(ctx))
	err = o.retry(ctx, func(rctx context.Context) error {
		size, pin, tail, err := o.src.open(rctx, tailSize)
		if err == nil {
			err = o.spool(tail, size-int64(len(tail)))
		}
		if err == nil {
			o.received.Add(int64(len(tail)))
			o.size, o.pin, o.tail, o.tailOff = size, pin, tail, size-int64(len(tail))
		}
		return err
	})
	if err != nil {
		o.cancel()
		return nil, fmt.Errorf("open %s: %w", loc, err)
	}
	if o.tailOff == 0 { // the whole file came with the first request
		o.hashFrom(0, o.tail)
	}
	return o, nil
}

// Size is the object's size in bytes.
func (o *Object) Size() int64 { return o.size }

// Location is the location as given to Open.
func (o *Object) Location() *Location { return o.loc }

// Version is what pins the object: the ETag or version ID the first
// response had, or the OCI blob's digest.
func (o *Object) Version() string { return o.pin }

// Digest is the SHA-256 the bytes must have ("sha256:HEX"): the OCI blob's
// digest or Options.Digest; empty when neither says.
func (o *Object) Digest() string {
	if o.want == "" {
		return ""
	}
	return "sha256:" + o.want
}

// Stats are the requests made and the bytes received so far.
func (o *Object) Stats() (requests, bytes int64) { return o.requests.Load(), o.received.Load() }

// Close stops read-ahead; reads after Close fail.
func (o *Object) Close() error {
	o.cancel()
	return nil
}

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
	if err := o.ctx.Err(); err != nil {
		return 0, fmt.Errorf("read %s: object closed", o.loc)
	}
	if off >= o.tailOff {
		return copy(p, o.tail[off-o.tailOff:]), eof
	}
	o.mu.Lock()
	run := o.track(off, int64(len(p)))
	o.mu.Unlock()
	n := 0
	for n < len(p) {
		pos := off + int64(n)
		// A large span of blocks that are neither cached nor on their
		// way is read straight into p.
		if span := o.missing(pos, off+int64(len(p))); span >= directMin {
			if err := o.readDirect(p[n:int64(n)+span], pos); err != nil {
				return n, fmt.Errorf("read %s: %w", o.loc, err)
			}
			n += int(span)
			continue
		}
		b, err := o.block(pos/blockSize, run)
		if err != nil {
			return n, fmt.Errorf("read %s: %w", o.loc, err)
		}
		n += copy(p[n:], b.data[pos-b.idx*blockSize:])
		o.release(b)
	}
	return n, eof
}

// missing returns how many bytes from pos (up to end) lie in blocks that
// are neither cached nor being fetched.
func (o *Object) missing(pos, end int64) int64 {
	if end-pos < directMin {
		return 0
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	i := pos / blockSize
	for ; i*blockSize < end && o.blocks[i] == nil; i++ {
	}
	return min(i*blockSize, end) - pos
}

// track notes a read of [off, off+n). When it continues a sequential
// stream that has read at least a block, it returns the blocks to fetch
// at once for it: 4 MiB, growing with the stream to 16 MiB (a quarter of
// what it read), so that a long read takes few requests; else 0.
func (o *Object) track(off, n int64) int64 {
	o.tick++
	oldest := 0
	for i := range o.streams {
		s := &o.streams[i]
		if s.used != 0 && s.end == off {
			run := int64(0)
			if s.run >= blockSize {
				run = min(maxRun, max(runBlocks, s.run/blockSize/4))
			}
			s.end, s.run, s.used = off+n, s.run+n, o.tick
			return run
		}
		if s.used < o.streams[oldest].used {
			oldest = i
		}
	}
	o.streams[oldest] = stream{end: off + n, run: n, used: o.tick}
	return 0
}

// block returns block idx, fetching it (and, for a sequential stream, the
// blocks after it) when it is not cached. The caller releases it.
func (o *Object) block(idx int64, run int64) (*block, error) {
	o.mu.Lock()
	b := o.blocks[idx]
	if b == nil {
		n := int64(1)
		if tb := o.tailOff / blockSize; run > 0 {
			n = run
		} else if idx < tb && (tb-idx)*blockSize <= nearTail {
			// The entries just before the central directory (the
			// manifest, small files, the signature) are read one local
			// header at a time: one request takes them all.
			n = tb - idx + 1
		}
		o.startRun(idx, n, false)
		b = o.blocks[idx]
	} else if b.elem != nil {
		o.lru.MoveToFront(b.elem)
	}
	b.refs++
	if run > 0 {
		o.readAhead(idx, run)
	}
	o.mu.Unlock()
	select {
	case <-b.done:
	case <-o.ctx.Done():
		o.release(b)
		return nil, errors.New("object closed")
	}
	if b.err != nil {
		o.release(b)
		return nil, b.err
	}
	return b, nil
}

// readAhead starts fetching the first missing run of blocks after idx
// within the read-ahead window, when a request slot is free.
func (o *Object) readAhead(idx, run int64) {
	last := (o.size - 1) / blockSize
	for j := idx + 1; j <= min(idx+aheadRuns*run, last); j++ {
		if o.blocks[j] != nil {
			continue
		}
		select {
		case o.sem <- struct{}{}:
			o.startRun(j, run, true)
		default:
		}
		return
	}
}

// startRun fetches up to n blocks from first (stopping before a block
// that is cached or on its way) in one request, in the background. The
// caller holds o.mu, and a request slot if slot (else the fetch waits for
// one); the fetch frees it.
func (o *Object) startRun(first, n int64, slot bool) {
	last := (o.size - 1) / blockSize
	var bs []*block
	for i := first; i < first+n && i <= last && (i == first || o.blocks[i] == nil); i++ {
		b := &block{idx: i, done: make(chan struct{})}
		o.blocks[i] = b
		bs = append(bs, b)
	}
	go func() {
		err := errors.New("object closed")
		if !slot {
			select {
			case o.sem <- struct{}{}:
				slot = true
			case <-o.ctx.Done():
			}
		}
		if slot {
			err = o.fetchRun(bs)
			<-o.sem
		}
		o.finishRun(bs, err)
		if err == nil {
			o.advanceHash()
		}
	}()
}

// fetchRun reads the blocks bs, which follow each other, in one request.
func (o *Object) fetchRun(bs []*block) error {
	off := bs[0].idx * blockSize
	end := min((bs[len(bs)-1].idx+1)*blockSize, o.size)
	for _, b := range bs {
		buf := o.pool.Get().(*[]byte)
		b.data = (*buf)[:min(blockSize, o.size-b.idx*blockSize)]
	}
	err := o.get(o.ctx, off, end-off, func(body io.Reader) error {
		for _, b := range bs {
			if err := readFull(body, b.data); err != nil {
				return err
			}
		}
		return nil
	})
	for _, b := range bs {
		if err == nil {
			err = o.spool(b.data, b.idx*blockSize)
		}
	}
	return err
}

// spool writes bytes that arrived to Options.Spool.
func (o *Object) spool(p []byte, off int64) error {
	if o.opts.Spool == nil {
		return nil
	}
	if _, err := o.opts.Spool.WriteAt(p, off); err != nil {
		return fmt.Errorf("writing what arrived: %w", err)
	}
	return nil
}

// finishRun publishes the blocks bs, or their failure.
func (o *Object) finishRun(bs []*block, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, b := range bs {
		if err != nil {
			b.err = err
			if b.data != nil {
				data := b.data[:cap(b.data)]
				o.pool.Put(&data)
				b.data = nil
			}
			if o.blocks[b.idx] == b {
				delete(o.blocks, b.idx)
			}
		} else {
			b.elem = o.lru.PushFront(b)
			o.cached += int64(len(b.data))
		}
		close(b.done)
	}
	o.evict()
}

// evict drops the least recently used blocks nobody reads until the cache
// fits its size. The caller holds o.mu.
func (o *Object) evict() {
	for e := o.lru.Back(); e != nil && o.cached > o.opts.CacheSize; {
		prev := e.Prev()
		b := e.Value.(*block)
		if b.refs == 0 {
			o.drop(b)
		}
		e = prev
	}
}

func (o *Object) drop(b *block) {
	o.lru.Remove(b.elem)
	b.elem = nil
	o.cached -= int64(len(b.data))
	delete(o.blocks, b.idx)
	data := b.data[:cap(b.data)]
	o.pool.Put(&data)
	b.data = nil
}

func (o *Object) release(b *block) {
	o.mu.Lock()
	b.refs--
	if b.refs == 0 && b.elem != nil && o.cached > o.opts.CacheSize {
		o.evict()
	}
	o.mu.Unlock()
}

// readDirect reads a large range straight into p: requests of a run's
// size, several in flight.
func (o *Object) readDirect(p []byte, off int64) error {
	g, ctx := errgroup.WithContext(o.ctx)
	const chunk = runBlocks * blockSize
	for i := int64(0); i < int64(len(p)); i += chunk {
		part := p[i:min(i+chunk, int64(len(p)))]
		at := off + i
		select {
		case o.sem <- struct{}{}:
		case <-ctx.Done():
			break
		}
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			defer func() { <-o.sem }()
			err := o.get(ctx, at, int64(len(part)), func(body io.Reader) error { return readFull(body, part) })
			if err == nil {
				err = o.spool(part, at)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	o.hashFrom(off, p)
	o.advanceHash()
	return nil
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
		cr := &countReader{r: body, n: &o.received}
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

type countReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
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
			if ctx.Err() != nil && err != nil && !errors.Is(err, ctx.Err()) {
				err = fmt.Errorf("%w (%w)", ctx.Err(), err)
			}
			return err
		}
		d := min(100*time.Millisecond<<attempt, 5*time.Second)
		d = d/2 + rand.N(d/2+1)
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
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

// hashFrom adds p, the bytes at off, to the whole file's hash when they
// continue it.
func (o *Object) hashFrom(off int64, p []byte) {
	o.hmu.Lock()
	defer o.hmu.Unlock()
	if off <= o.hoff && off+int64(len(p)) > o.hoff {
		o.h.Write(p[o.hoff-off:])
		o.hoff = off + int64(len(p))
	}
}

// advanceHash hashes the cached blocks that continue the whole file's
// hash. Every fetch calls it once its blocks are cached, so that blocks
// that arrive out of order are hashed when the ones before them arrive.
func (o *Object) advanceHash() {
	o.hmu.Lock()
	defer o.hmu.Unlock()
	for o.hoff < o.size {
		o.mu.Lock()
		b := o.blocks[o.hoff/blockSize]
		ok := b != nil && b.elem != nil
		if ok {
			b.refs++
		}
		o.mu.Unlock()
		if !ok {
			return
		}
		o.h.Write(b.data[o.hoff-b.idx*blockSize:])
		o.hoff = b.idx*blockSize + int64(len(b.data))
		o.release(b)
	}
}

// SHA256 returns the whole file's SHA-256 ("sha256:HEX"), and checks it
// against Digest (ErrDigestMismatch). The bytes that arrived in order
// while the file was read were hashed as they came; SHA256 reads the rest
// (from the cache where it still is), so that a file read from start to
// end, as verify reads it, is fetched once.
func (o *Object) SHA256(ctx context.Context) (string, error) {
	buf := make([]byte, blockSize)
	for {
		o.hmu.Lock()
		off := o.hoff
		o.hmu.Unlock()
		if off >= o.tailOff {
			break
		}
		n := min(int64(len(buf)), o.tailOff-off)
		if _, err := o.ReadAt(buf[:n], off); err != nil {
			return "", err
		}
		if err := ctx.Err(); err != nil {
			return "", err
		}
		o.hashFrom(off, buf[:n])
	}
	o.hashFrom(o.tailOff, o.tail)
	o.hmu.Lock()
	sum := hex.EncodeToString(o.h.Sum(nil))
	o.hmu.Unlock()
	if o.want != "" && sum != o.want {
		return "", fmt.Errorf("%w: %s has sha256:%s, not sha256:%s", ErrDigestMismatch, o.loc, sum, o.want)
	}
	return "sha256:" + sum, nil
}

// parseDigest returns the hex of "sha256:HEX".
func ParseDigest(d string) (string, error) {
	hx, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hx) != 64 || strings.ToLower(hx) != hx {
		return "", fmt.Errorf("%w: digest %q: want sha256: and 64 lowercase hex digits", ErrLocation, d)
	}
	if _, err := hex.DecodeString(hx); err != nil {
		return "", fmt.Errorf("%w: digest %q: want sha256: and 64 lowercase hex digits", ErrLocation, d)
	}
	return hx, nil
}
