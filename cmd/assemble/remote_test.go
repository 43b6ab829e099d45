package main

// Issue 22: reading assemblies at remote locations through the CLI, and
// pull's faults: each fails with its code and writes nothing.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/fakes3"
	"github.com/cloud-assembly/assemble/internal/testenv/ocireg"
	"github.com/cloud-assembly/assemble/remote"
	"github.com/cloud-assembly/assemble/signing"
)

// bigAssembly is a signed assembly holding one incompressible file of
// size bytes (signed with the ed25519 test key).
func bigAssembly(t testing.TB, size int) []byte {
	t.Helper()
	big := make([]byte, size)
	rand.Read(big)
	w := assembly.NewWriter(assembly.WriterOptions{})
	w.AddBytes("manifest.json", []byte(`{"schema":"cloud-assembly/1.0","droplets":{"Site":{"type":"npm://@aws-cdk/assets.FileDroplet","environment":"aws://123456789012/us-east-1","properties":{"file":"site/big.bin","bucketName":"b","objectKey":"big.bin"}}}}`))
	w.AddBytes("site/big.bin", big)
	var buf bytes.Buffer
	if _, err := w.WriteTo(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	r, err := assembly.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	signers, err := signing.LoadSigners(&signing.SignerOptions{KeyFile: filepath.Join("..", "..", "fixtures", "keys", "ed25519.sec.asc")})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := signing.Seal(context.Background(), &out, r, signers, nil); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// rangeServer serves one file over loopback HTTP with ranges and an ETag,
// counting requests and bytes sent; fault, when set, may answer instead.
type rangeServer struct {
	mu       sync.Mutex
	content  []byte
	etag     string
	requests atomic.Int64
	sent     atomic.Int64
	fault    func(s *rangeServer, w http.ResponseWriter, r *http.Request, n int64) bool
}

func (s *rangeServer) set(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := sha256.Sum256(b)
	s.content, s.etag = b, `"`+hex.EncodeToString(sum[:8])+`"`
}

func (s *rangeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.requests.Add(1)
	if s.fault != nil && s.fault(s, w, r, n) {
		return
	}
	s.mu.Lock()
	b, etag := s.content, s.etag
	s.mu.Unlock()
	w.Header().Set("ETag", etag)
	http.ServeContent(&sentCounter{w, &s.sent}, r, "", time.Time{}, bytes.NewReader(b))
}

type sentCounter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *sentCounter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return c.ResponseWriter.Write(p)
}

func serveBytes(t *testing.T, b []byte) (*rangeServer, string) {
	s := &rangeServer{}
	s.set(b)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv.URL + "/app.cloud"
}

func runRemoteCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"assemble"}, args...), nil, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestInspectRemoteReadsTheEnd: inspect of a remote assembly reads the end
// of the archive and the local headers it checks, not the data.
func TestInspectRemoteReadsTheEnd(t *testing.T) {
	b := bigAssembly(t, 24<<20)
	s, url := serveBytes(t, b)
	code, stdout, stderr := runRemoteCLI("inspect", url)
	if code != 0 {
		t.Fatalf("inspect: %d %s", code, stderr)
	}
	if !bytes.Contains([]byte(stdout), []byte(url)) {
		t.Errorf("inspect does not name the location as given: %s", stdout)
	}
	if n, sent := s.requests.Load(), s.sent.Load(); n > 4 || sent >= 1<<20 {
		t.Errorf("inspect of a %d-byte assembly: %d requests, %d bytes; want at most 4 and under 1 MiB", len(b), n, sent)
	}
	// verify reads every byte once (the digest comes from the same reads).
	s.requests.Store(0)
	s.sent.Store(0)
	keyring := filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc")
	code, stdout, stderr = runRemoteCLI("verify", "--keyring", keyring, url)
	sum := sha256.Sum256(b)
	if code != 0 || !bytes.Contains([]byte(stdout), []byte("sha256:"+hex.EncodeToString(sum[:]))) {
		t.Fatalf("verify: %d %s %s", code, stdout, stderr)
	}
	if sent := s.sent.Load(); sent > int64(len(b))+1<<20 {
		t.Errorf("verify of a %d-byte assembly received %d bytes", len(b), sent)
	}
}

