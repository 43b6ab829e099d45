package main

// Issue 26: the bytes pull, push (promotion) and deploy write or send are
// the bytes verified, against a server that changes bytes only on their
// second delivery, with an ETag it does not honour (If-Match ignored) or
// with no validator at all.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/fakes3"
	"github.com/cloud-assembly/assemble/remote"
)

// secondServer serves good on each byte's first delivery and, when
// change says so for the request, other's byte on any later delivery. It
// sends a fixed ETag (and ignores If-Match) when etag, no validator
// otherwise; cut, when it says so, ends a response halfway (the client
// retries, so bytes are delivered again).
type secondServer struct {
	good, other []byte
	etag        bool
	change      func(request int64) bool
	cut         func(request int64) bool

	mu       sync.Mutex
	seen     []bool
	requests atomic.Int64
	sent     atomic.Int64
	again    atomic.Int64
}

func newSecondServer(t *testing.T, good, other []byte, etag bool) (*secondServer, string) {
	s := &secondServer{good: good, other: other, etag: etag, seen: make([]bool, len(good)),
		change: func(int64) bool { return true }, cut: func(int64) bool { return false }}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL + "/app.cloud"
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
			if change && i < int64(len(s.other)) {
				body[i-first] = s.other[i]
			}
		}
		s.seen[i] = true
	}
	s.mu.Unlock()
	if s.etag {
		w.Header().Set("ETag", `"v1"`)
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

// flipped is b with every byte changed: a second delivery that differs
// everywhere.
func flipped(b []byte) []byte {
	o := bytes.Clone(b)
	for i := range o {
		o[i] ^= 0x5a
	}
	return o
}

// TestPullSecondDelivery: pull to a file and to standard output, from a
// server with and without an ETag whose second delivery differs: the
// output is exactly the signed file, and the server sent it once.
func TestPullSecondDelivery(t *testing.T) {
	good := bigAssembly(t, 40<<20)
	keyring := filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc")
	for _, etag := range []bool{false, true} {
		for _, out := range []string{"file", "-"} {
			t.Run(fmt.Sprintf("etag=%v,%s", etag, out), func(t *testing.T) {
				s, url := newSecondServer(t, good, flipped(good), etag)
				dir := t.TempDir()
				o := filepath.Join(dir, "app.cloud")
				if out == "-" {
					o = "-"
				}
				code, stdout, stderr := runRemoteCLI("pull", "--keyring", keyring, "-o", o, url)
				if code != 0 {
					t.Fatalf("pull: exit %d\n%s", code, stderr)
				}
				got := []byte(stdout)
				if out == "file" {
					got, _ = os.ReadFile(o)
				}
				if !bytes.Equal(got, good) {
					t.Fatalf("pull wrote %d bytes that are not the signed file", len(got))
				}
				if s.again.Load() != 0 || float64(s.sent.Load()) > 1.05*float64(len(good)) {
					t.Errorf("the server sent %d bytes (%d a second time) of a %d-byte file", s.sent.Load(), s.again.Load(), len(good))
				}
			})
		}
	}
}

// TestPullScheduleProperty: for random schedules of changed second
// deliveries and responses cut halfway (each retry delivers bytes again),
// with and without an ETag, pull -o FILE writes the signed file or
// nothing at all.
func TestPullScheduleProperty(t *testing.T) {
	good := bigAssembly(t, 6<<20)
	keyring := filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc")
	ok, failed := 0, 0
	for seed := range uint64(10) {
		rnd := rand.New(rand.NewPCG(seed, 26))
		s, url := newSecondServer(t, good, flipped(good), seed%2 == 0)
		changes, cuts := rnd.Uint64(), rnd.Uint64()&rnd.Uint64()
		s.change = func(n int64) bool { return changes&(1<<(n%64)) != 0 }
		s.cut = func(n int64) bool { return n > 1 && cuts&(1<<(n%64)) != 0 }
		dir := t.TempDir()
		out := filepath.Join(dir, "app.cloud")
		code, _, stderr := runRemoteCLI("pull", "--keyring", keyring, "-o", out, url)
		got, err := os.ReadFile(out)
		switch {
		case code == 0 && bytes.Equal(got, good):
			ok++
		case code == 0:
			t.Fatalf("seed %d: pull exited 0 and wrote other bytes than the signed file", seed)
		case err == nil:
			t.Fatalf("seed %d: pull failed (%s) and left %s", seed, stderr, out)
		default:
			failed++
		}
		if ents, _ := os.ReadDir(dir); code != 0 && len(ents) != 0 {
			t.Fatalf("seed %d: pull failed and left %v", seed, ents)
		}
	}
	t.Logf("%d pulls wrote the signed file, %d wrote nothing", ok, failed)
}

// TestPromoteSecondDelivery: push from such a server (promotion) to S3
// and to an OCI registry uploads the signed file, read once.
func TestPromoteSecondDelivery(t *testing.T) {
	good := bigAssembly(t, 6<<20)
	keyring := filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc")
	s3s := fakes3.Start(t, nil)
	fakes3.Env(t, s3s.URL)
	fakes3.Credentials(t, "AKIDPROMOTE")
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s3s.Certificate().Raw}), 0o644)
	t.Setenv("AWS_CA_BUNDLE", ca)
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")
	sum := sha256.Sum256(good)
	for _, dest := range []string{"s3://" + fakes3.Bucket + "/promoted/app.cloud", "oci://" + host + "/team/app:1.0"} {
		t.Run(dest, func(t *testing.T) {
			s, url := newSecondServer(t, good, flipped(good), false)
			code, stdout, stderr := runRemoteCLI("push", "--keyring", keyring, url, dest)
			if code != 0 || !strings.Contains(stdout, "sha256:"+hex.EncodeToString(sum[:])) {
				t.Fatalf("push: exit %d\n%s%s", code, stdout, stderr)
			}
			if s.again.Load() != 0 || float64(s.sent.Load()) > 1.05*float64(len(good)) {
				t.Errorf("the source sent %d bytes (%d a second time) of a %d-byte file", s.sent.Load(), s.again.Load(), len(good))
			}
			o, err := remote.Open(context.Background(), dest, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			got, err := io.ReadAll(io.NewSectionReader(o, 0, o.Size()))
			if err != nil || !bytes.Equal(got, good) {
				t.Fatalf("%s holds other bytes than the signed file (%v)", dest, err)
			}
		})
	}
}

