package remote

// Issue 26: a server whose bytes change only on their second delivery
// (with or without an ETag, If-Match ignored) cannot make a reader hand
// out, hash or upload bytes other than those of the first delivery.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/cloud-assembly/assemble/digest"
)

// secondServer serves good on each byte's first delivery and other's
// byte on every later one, when change says so for that request: a file
// replaced mid-read, on a server with no validator (etag false: no ETag,
// no Last-Modified) or one that sends a fixed ETag and ignores If-Match.
// cut, when it says so, ends a response halfway (the client retries).
type secondServer struct {
	good, other []byte
	etag        bool
	change      func(request int64) bool
	cut         func(request int64) bool

	mu       sync.Mutex
	seen     []bool
	requests atomic.Int64
	sent     atomic.Int64
	again    atomic.Int64 // bytes delivered a second time or more
}

func newSecondServer(good []byte, etag bool) *secondServer {
	other := bytes.Clone(good)
	for i := range other {
		other[i] ^= 0x5a
	}
	return &secondServer{good: good, other: other, etag: etag, seen: make([]bool, len(good)),
		change: func(int64) bool { return true }, cut: func(int64) bool { return false }}
}

func (s *secondServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.requests.Add(1)
	size := int64(len(s.good))
	first, last := int64(0), size-1
	if rng, ok := strings.CutPrefix(r.Header.Get("Range"), "bytes="); ok {
		a, b, _ := strings.Cut(rng, "-")
		if a == "" {
			k, _ := strconv.ParseInt(b, 10, 64)
			first = max(0, size-k)
		} else {
			first, _ = strconv.ParseInt(a, 10, 64)
			if b != "" {
				last, _ = strconv.ParseInt(b, 10, 64)
			}
		}
	}
	last = min(last, size-1)
	body := make([]byte, last-first+1)
	s.mu.Lock()
	change := s.change(n)
	for i := first; i <= last; i++ {
		body[i-first] = s.good[i]
		if s.seen[i] {
			s.again.Add(1)
			if change {
				body[i-first] = s.other[i]
			}
		}
		s.seen[i] = true
	}
	s.mu.Unlock()
	if s.etag {
		w.Header().Set("ETag", `"fixed"`)
	}
	w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, size))
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusPartialContent)
	if s.cut(n) && len(body) > 1 {
		w.Write(body[:len(body)/2])
		return
	}
	w.Write(body)
	s.sent.Add(int64(len(body)))
}

func (s *secondServer) start(t *testing.T) string {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL + "/app.cloud"
}

// readAll reads the object in random pieces, in random order, from
// several goroutines at once, and returns what the reads returned.
func readAll(t *testing.T, o *Object, rnd *rand.Rand) ([]byte, error) {
	got := make([]byte, o.Size())
	type piece struct{ off, n int64 }
	var pieces []piece
	for off := int64(0); off < o.Size(); {
		n := min(o.Size()-off, 1+rnd.Int64N(3<<20))
		pieces = append(pieces, piece{off, n})
		off += n
	}
	rnd.Shuffle(len(pieces), func(i, j int) { pieces[i], pieces[j] = pieces[j], pieces[i] })
	var wg sync.WaitGroup
	errs := make(chan error, len(pieces))
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(pieces); i += 3 {
				p := pieces[i]
				if _, err := o.ReadAt(got[p.off:p.off+p.n], p.off); err != nil && err != io.EOF {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return got, <-errs
}

// TestSecondDelivery: with or without an ETag, whatever order the reads
// come in, every byte is fetched once: what the reads return, what
// SHA256 hashes and what is read again afterwards are the first delivery.
func TestSecondDelivery(t *testing.T) {
	good := randomBytes(t, 11<<20+12345)
	for _, etag := range []bool{false, true} {
		t.Run(fmt.Sprintf("etag=%v", etag), func(t *testing.T) {
			s := newSecondServer(good, etag)
			o, err := Open(context.Background(), s.start(t), &Options{Retries: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			rnd := rand.New(rand.NewPCG(1, 2))
			for pass := range 2 {
				got, err := readAll(t, o, rnd)
				if err != nil || !bytes.Equal(got, good) {
					t.Fatalf("pass %d: %v; the bytes read are the first delivery: %v", pass, err, bytes.Equal(got, good))
				}
			}
			if sum, err := o.SHA256(context.Background()); err != nil || sum != sha(good) {
				t.Fatalf("SHA256 = %s, %v; want %s", sum, err, sha(good))
			}
			if n := s.again.Load(); n != 0 {
				t.Errorf("%d bytes were delivered twice", n)
			}
			if sent := s.sent.Load(); sent != int64(len(good)) {
				t.Errorf("the server sent %d bytes of a %d-byte file", sent, len(good))
			}
		})
	}
}

// TestSecondDeliveryProperty: for any schedule of which later deliveries
// change (here: responses cut halfway, so that the retry delivers bytes a
// second time, and random reads), the bytes the object hands out agree
// with each other and with SHA256, and a reader checked against that
// digest (what pull and push write through) gives exactly them or fails.
func TestSecondDeliveryProperty(t *testing.T) {
	good := randomBytes(t, 6<<20+999)
	for seed := range uint64(12) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(seed, 7))
			s := newSecondServer(good, seed%2 == 0)
			changes, cuts := rnd.Uint64(), rnd.Uint64()&rnd.Uint64()
			s.change = func(n int64) bool { return changes&(1<<(n%64)) != 0 }
			s.cut = func(n int64) bool { return n > 1 && cuts&(1<<(n%64)) != 0 }
			o, err := Open(context.Background(), s.start(t), &Options{Retries: 6, Parallel: 1 + rnd.IntN(8)})
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			first, err1 := readAll(t, o, rnd)
			sum, err2 := o.SHA256(context.Background())
			again, err3 := readAll(t, o, rnd)
			if err1 != nil || err2 != nil || err3 != nil {
				// A failure is allowed (retries exhausted): nothing is
				// handed on below.
				t.Logf("failed: %v %v %v", err1, err2, err3)
				return
			}
			if !bytes.Equal(first, again) {
				t.Fatal("the object handed out two versions of its bytes")
			}
			if want := sha(first); sum != want {
				t.Fatalf("SHA256 %s is not the digest of the bytes handed out, %s", sum, want)
			}
			var out bytes.Buffer
			if _, err := io.Copy(&out, digest.NewReader(o, 0, o.Size(), sum)); err != nil || !bytes.Equal(out.Bytes(), first) {
				t.Fatalf("the checked copy: %v, equal %v", err, bytes.Equal(out.Bytes(), first))
			}
		})
	}
}