// TestPullFaults: a server that lies fails pull with the fault's code,
// and nothing is written, not even a temporary file.
func TestPullFaults(t *testing.T) {
	good := bigAssembly(t, 3<<20)
	keyring := filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc")
	for _, c := range []struct {
		name  string
		fault func(s *rangeServer, w http.ResponseWriter, r *http.Request, n int64) bool
		codes []string
	}{
		{"replaced mid-read", func(s *rangeServer, w http.ResponseWriter, r *http.Request, n int64) bool {
			if n == 2 {
				other := append([]byte{}, good...)
				other[len(other)/2] ^= 1
				s.set(other)
			}
			return false
		}, []string{"remote_changed"}},
		{"wrong bytes", func(s *rangeServer, w http.ResponseWriter, r *http.Request, n int64) bool {
			if n == 1 {
				return false
			}
			other := append([]byte{}, good...)
			other[len(other)/2] ^= 1
			w.Header().Set("ETag", s.etag)
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(other))
			return true
		}, []string{"digest_mismatch", "corrupt"}},
		{"size changes", func(s *rangeServer, w http.ResponseWriter, r *http.Request, n int64) bool {
			if n == 1 {
				return false
			}
			w.Header().Set("ETag", s.etag)
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(append(append([]byte{}, good...), 'x')))
			return true
		}, []string{"remote_changed"}},
		{"wrong range", func(s *rangeServer, w http.ResponseWriter, r *http.Request, n int64) bool {
			if n == 1 {
				return false
			}
			var a, b int64
			fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &a, &b)
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a+1, b+1, len(good)))
			w.WriteHeader(http.StatusPartialContent)
			w.Write(good[a+1 : b+2])
			return true
		}, []string{"bad_response"}},
		{"redirect to another scheme", func(s *rangeServer, w http.ResponseWriter, r *http.Request, n int64) bool {
			http.Redirect(w, r, "https://127.0.0.1:1/app.cloud", http.StatusFound)
			return true
		}, []string{"redirect_refused"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, url := serveBytes(t, good)
			s.fault = c.fault
			dir := t.TempDir()
			code, stdout, stderr := runRemoteCLI("pull", "--json", "--keyring", keyring, "-o", filepath.Join(dir, "app.cloud"), url)
			var obj struct {
				Error struct{ Code string } `json:"error"`
			}
			json.Unmarshal([]byte(stdout), &obj)
			ok := false
			for _, want := range c.codes {
				ok = ok || obj.Error.Code == want
			}
			if code != 1 || !ok {
				t.Fatalf("pull: exit %d, code %q, want 1 and one of %v\n%s%s", code, obj.Error.Code, c.codes, stdout, stderr)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("pull wrote %v", ents)
			}
		})
	}
}

// TestS3PushPull: push to s3:// and pull back through the CLI, with the
// AWS SDK's default chain pointed at an S3 API server (gofakes3 behind TLS,
// internal/fakes3; the remote package's own tests use moto_server).
func TestS3PushPull(t *testing.T) {
	s := fakes3.Start(t, nil)
	fakes3.Env(t, s.URL)
	fakes3.Credentials(t, "AKIDPUSH")
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o644)
	t.Setenv("AWS_CA_BUNDLE", ca) // the SDK's default chain trusts the test server
	b := bigAssembly(t, 2<<20)
	dir := t.TempDir()
	in := filepath.Join(dir, "app.cloud")
	os.WriteFile(in, b, 0o644)
	keyring := filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc")
	loc := "s3://" + fakes3.Bucket + "/releases/app.cloud"
	code, stdout, stderr := runRemoteCLI("push", "--keyring", keyring, in, loc)
	sum := sha256.Sum256(b)
	if code != 0 || !bytes.Contains([]byte(stdout), []byte("sha256:"+hex.EncodeToString(sum[:]))) {
		t.Fatalf("push: %d %s %s", code, stdout, stderr)
	}
	out := filepath.Join(dir, "pulled.cloud")
	code, stdout, stderr = runRemoteCLI("pull", "--keyring", keyring, "--digest", "sha256:"+hex.EncodeToString(sum[:]), "-o", out, loc)
	if code != 0 {
		t.Fatalf("pull: %d %s %s", code, stdout, stderr)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, b) {
		t.Fatal("pulled file differs")
	}
	code, stdout, stderr = runRemoteCLI("inspect", loc)
	if code != 0 || !bytes.Contains([]byte(stdout), []byte(loc)) {
		t.Fatalf("inspect: %d %s %s", code, stdout, stderr)
	}
}

// TestPromoteToS3SaysBundlesStay: S3 keeps no referrers, so a promotion
// from a registry to s3:// says how many provenance bundles stay behind,
// and still pushes the file.
func TestPromoteToS3SaysBundlesStay(t *testing.T) {
	s := fakes3.Start(t, nil)
	fakes3.Env(t, s.URL)
	fakes3.Credentials(t, "AKIDPUSH")
	ca := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw}), 0o644)
	t.Setenv("AWS_CA_BUNDLE", ca)
	reg := ocireg.InProcess(true, nil)
	defer reg.Close()
	b := bigAssembly(t, 64<<10)
	sum := sha256.Sum256(b)
	src := "oci://" + ocireg.Host(reg) + "/team/app:v1"
	bundle := remote.Referrer{ArtifactType: remote.BundleArtifactType, Data: []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`)}
	if _, err := remote.Push(context.Background(), src, remote.File{R: bytes.NewReader(b), Size: int64(len(b)), SHA256: digest.Of(b), Title: "app.cloud", Referrers: []remote.Referrer{bundle}}, nil); err != nil {
		t.Fatal(err)
	}
	keyring := filepath.Join("..", "..", "fixtures", "keys", "ed25519.pub.asc")
	code, stdout, stderr := runRemoteCLI("push", "--keyring", keyring, src, "s3://"+fakes3.Bucket+"/releases/app.cloud")
	if code != 0 || !strings.Contains(stdout, "sha256:"+hex.EncodeToString(sum[:])) {
		t.Fatalf("push: %d %s %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "has 1 provenance bundle attached") || !strings.Contains(stderr, "keeps no referrers") {
		t.Errorf("no word of the bundle left behind: %s", stderr)
	}
}
