package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// safeTransport refuses plain HTTP to hosts that are not loopback, on the
// first request and on every redirect, and gives up on a request whose
// body (sent or received) makes no progress for stall: uploads, which have
// no deadline of their own, included.
type safeTransport struct {
	rt    http.RoundTripper
	stall time.Duration
}

func newSafeTransport(o *Options) http.RoundTripper {
	rt := o.Transport
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = o.RequestTimeout
		rt = t
	}
	return &safeTransport{rt, o.StallTimeout}
}

func (t *safeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.URL.Scheme {
	case "https":
	case "http":
		if !isLoopback(req.URL.Hostname()) {
			return nil, fmt.Errorf("%w: plain http:// to %s (only loopback hosts may be reached without TLS)", ErrRedirect, req.URL.Host)
		}
	default:
		return nil, fmt.Errorf("%w: scheme %q", ErrRedirect, req.URL.Scheme)
	}
	if t.stall <= 0 {
		return t.rt.RoundTrip(req)
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	stalled := fmt.Errorf("%w: %s %s: no progress for %v", ErrTimeout, req.Method, Redact(req.URL.String()), t.stall)
	timer := time.AfterFunc(t.stall, func() { cancel(stalled) })
	req = req.Clone(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = &progressBody{ReadCloser: req.Body, timer: timer, d: t.stall}
	}
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		timer.Stop()
		if context.Cause(ctx) == stalled {
			err = stalled
		}
		cancel(nil)
		return nil, err
	}
	timer.Reset(t.stall)
	resp.Body = &progressBody{ReadCloser: resp.Body, timer: timer, d: t.stall, done: func() { timer.Stop(); cancel(nil) }, ctx: ctx, stalled: stalled}
	return resp, nil
}

// progressBody resets a request's stall timer as its bytes move.
type progressBody struct {
	io.ReadCloser
	timer   *time.Timer
	d       time.Duration
	done    func()
	ctx     context.Context
	stalled error
}

func (b *progressBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.d)
	}
	if err != nil && err != io.EOF && b.ctx != nil && context.Cause(b.ctx) == b.stalled {
		err = b.stalled
	}
	return n, err
}

func (b *progressBody) Close() error {
	err := b.ReadCloser.Close()
	if b.done != nil {
		b.done()
	}
	return err
}

// sameScheme is a redirect policy: redirects keep the first request's
// scheme, at most 10 of them.
func sameScheme(req *http.Request, via []*http.Request) error {
	if req.URL.Scheme != via[0].URL.Scheme {
		return fmt.Errorf("%w: %s redirected to %s", ErrRedirect, Redact(via[0].URL.String()), Redact(req.URL.String()))
	}
	if len(via) >= 10 {
		return fmt.Errorf("%w: more than 10 redirects from %s", ErrRedirect, Redact(via[0].URL.String()))
	}
	return nil
}

// httpSource reads an HTTPS (or loopback HTTP) URL in ranges. The first
// response's ETag (or, lacking one, Last-Modified) is required of every
// later range.
type httpSource struct {
	url     string
	client  *http.Client
	header  http.Header // sent with every request
	size    int64
	etag    string
	lastMod string
	// sizeFrom names where size came from when it is not a response of
	// this server (an OCI manifest), until the first response confirms
	// it: a size that disagrees is then a lie, not a change.
	sizeFrom string
	// blob is the digest of a registry's blob (sha256:HEX), "" for a
	// plain URL: it names the content in messages, and a response that
	// says another digest (Docker-Content-Digest) is refused.
	blob string
}

func newHTTPSource(loc *Location, o *Options) *httpSource {
	return &httpSource{
		url:    loc.URL.String(),
		client: &http.Client{Transport: newSafeTransport(o), CheckRedirect: sameScheme},
	}
}

func (s *httpSource) request(ctx context.Context, rng string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLocation, err)
	}
	for k, v := range s.header {
		req.Header[k] = v
	}
	req.Header.Set("Range", rng)
	req.Header.Set("Accept-Encoding", "identity")
	if s.etag != "" && !strings.HasPrefix(s.etag, "W/") {
		req.Header.Set("If-Match", s.etag)
	} else if s.lastMod != "" {
		req.Header.Set("If-Unmodified-Since", s.lastMod)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, redactURLError(err)
	}
	resp.Body = watchBody(ctx, resp.Body)
	return resp, nil
}

// statusError maps a failed response's status to a sentinel.
func statusError(what string, resp *http.Response) error {
	resp.Body.Close()
	err := fmt.Errorf("%s: %s", what, resp.Status)
	switch c := resp.StatusCode; {
	case c == http.StatusNotFound || c == http.StatusGone:
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	case c == http.StatusPreconditionFailed:
		return fmt.Errorf("%w: %v (the version read first is no longer there)", ErrChanged, err)
	case c >= 500 || c == http.StatusTooManyRequests || c == http.StatusRequestTimeout:
		return transient{err}
	case c == http.StatusUnauthorized || c == http.StatusForbidden:
		return fmt.Errorf("%v: %w", err, ErrAccessDenied)
	}
	return fmt.Errorf("%w: %v", ErrBadResponse, err)
}

