package signing

import (
	"context"
	"crypto"
	"crypto/sha256"
	"hash"
	"io"
	"runtime"
	"sort"
	"sync"

	"github.com/cloud-assembly/assemble/assembly"
	"golang.org/x/sync/errgroup"
)

// chunkSize is the read size of the pipelined hasher; two chunks per file
// being hashed are in memory at once.
const chunkSize = 1 << 20

var chunkPool = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

// digest is the result of hashing one entry.
type digest struct {
	size  int64 // bytes read, at most limit
	sum   []byte
	plain [sha256.Size]byte // SHA-256 of the content alone, when asked for
}

// openContent returns the entry's uncompressed content, checked by package
// assembly as it streams (CRC-32, sizes, no bytes after the deflate stream):
// what Verify accepts, `unzip -t` accepts too.
func openContent(f *assembly.File) (io.ReadCloser, error) { return f.Open() }

// hashEntry streams the entry once, reading at most limit bytes, into
// H(content || nonce). Reading and hashing overlap: one goroutine reads
// (and inflates) the next chunk while this one hashes the last.
//
// With plain, the content's own SHA-256 is taken beside it, from the same
// bytes (digest.plain).
func hashEntry(ctx context.Context, f *assembly.File, h crypto.Hash, nonce []byte, limit int64, m *meter, plain bool) (digest, error) {
	rc, err := openContent(f)
	if err != nil {
		return digest{}, err
	}
	defer rc.Close()
	src := io.LimitReader(rc, limit)
	hw := h.New()
	var pw hash.Hash
	if plain {
		pw = sha256.New()
	}

	type chunk struct {
		buf *[]byte
		n   int
		err error
	}
	full := make(chan chunk, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(full)
		for {
			buf := chunkPool.Get().(*[]byte)
			n, err := fill(src, *buf)
			select {
			case full <- chunk{buf, n, err}:
			case <-stop:
				chunkPool.Put(buf)
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var size int64
	for c := range full {
		hw.Write((*c.buf)[:c.n])
		if pw != nil {
			pw.Write((*c.buf)[:c.n])
		}
		size += int64(c.n)
		m.add(int64(c.n))
		chunkPool.Put(c.buf)
		if c.err == io.EOF {
			break
		}
		if c.err != nil {
			return digest{}, c.err
		}
		if err := ctx.Err(); err != nil {
			return digest{}, err
		}
	}
	hw.Write(nonce)
	d := digest{size: size, sum: hw.Sum(nil)}
	if pw != nil {
		d.plain = [sha256.Size]byte(pw.Sum(nil))
	}
	return d, nil
}

// hashAll hashes files in parallel (largest first, GOMAXPROCS at a time);
// limit(f) bounds the bytes read from f. check, if not nil, is called for
// each result as it arrives and stops everything on the first error.
// progress, if not nil, is told the bytes hashed so far (see
// SignOptions.Progress). The returned digests are in the order of files.
func hashAll(ctx context.Context, files []*assembly.File, h crypto.Hash, nonce []byte,
	limit func(*assembly.File) int64, check func(*assembly.File, digest) error, progress func(done, total int64), plain bool) ([]digest, error) {
	m := newMeter(files, progress)
	defer m.end()
	out := make([]digest, len(files))
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return files[order[a]].CompressedSize() > files[order[b]].CompressedSize() })
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, i := range order {
		f := files[i]
		g.Go(func() error {
			d, err := hashEntry(ctx, f, h, nonce, limit(f), m, plain)
			if err != nil {
				return err
			}
			if check != nil {
				if err := check(f, d); err != nil {
					return err
				}
			}
			out[i] = d
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// fill reads into buf until it is full or src fails; io.EOF means src ended.
func fill(src io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := src.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// A meter counts the bytes hashed by every worker for a progress callback,
// which it calls with a running total, one call at a time, in order.
type meter struct {
	mu     sync.Mutex
	done   int64
	total  int64
	report func(done, total int64)
}

// newMeter returns a meter for files (nil, which counts nothing, when
// report is nil). The total is the files' sizes as their headers state.
func newMeter(files []*assembly.File, report func(done, total int64)) *meter {
	if report == nil {
		return nil
	}
	m := &meter{report: report}
	for _, f := range files {
		m.total += f.Size()
	}
	return m
}

func (m *meter) add(n int64) {
	if m == nil || n == 0 {
		return
	}
	m.mu.Lock()
	m.done += n
	m.report(m.done, m.total)
	m.mu.Unlock()
}

// end reports the final count once more (also for an assembly of empty
// files, which never called add).
func (m *meter) end() {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.report(m.done, m.total)
	m.mu.Unlock()
}