// TestDigestNamesTheAssembly (issue 30, item 4): --digest sha256:HEX, the
// .cloud file's SHA-256, is taken by verify, inspect, extract, pull and
// push, for a file and for a location: the right one passes, another
// fails with its code (wrong_digest for a file, remote_digest_mismatch
// when the location's own digest says so first) and writes nothing.
func TestDigestNamesTheAssembly(t *testing.T) {
	good := bigAssembly(t, 1<<20)
	keyring := filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc")
	dir := t.TempDir()
	file := filepath.Join(dir, "app.cloud")
	os.WriteFile(file, good, 0o644)
	s := &rangeServer{}
	s.set(good)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	sum := sha256.Sum256(good)
	right := "sha256:" + hex.EncodeToString(sum[:])
	wrong := "sha256:" + strings.Repeat("0", 64)
	for _, name := range []string{file, srv.URL + "/app.cloud"} {
		for _, cmd := range [][]string{
			{"verify", "--keyring", keyring},
			{"inspect"},
			{"extract", "--keyring", keyring, "-d", filepath.Join(dir, "out")},
			{"pull", "--keyring", keyring, "-o", filepath.Join(dir, "pulled.cloud")},
		} {
			if cmd[0] == "pull" && name == file {
				continue
			}
			for _, d := range []string{wrong, right} {
				args := append(append(append([]string{}, cmd...), "--json", "--digest", d), name)
				code, stdout, stderr := runRemoteCLI(args...)
				if d == right {
					if code != 0 {
						t.Errorf("%v: exit %d\n%s%s", args, code, stdout, stderr)
					}
					os.RemoveAll(filepath.Join(dir, "out"))
					os.Remove(filepath.Join(dir, "pulled.cloud"))
					continue
				}
				var obj struct {
					Error struct{ Code, Message string }
				}
				json.Unmarshal([]byte(stdout), &obj)
				if code != 1 || (obj.Error.Code != "wrong_digest" && obj.Error.Code != "remote_digest_mismatch") || !strings.Contains(obj.Error.Message, wrong) {
					t.Errorf("%v: exit %d, code %q, message %q; want 1, wrong_digest, naming %s", args, code, obj.Error.Code, obj.Error.Message, wrong)
				}
				if ents, _ := os.ReadDir(dir); len(ents) != 1 {
					t.Errorf("%v wrote %v", args, ents)
				}
			}
		}
	}
}