func (s *httpSource) open(ctx context.Context, n int64) (int64, string, []byte, error) {
	resp, err := s.request(ctx, fmt.Sprintf("bytes=-%d", n))
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusPartialContent:
		first, last, total, err := contentRange(resp.Header.Get("Content-Range"))
		if err != nil {
			return 0, "", nil, err
		}
		if last != total-1 || first != max(0, total-n) {
			return 0, "", nil, fmt.Errorf("%w: asked for the last %d bytes, got bytes %d-%d of %d", ErrBadResponse, n, first, last, total)
		}
		if resp.ContentLength >= 0 && resp.ContentLength != last-first+1 {
			return 0, "", nil, fmt.Errorf("%w: Content-Length %d for bytes %d-%d", ErrBadResponse, resp.ContentLength, first, last)
		}
		tail := make([]byte, last-first+1)
		if err := readFull(resp.Body, tail); err != nil {
			return 0, "", nil, err
		}
		var one [1]byte
		if m, _ := io.ReadFull(resp.Body, one[:]); m > 0 {
			return 0, "", nil, fmt.Errorf("%w: range response for the last %d bytes is longer", ErrBadResponse, len(tail))
		}
		s.size, s.etag, s.lastMod = total, resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
		return total, s.version(), tail, nil
	case http.StatusRequestedRangeNotSatisfiable:
		// An empty file has no last bytes.
		if _, _, total, err := contentRange(resp.Header.Get("Content-Range")); err == nil && total == 0 {
			s.etag, s.lastMod = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
			return 0, s.version(), nil, nil
		}
		return 0, "", nil, fmt.Errorf("%w: %s for the last %d bytes", ErrBadResponse, resp.Status, n)
	case http.StatusOK:
		// A server without ranges: fine for a file no larger than asked.
		if resp.ContentLength >= 0 && resp.ContentLength <= n {
			b, err := io.ReadAll(io.LimitReader(resp.Body, n+1))
			if err != nil {
				return 0, "", nil, err
			}
			if int64(len(b)) != resp.ContentLength {
				return 0, "", nil, fmt.Errorf("%w: Content-Length %d, body %d bytes", ErrBadResponse, resp.ContentLength, len(b))
			}
			s.size, s.etag, s.lastMod = int64(len(b)), resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
			return s.size, s.version(), b, nil
		}
		return 0, "", nil, fmt.Errorf("%w: the server does not serve byte ranges (it answered a Range request with the whole file)", ErrBadResponse)
	}
	return 0, "", nil, statusError("GET "+Redact(s.url), resp)
}

func (s *httpSource) version() string {
	if s.etag != "" {
		return s.etag
	}
	return s.lastMod
}

// get is the one ranged GET of an HTTP URL or a registry's blob: bytes
// [off, off+n) of the version the first response named.
func (s *httpSource) get(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	resp, err := s.request(ctx, fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	if err != nil {
		return nil, err
	}
	what, whole := "GET "+Redact(s.url), "the whole file"
	if s.blob != "" {
		what, whole = "blob "+s.blob, "the whole blob"
	}
	if resp.StatusCode != http.StatusPartialContent {
		if resp.StatusCode == http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("%w: %s: asked for bytes %d-%d, got %s", ErrBadResponse, what, off, off+n-1, whole)
		}
		return nil, statusError(what, resp)
	}
	if d := resp.Header.Get("Docker-Content-Digest"); s.blob != "" && d != "" && d != s.blob {
		resp.Body.Close()
		return nil, fmt.Errorf("%w: asked for blob %s, the registry sent %s", ErrDigestMismatch, s.blob, d)
	}
	if err := checkRange(resp.Header.Get("Content-Range"), resp.ContentLength, resp.Header.Get("ETag"), off, n, s.size, s.etag, s.sizeFrom); err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return resp.Body, nil
}

// checkRange compares a range response (its Content-Range, its
// Content-Length, -1 for none, and its ETag) with the request, bytes
// [off, off+n), and with the first response: the object's size and ETag.
// sizeFrom names where the size came from when no response of this
// server said it (an OCI manifest): a size that disagrees is then a lie,
// not a change. HTTP and S3 ranges are checked by this one function.
func checkRange(cr string, length int64, etag string, off, n, size int64, firstETag, sizeFrom string) error {
	first, last, total, err := contentRange(cr)
	if err != nil {
		return err
	}
	if total != size {
		if sizeFrom != "" {
			return fmt.Errorf("%w: %s says %d bytes, the server's object has %d", ErrBadResponse, sizeFrom, size, total)
		}
		return fmt.Errorf("%w: its size was %d bytes, now %d", ErrChanged, size, total)
	}
	if firstETag != "" && etag != "" && etag != firstETag {
		return fmt.Errorf("%w: ETag was %s, now %s", ErrChanged, firstETag, etag)
	}
	if first != off || last != off+n-1 {
		return fmt.Errorf("%w: asked for bytes %d-%d, got %d-%d", ErrBadResponse, off, off+n-1, first, last)
	}
	if length >= 0 && length != n {
		return fmt.Errorf("%w: Content-Length %d for %d bytes", ErrBadResponse, length, n)
	}
	return nil
}

// contentRange parses "bytes FIRST-LAST/TOTAL" (or "bytes */TOTAL").
func contentRange(h string) (first, last, total int64, err error) {
	bad := fmt.Errorf("%w: Content-Range %q", ErrBadResponse, h)
	rest, ok := strings.CutPrefix(h, "bytes ")
	if !ok {
		return 0, 0, 0, bad
	}
	rng, tot, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, 0, bad
	}
	if total, err = strconv.ParseInt(tot, 10, 64); err != nil || total < 0 {
		return 0, 0, 0, bad
	}
	if rng == "*" {
		return 0, -1, total, nil
	}
	a, b, ok := strings.Cut(rng, "-")
	if !ok {
		return 0, 0, 0, bad
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first || last >= total {
		return 0, 0, 0, bad
	}
	return first, last, total, nil
}

// redactURLError redacts the URL an *url.Error names (a presigned URL's
// query holds its credential and signature).
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		ue.URL = Redact(ue.URL)
	}
	return err
}