// changingFile is a file that another process rewrites once it has been
// read whole once: its second reading has other bytes at byte at.
type changingFile struct {
	b    []byte
	at   int64
	read atomic.Int64
}

func (f *changingFile) ReadAt(p []byte, off int64) (int, error) {
	if f.read.Add(int64(len(p))) > int64(len(f.b)) && off <= f.at && f.at < off+int64(len(p)) {
		n := copy(p, f.b[off:])
		p[f.at-off] ^= 1
		return n, nil
	}
	if off >= int64(len(f.b)) {
		return 0, io.EOF
	}
	n := copy(p, f.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestPushChangedFile: a file that changes after its verification (the
// verified digest given) is not uploaded, whatever the upload: S3 single
// part, S3 multipart (where a first pass takes the part checksums), OCI.
// Nothing is left at the location. moto keeps a multipart upload's parts
// until it is aborted; ListMultipartUploads shows none left. moto does
// not check a PutObject's ChecksumSHA256 against its body (it stores the
// changed file when our check is off): the refusal here is ours.
func TestPushChangedFile(t *testing.T) {
	c, bucket := motoBucket(t, false)
	reg := httptest.NewServer(registry.New())
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")
	ctx := context.Background()
	for _, tc := range []struct {
		name, loc string
		size      int
		at        int64
	}{
		{"s3 single part", "s3://" + bucket + "/single.cloud", 300000, 299999},
		{"s3 multipart, change in the first pass", "s3://" + bucket + "/multi1.cloud", 12 << 20, 100},
		{"s3 multipart, change in the sending", "s3://" + bucket + "/multi2.cloud", 12 << 20, 6<<20 + 1},
		{"oci", "oci://" + host + "/team/app:v1", 300000, 1234},
	} {
		t.Run(tc.name, func(t *testing.T) {
			good := randomBytes(t, tc.size)
			f := &changingFile{b: good, at: tc.at}
			if tc.name != "s3 multipart, change in the sending" {
				f.read.Store(int64(len(good))) // read once already: the verification
			}
			_, err := Push(ctx, tc.loc, File{R: f, Size: int64(len(good)), SHA256: sha(good)}, &Options{PartSize: 5 << 20})
			if !errors.Is(err, digest.ErrMismatch) {
				t.Fatalf("push of a changed file: %v, want digest.ErrMismatch", err)
			}
			if strings.HasPrefix(tc.loc, "oci://") {
				if _, err := Open(ctx, tc.loc, nil); !errors.Is(err, ErrNotFound) {
					t.Errorf("the tag exists after a failed push: %v", err)
				}
				return
			}
			key := strings.TrimPrefix(tc.loc, "s3://"+bucket+"/")
			if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key}); err == nil {
				t.Errorf("%s exists after a failed push", tc.loc)
			}
			ups, err := c.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: &bucket})
			if err == nil && len(ups.Uploads) != 0 {
				t.Errorf("multipart uploads left: %d", len(ups.Uploads))
			}
		})
	}
}

// TestPromoteSecondDelivery: an object read from a server whose second
// delivery differs, verified (SHA256), then pushed to S3 in parts and to
// OCI, arrives as its first delivery; the source is read once (at most
// 1.05 times its size) whatever the upload reads.
func TestPromoteSecondDelivery(t *testing.T) {
	_, bucket := motoBucket(t, false)
	reg := httptest.NewServer(registry.New())
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")
	ctx := context.Background()
	good := randomBytes(t, 12<<20+77)
	for _, dest := range []string{"s3://" + bucket + "/promoted.cloud", "s3://" + bucket + "/single.cloud", "oci://" + host + "/team/app:v1"} {
		t.Run(dest, func(t *testing.T) {
			s := newSecondServer(good, false)
			o, err := Open(ctx, s.start(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			sum, err := o.SHA256(ctx)
			if err != nil {
				t.Fatal(err)
			}
			part := int64(5 << 20)
			if strings.HasSuffix(dest, "single.cloud") {
				part = 64 << 20
			}
			p, err := Push(ctx, dest, File{R: o, Size: o.Size(), SHA256: sum, Title: "app.cloud"}, &Options{PartSize: part})
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(dest, "s3://") && p.Multipart != (part < o.Size()) {
				t.Errorf("multipart %v", p.Multipart)
			}
			if sent := s.sent.Load(); float64(sent) > 1.05*float64(len(good)) || s.again.Load() != 0 {
				t.Errorf("the source sent %d bytes (%d again) for a %d-byte file", sent, s.again.Load(), len(good))
			}
			back, err := Open(ctx, dest, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer back.Close()
			got, err := io.ReadAll(io.NewSectionReader(back, 0, back.Size()))
			if err != nil || !bytes.Equal(got, good) {
				t.Fatalf("%s holds other bytes than the verified ones: %v", dest, err)
			}
		})
	}
}
