package fakes3

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// A ChecksumProxy stands in front of an S3 API that does not compute
// checksums and answers, where S3 would, the SHA-256 checksum S3
// documents, computed from the bytes the object holds.
//
// moto_server 5.2.1 stores whatever x-amz-checksum-sha256 a PutObject
// sends, unchecked, and answers it back to HeadObject with checksum mode
// on; S3 refuses a body that does not match (BadDigest), so the checksum it
// answers is always the one of the bytes. The proxy restores that
// invariant: to a HeadObject or GetObject with x-amz-checksum-mode ENABLED
// (no range, no part number) whose upstream answer names a SHA-256
// checksum (the uploader asked for SHA-256), it answers the SHA-256 of the
// object's bytes, read from upstream: for an object completed by a
// multipart upload through the proxy, S3's composite checksum, the SHA-256
// of the parts' SHA-256s then "-" and the part count, over the part sizes
// the upload used. Checksums of other algorithms are left out of the
// answer (the double knows SHA-256 only). Everything else passes through.
type ChecksumProxy struct {
	*httptest.Server
	upstream *url.URL

	mu      sync.Mutex
	uploads map[string]map[int]int64 // upload ID -> part number -> size
	parts   map[string][]int64       // "/bucket/key" -> part sizes, in order
}

// Checksums starts a ChecksumProxy in front of the S3 API at upstream
// (path-style requests) until the test ends.
func Checksums(t testing.TB, upstream string) *ChecksumProxy {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	p := &ChecksumProxy{upstream: u, uploads: map[string]map[int]int64{}, parts: map[string][]int64{}}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorLog = log.New(io.Discard, "", 0)
	rp.ModifyResponse = p.answer
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.record(r)
		r.Host = u.Host
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// record notes the part sizes of multipart uploads and forgets them when
// an object is written whole or deleted.
func (p *ChecksumProxy) record(r *http.Request) {
	q := r.URL.Query()
	id, num := q.Get("uploadId"), q.Get("partNumber")
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case r.Method == http.MethodPut && id != "" && num != "":
		n, err := strconv.Atoi(num)
		if err != nil {
			return
		}
		size := r.ContentLength
		if d := r.Header.Get("X-Amz-Decoded-Content-Length"); d != "" {
			size, _ = strconv.ParseInt(d, 10, 64)
		}
		if p.uploads[id] == nil {
			p.uploads[id] = map[int]int64{}
		}
		p.uploads[id][n] = size
	case (r.Method == http.MethodPut || r.Method == http.MethodDelete) && id == "":
		delete(p.parts, r.URL.Path)
	}
}

// answer records a completed multipart upload's parts, and puts S3's
// checksum, computed from the bytes, in a checksum-mode answer.
func (p *ChecksumProxy) answer(resp *http.Response) error {
	r := resp.Request
	q := r.URL.Query()
	if r.Method == http.MethodPost && q.Get("uploadId") != "" && resp.StatusCode == http.StatusOK {
		p.mu.Lock()
		up := p.uploads[q.Get("uploadId")]
		nums := make([]int, 0, len(up))
		for n := range up {
			nums = append(nums, n)
		}
		sort.Ints(nums)
		sizes := make([]int64, len(nums))
		for i, n := range nums {
			sizes[i] = up[n]
		}
		p.parts[r.URL.Path] = sizes
		delete(p.uploads, q.Get("uploadId"))
		p.mu.Unlock()
		return nil
	}
	if (r.Method != http.MethodHead && r.Method != http.MethodGet) || !strings.EqualFold(r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED") ||
		r.Header.Get("Range") != "" || q.Get("partNumber") != "" || resp.StatusCode != http.StatusOK {
		return nil
	}
	hadSHA256 := resp.Header.Get("X-Amz-Checksum-Sha256") != ""
	for k := range resp.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-amz-checksum-") {
			resp.Header.Del(k)
		}
	}
	if !hadSHA256 {
		return nil
	}
	body, err := p.bytes(r)
	if err != nil {
		return err
	}
	p.mu.Lock()
	sizes := p.parts[r.URL.Path]
	p.mu.Unlock()
	var total int64
	for _, s := range sizes {
		total += s
	}
	if len(sizes) > 0 && total == int64(len(body)) {
		h := sha256.New()
		for _, s := range sizes {
			part := sha256.Sum256(body[:s])
			h.Write(part[:])
			body = body[s:]
		}
		resp.Header.Set("X-Amz-Checksum-Sha256", base64.StdEncoding.EncodeToString(h.Sum(nil))+"-"+strconv.Itoa(len(sizes)))
		resp.Header.Set("X-Amz-Checksum-Type", "COMPOSITE")
		return nil
	}
	sum := sha256.Sum256(body)
	resp.Header.Set("X-Amz-Checksum-Sha256", base64.StdEncoding.EncodeToString(sum[:]))
	resp.Header.Set("X-Amz-Checksum-Type", "FULL_OBJECT")
	return nil
}

// bytes reads the object r asks about from upstream, as r's sender (the
// upstream does not check signatures, only who signed).
func (p *ChecksumProxy) bytes(r *http.Request) ([]byte, error) {
	u := *p.upstream
	u.Path = r.URL.Path
	get, err := http.NewRequestWithContext(r.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token"} {
		if v := r.Header.Get(k); v != "" {
			get.Header.Set(k, v)
		}
	}
	get.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading %s upstream: %s", r.URL.Path, resp.Status)
	}
	return io.ReadAll(resp.Body)
}