// TestSecretsRedacted (issue 26, item 9): a password in a location's
// user information and a presigned URL's query (credential, signature)
// appear in no message, JSON field or OCI annotation.
func TestSecretsRedacted(t *testing.T) {
	good := bigAssembly(t, 300000)
	keyring := filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc")
	s := &rangeServer{}
	s.set(good)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(reg.Close)
	host := strings.TrimPrefix(reg.URL, "http://")
	const secret = "hunter2SECRET"
	presigned := srv.URL + "/dist/app.cloud?X-Amz-Credential=AKID%2F" + secret + "&X-Amz-Signature=" + secret
	withPassword := strings.Replace(srv.URL, "http://", "http://user:"+secret+"@", 1) + "/app.cloud"
	for _, args := range [][]string{
		{"verify", "--keyring", keyring, withPassword},
		{"verify", "--json", "--keyring", keyring, withPassword},
		{"inspect", "--json", withPassword},
		{"verify", "--keyring", keyring, presigned},
		{"verify", "--json", "--keyring", keyring, presigned},
		{"verify", "--json", "--keyring", keyring, strings.Replace(presigned, "/dist/", "/missing/", 1) + "x"},
		{"pull", "--json", "--keyring", keyring, "-o", filepath.Join(t.TempDir(), "a.cloud"), presigned},
		{"push", "--json", "--keyring", keyring, presigned, "oci://" + host + "/team/app:1"},
	} {
		code, stdout, stderr := runRemoteCLI(args...)
		if strings.Contains(stdout+stderr, secret) {
			t.Errorf("%v (exit %d) shows the secret:\n%s%s", args, code, stdout, stderr)
		}
	}
	o, err := remote.Open(context.Background(), "oci://"+host+"/team/app:1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if m := string(o.Manifest()); strings.Contains(m, secret) || !strings.Contains(m, `"org.opencontainers.image.title":"app.cloud"`) {
		t.Errorf("the pushed manifest: %s", m)
	}
}

