package remote

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/digest"
)

// fileServer serves one file with ranges (http.ServeContent) and an ETag,
// counting requests and bytes; fault, when set, may answer instead.
type fileServer struct {
	mu       sync.Mutex
	content  []byte
	etag     string
	requests atomic.Int64
	sent     atomic.Int64
	fault    func(w http.ResponseWriter, r *http.Request, n int64) bool // n: the request's number, from 1
}

func (s *fileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.requests.Add(1)
	s.mu.Lock()
	content, etag, fault := s.content, s.etag, s.fault
	s.mu.Unlock()
	if fault != nil && fault(w, r, n) {
		return
	}
	w.Header().Set("ETag", etag)
	http.ServeContent(&countingWriter{w, &s.sent}, r, "app.cloud", time.Time{}, bytes.NewReader(content))
}

func (s *fileServer) replace(content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.content = content
	sum := sha256.Sum256(content)
	s.etag = `"` + hex.EncodeToString(sum[:8]) + `"`
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func randomBytes(t testing.TB, n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// serve starts an HTTPS server of content and returns the server, its
// file's URL and options that trust it.
func serve(t *testing.T, content []byte) (*fileServer, string, *Options) {
	t.Helper()
	fs := &fileServer{}
	fs.replace(content)
	srv := httptest.NewTLSServer(fs)
	t.Cleanup(srv.Close)
	return fs, srv.URL + "/app.cloud", &Options{Transport: srv.Client().Transport, Retries: 2, RequestTimeout: 10 * time.Second}
}

func sha(b []byte) digest.Digest { return digest.Of(b) }

func TestHTTPSReads(t *testing.T) {
	content := randomBytes(t, 5<<20+12345)
	fs, url, opts := serve(t, content)
	ctx := context.Background()
	o, err := Open(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Size() != int64(len(content)) {
		t.Fatalf("size %d, want %d", o.Size(), len(content))
	}
	if r, _ := o.Stats(); r != 1 || fs.requests.Load() != 1 {
		t.Fatalf("open made %d requests (server saw %d), want 1", r, fs.requests.Load())
	}
	for _, c := range []struct{ off, n int }{
		{0, 10}, {len(content) - 10, 10}, {blockSize - 5, 10}, {3 * blockSize, blockSize}, {12345, 3 << 20}, {len(content) - 300000, 300000}, {7, 1},
	} {
		p := make([]byte, c.n)
		n, err := o.ReadAt(p, int64(c.off))
		if err != nil || n != c.n || !bytes.Equal(p, content[c.off:c.off+c.n]) {
			t.Fatalf("ReadAt(%d bytes at %d) = %d, %v; bytes equal: %v", c.n, c.off, n, err, bytes.Equal(p[:n], content[c.off:c.off+n]))
		}
	}
	p := make([]byte, 100)
	if n, err := o.ReadAt(p, int64(len(content)-40)); n != 40 || err != io.EOF {
		t.Fatalf("ReadAt past the end = %d, %v; want 40, io.EOF", n, err)
	}
	sum, err := o.SHA256(ctx)
	if err != nil || sum != sha(content) {
		t.Fatalf("SHA256 = %s, %v; want %s", sum, err, sha(content))
	}
}

// TestHTTPSSequential: a file read from start to end in small reads, as a
// ZIP entry is, takes few requests (read-ahead in runs), and its SHA-256
// comes from those bytes with no second download.
func TestHTTPSSequential(t *testing.T) {
	content := randomBytes(t, 20<<20)
	fs, url, opts := serve(t, content)
	ctx := context.Background()
	o, err := Open(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	got, err := io.ReadAll(io.NewSectionReader(o, 0, o.Size()))
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("sequential read: %v, equal %v", err, bytes.Equal(got, content))
	}
	sum, err := o.SHA256(ctx)
	if err != nil || sum != sha(content) {
		t.Fatalf("SHA256 = %s, %v", sum, err)
	}
	req, recv := o.Stats()
	if max := int64(len(content)/(runBlocks*blockSize) + 6); req > max {
		t.Errorf("%d requests for %d bytes read in order, want at most %d", req, len(content), max)
	}
	if recv > int64(len(content))+tailSize {
		t.Errorf("received %d bytes for a %d-byte file", recv, len(content))
	}
	if fs.sent.Load() > int64(len(content))+tailSize {
		t.Errorf("server sent %d bytes for a %d-byte file", fs.sent.Load(), len(content))
	}
}

// TestHTTPSConcurrent: many readers at once see the right bytes, with a
// cache smaller than the file.
func TestHTTPSConcurrent(t *testing.T) {
	content := randomBytes(t, 9<<20)
	_, url, opts := serve(t, content)
	o, err := Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			off := int64(g) * (1 << 20)
			got, err := io.ReadAll(io.LimitReader(io.NewSectionReader(o, off, o.Size()-off), 1<<20+4096))
			if err == nil && !bytes.Equal(got, content[off:off+int64(len(got))]) {
				err = fmt.Errorf("reader %d: wrong bytes", g)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestHTTPSFaults(t *testing.T) {
	content := randomBytes(t, 3<<20)
	for _, c := range []struct {
		name  string
		fault func(fs *fileServer) func(w http.ResponseWriter, r *http.Request, n int64) bool
		// after, when set, runs between Open and the read.
		after func(fs *fileServer)
		want  error
		open  bool // the error comes at Open
	}{
		{name: "replaced mid-read", after: func(fs *fileServer) { fs.replace(randomBytes(t, len(content))) }, want: ErrChanged},
		{name: "size changes", want: ErrChanged, fault: func(fs *fileServer) func(http.ResponseWriter, *http.Request, int64) bool {
			return func(w http.ResponseWriter, r *http.Request, n int64) bool {
				if n == 1 {
					return false
				}
				// Same ETag, one byte more: a server that lies.
				w.Header().Set("ETag", fs.etag)
				http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(append(append([]byte{}, content...), 0)))
				return true
			}
		}},
		{name: "wrong range", want: ErrBadResponse, fault: func(fs *fileServer) func(http.ResponseWriter, *http.Request, int64) bool {
			return func(w http.ResponseWriter, r *http.Request, n int64) bool {
				if n == 1 {
					return false
				}
				var a, b int64
				fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &a, &b)
				w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a+1, b+1, len(content)))
				w.Header().Set("ETag", fs.etag)
				w.WriteHeader(http.StatusPartialContent)
				w.Write(content[a+1 : b+2])
				return true
			}
		}},
		{name: "longer body", want: ErrBadResponse, fault: func(fs *fileServer) func(http.ResponseWriter, *http.Request, int64) bool {
			return func(w http.ResponseWriter, r *http.Request, n int64) bool {
				if n == 1 {
					return false
				}
				var a, b int64
				fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &a, &b)
				w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b, len(content)))
				w.Header().Set("ETag", fs.etag)
				w.WriteHeader(http.StatusPartialContent) // no Content-Length: chunked
				w.Write(content[a : b+1])
				w.Write([]byte("more"))
				return true
			}
		}},
		{name: "endless body", want: ErrBadResponse, fault: func(fs *fileServer) func(http.ResponseWriter, *http.Request, int64) bool {
			return func(w http.ResponseWriter, r *http.Request, n int64) bool {
				if n == 1 {
					return false
				}
				var a, b int64
				fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &a, &b)
				w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b, len(content)))
				w.WriteHeader(http.StatusPartialContent)
				buf := make([]byte, 64<<10)
				for r.Context().Err() == nil {
					if _, err := w.Write(buf); err != nil {
						return true
					}
				}
				return true
			}
		}},
		{name: "short body", want: ErrBadResponse, fault: func(fs *fileServer) func(http.ResponseWriter, *http.Request, int64) bool {
			return func(w http.ResponseWriter, r *http.Request, n int64) bool {
				if n == 1 {
					return false
				}
				var a, b int64
				fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &a, &b)
				w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b, len(content)))
				w.WriteHeader(http.StatusPartialContent)
				w.Write(content[a:b])
				return true
			}
		}},
		{name: "slow body", want: ErrTimeout, fault: func(fs *fileServer) func(http.ResponseWriter, *http.Request, int64) bool {
			return func(w http.ResponseWriter, r *http.Request, n int64) bool {
				if n == 1 {
					return false
				}
				var a, b int64
				fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &a, &b)
				w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b, len(content)))
				w.Header().Set("Content-Length", fmt.Sprint(b-a+1))
				w.WriteHeader(http.StatusPartialContent)
				w.Write(content[a : a+10])
				w.(http.Flusher).Flush()
				<-r.Context().Done()
				return true
			}
		}},
		{name: "no answer", want: ErrTimeout, fault: func(fs *fileServer) func(http.ResponseWriter, *http.Request, int64) bool {
			return func(w http.ResponseWriter, r *http.Request, n int64) bool {
				if n == 1 {
					return false
				}
				<-r.Context().Done()
				return true
			}
		}},
		{name: "ignores ranges", want: ErrBadResponse, open: true, fault: func(fs *fileServer) func(http.ResponseWriter, *http.Request, int64) bool {
			return func(w http.ResponseWriter, r *http.Request, n int64) bool {
				w.Write(content)
				return true
			}
		}},
		{name: "not found", want: ErrNotFound, open: true, fault: func(fs *fileServer) func(http.ResponseWriter, *http.Request, int64) bool {
			return func(w http.ResponseWriter, r *http.Request, n int64) bool {
				http.NotFound(w, r)
				return true
			}
		}},
		{name: "redirect to http", want: ErrRedirect, open: true, fault: func(fs *fileServer) func(http.ResponseWriter, *http.Request, int64) bool {
			return func(w http.ResponseWriter, r *http.Request, n int64) bool {
				http.Redirect(w, r, "http://127.0.0.1:1/app.cloud", http.StatusFound)
				return true
			}
		}},
		{name: "redirect to plain http elsewhere", want: ErrRedirect, open: true, fault: func(fs *fileServer) func(http.ResponseWriter, *http.Request, int64) bool {
			return func(w http.ResponseWriter, r *http.Request, n int64) bool {
				http.Redirect(w, r, "http://example.com/app.cloud", http.StatusFound)
				return true
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs, url, opts := serve(t, content)
			opts.StallTimeout, opts.RequestTimeout, opts.Retries = 300*time.Millisecond, 2*time.Second, 1
			if c.fault != nil {
				fs.fault = c.fault(fs)
			}
			o, err := Open(context.Background(), url, opts)
			if c.open {
				if !errors.Is(err, c.want) {
					t.Fatalf("Open: %v, want %v", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if c.after != nil {
				c.after(fs)
			}
			p := make([]byte, 1000)
			_, err = o.ReadAt(p, 1000)
			if !errors.Is(err, c.want) {
				t.Fatalf("ReadAt: %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), url) {
				t.Errorf("the error does not name the location: %v", err)
			}
			// Bounded by the retries, not by a clock: Open's request,
			// then the read's first try and its one retry.
			if n := fs.requests.Load(); n > 1+1+int64(opts.Retries) {
				t.Errorf("%d requests for Open and one ReadAt with %d retry", n, opts.Retries)
			}
			// A large read (several requests in flight) fails the same way.
			if _, err := o.ReadAt(make([]byte, 2<<20), 0); !errors.Is(err, c.want) {
				t.Fatalf("large ReadAt: %v, want %v", err, c.want)
			}
		})
	}
}

// TestHTTPSRetries: transient failures are retried, and give up after
// Options.Retries.
func TestHTTPSRetries(t *testing.T) {
	content := randomBytes(t, 4<<20)
	fs, url, opts := serve(t, content)
	fs.fault = func(w http.ResponseWriter, r *http.Request, n int64) bool {
		if n <= 2 || n == 4 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return true
		}
		return false
	}
	opts.Retries = 2
	o, err := Open(context.Background(), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	p := make([]byte, 100)
	if _, err := o.ReadAt(p, 0); err != nil || !bytes.Equal(p, content[:100]) {
		t.Fatalf("ReadAt after a 503: %v", err)
	}
	fs.fault = func(w http.ResponseWriter, r *http.Request, n int64) bool {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return true
	}
	before := fs.requests.Load()
	if _, err := o.ReadAt(p, 600000); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("ReadAt of an always busy server: %v", err)
	}
	if n := fs.requests.Load() - before; n != 3 {
		t.Errorf("%d requests, want 3 (1 + 2 retries)", n)
	}
}

// TestHTTPSWrongBytes: a server that sends other bytes in a range is found
// out by the digest (and, through assembly, by the ZIP and signature
// checks): SHA256 fails with ErrDigestMismatch when the digest is pinned.
func TestHTTPSWrongBytes(t *testing.T) {
	content := randomBytes(t, 2<<20)
	fs, url, opts := serve(t, content)
	bad := append([]byte{}, content...)
	bad[100] ^= 1
	fs.fault = func(w http.ResponseWriter, r *http.Request, n int64) bool {
		if n == 1 {
			return false
		}
		w.Header().Set("ETag", fs.etag)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(bad))
		return true
	}
	opts.Digest = sha(content)
	ctx := context.Background()
	o, err := Open(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if _, err := o.SHA256(ctx); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("SHA256: %v, want ErrDigestMismatch", err)
	}
}

func TestLoopbackHTTP(t *testing.T) {
	content := randomBytes(t, 300000)
	fs := &fileServer{}
	fs.replace(content)
	srv := httptest.NewServer(fs)
	defer srv.Close()
	o, err := Open(context.Background(), srv.URL+"/x.cloud", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if sum, err := o.SHA256(context.Background()); err != nil || sum != sha(content) {
		t.Fatalf("SHA256 = %s, %v", sum, err)
	}
}

// TestCheckRange: the one check of a range response, shared by HTTP, OCI
// blobs and S3, says which answer is a change and which a bad response.
func TestCheckRange(t *testing.T) {
	tests := []struct {
		cr             string
		length         int64
		etag, sizeFrom string
		want           error
	}{
		{"bytes 10-19/100", 10, `"a"`, "", nil},
		{"bytes 10-19/100", -1, "", "", nil},
		{"bytes 10-19/101", 10, `"a"`, "", ErrChanged},
		{"bytes 10-19/101", 10, `"a"`, "the manifest", ErrBadResponse},
		{"bytes 10-19/100", 10, `"b"`, "", ErrChanged},
		{"bytes 11-20/100", 10, `"a"`, "", ErrBadResponse},
		{"bytes 10-19/100", 11, `"a"`, "", ErrBadResponse},
		{"bytes 10-19", 10, `"a"`, "", ErrBadResponse},
		{"", 10, `"a"`, "", ErrBadResponse},
	}
	for _, tt := range tests {
		err := checkRange(tt.cr, tt.length, tt.etag, 10, 10, 100, `"a"`, tt.sizeFrom)
		if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("%q, %d bytes, ETag %s: got %v, want %v", tt.cr, tt.length, tt.etag, err, tt.want)
		}
	}
}