// TestPromoteKeepsTheManifest (issue 26, item 10; issue 30, item 4):
// promotion from one registry to another copies the manifest as it is,
// so both have one digest; the same file pushed to two registries has one
// manifest digest; the file's own digest names it in either.
func TestPromoteKeepsTheManifest(t *testing.T) {
	good := bigAssembly(t, 300000)
	keyring := filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc")
	file := filepath.Join(t.TempDir(), "app.cloud")
	os.WriteFile(file, good, 0o644)
	var hosts []string
	for range 3 {
		reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
		t.Cleanup(reg.Close)
		hosts = append(hosts, strings.TrimPrefix(reg.URL, "http://"))
	}
	manifest := func(args ...string) string {
		code, stdout, stderr := runRemoteCLI(append([]string{"push", "--json", "--keyring", keyring}, args...)...)
		var p struct{ Manifest string }
		if err := json.Unmarshal([]byte(stdout), &p); code != 0 || err != nil || p.Manifest == "" {
			t.Fatalf("push %v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		return p.Manifest
	}
	a := manifest(file, "oci://"+hosts[0]+"/team/app:1.0")
	b := manifest(file, "oci://"+hosts[1]+"/prod/app:release")
	c := manifest("oci://"+hosts[0]+"/team/app:1.0", "oci://"+hosts[2]+"/prod/app:1.0")
	if a != b || a != c {
		t.Errorf("manifest digests: pushed %s and %s, promoted %s; want one", a, b, c)
	}
	sum := sha256.Sum256(good)
	code, stdout, stderr := runRemoteCLI("verify", "--keyring", keyring, "oci://"+hosts[2]+"/prod/app@sha256:"+hex.EncodeToString(sum[:]))
	if code != 0 {
		t.Errorf("verify by the file's digest: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestRemoteErrorCodes (issue 26, item 8): a failure after the first
// request keeps its own code through the ZIP and signature checks that
// were reading (not corrupt, with "the archive is damaged").
func TestRemoteErrorCodes(t *testing.T) {
	good := bigAssembly(t, 3<<20)
	keyring := filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc")
	for _, c := range []struct {
		name  string
		fault func(s *rangeServer, w http.ResponseWriter, r *http.Request, n int64) bool
		code  string
	}{
		{"412", func(s *rangeServer, w http.ResponseWriter, r *http.Request, n int64) bool {
			if n == 1 {
				return false
			}
			w.WriteHeader(http.StatusPreconditionFailed)
			return true
		}, "remote_changed"},
		{"redirect to file://", func(s *rangeServer, w http.ResponseWriter, r *http.Request, n int64) bool {
			if n == 1 {
				return false
			}
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
			return true
		}, "redirect_refused"},
		{"bad range", func(s *rangeServer, w http.ResponseWriter, r *http.Request, n int64) bool {
			if n == 1 {
				return false
			}
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-9/%d", len(good)))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(good[:10])
			return true
		}, "bad_response"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, url := serveBytes(t, good)
			s.fault = c.fault
			code, stdout, stderr := runRemoteCLI("verify", "--json", "--keyring", keyring, url)
			var obj struct{ Error struct{ Code, Hint string } }
			json.Unmarshal([]byte(stdout), &obj)
			if code != 1 || obj.Error.Code != c.code || strings.Contains(obj.Error.Hint, "damaged") {
				t.Errorf("verify: exit %d, code %q, hint %q; want 1, %s\n%s%s", code, obj.Error.Code, obj.Error.Hint, c.code, stdout, stderr)
			}
		})
	}
}

// manyEntries is an unsigned assembly of n small files besides its
// manifest.
func manyEntries(t testing.TB, n int) []byte {
	w := assembly.NewWriter(assembly.WriterOptions{})
	w.AddBytes("manifest.json", []byte(`{"schema":"cloud-assembly/1.0","droplets":{}}`))
	for i := range n {
		w.AddBytes(fmt.Sprintf("files/d%03d/f%05d.yaml", i/100, i), []byte(fmt.Sprintf("Resources:\n  R%d:\n    Type: AWS::SNS::Topic\n", i)))
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestInspectRequests (issue 26, item 6): inspect of a location reads the
// central directory and the manifest in at most 4 requests, whatever the
// number of entries.
func TestInspectRequests(t *testing.T) {
	for _, n := range []int{10, 1000, 10000} {
		b := manyEntries(t, n)
		s, url := serveBytes(t, b)
		code, _, stderr := runRemoteCLI("inspect", url)
		if code != 0 {
			t.Fatalf("inspect: exit %d\n%s", code, stderr)
		}
		if r := s.requests.Load(); r > 4 {
			t.Errorf("inspect of %d entries (%d bytes): %d requests, %d bytes; want at most 4", n, len(b), r, s.sent.Load())
		}
		t.Logf("%d entries, %d bytes: %d requests, %d bytes", n, len(b), s.requests.Load(), s.sent.Load())
	}
}

// TestTimeout (issue 26, item 7): a server that drips its bytes, never
// stalling long enough for the stall limit, holds a command only as long
// as --timeout (or ASSEMBLE_TIMEOUT) says: it fails with code timeout.
func TestTimeout(t *testing.T) {
	good := bigAssembly(t, 2<<20)
	keyring := filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc")
	for _, env := range []bool{false, true} {
		s, url := serveBytes(t, good)
		s.fault = func(s *rangeServer, w http.ResponseWriter, r *http.Request, n int64) bool {
			if n == 1 {
				return false
			}
			var a, b int64
			fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &a, &b)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b, len(good)))
			w.Header().Set("Content-Length", fmt.Sprint(b-a+1))
			w.WriteHeader(http.StatusPartialContent)
			for i := a; i <= b && r.Context().Err() == nil; i++ {
				w.Write(good[i : i+1])
				w.(http.Flusher).Flush()
				time.Sleep(20 * time.Millisecond)
			}
			return true
		}
		args := []string{"verify", "--json", "--keyring", keyring, url}
		if env {
			t.Setenv("ASSEMBLE_TIMEOUT", "700ms")
		} else {
			args = append(args, "--timeout", "700ms")
		}
		code, stdout, stderr := runRemoteCLI(args...)
		var obj struct{ Error struct{ Code string } }
		json.Unmarshal([]byte(stdout), &obj)
		if code != 1 || obj.Error.Code != "timeout" {
			t.Errorf("env %v: exit %d, code %q; want 1, timeout\n%s%s", env, code, obj.Error.Code, stdout, stderr)
		}
	}
}
