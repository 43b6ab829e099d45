// Package fakes3 starts a real S3 API server for tests: gofakes3 with its
// in-memory backend, behind TLS on localhost, plus a few paths that
// misbehave (slow, redirects), and records what each request was signed
// with. Env isolates the AWS SDK from the machine's settings.
package fakes3

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Bucket is the bucket Start creates.
const Bucket = "mods"

// Paths of Bucket that misbehave: Slow answers after 5 s, Downgrade
// redirects to http://, Loop redirects to itself.
const (
	Slow      = "slow"
	Downgrade = "downgrade"
	Loop      = "loop"
)

// Server is the running S3 server.
type Server struct {
	*httptest.Server
	mu           sync.Mutex
	keys, region []string
}

var credScope = regexp.MustCompile(`Credential=([^/]+)/[0-9]+/([^/]+)/s3/`)

// Start serves objects (key -> content) in Bucket until the test ends.
func Start(t testing.TB, objects map[string][]byte) *Server {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(Bucket); err != nil {
		t.Fatal(err)
	}
	for key, body := range objects {
		if _, err := backend.PutObject(Bucket, key, map[string]string{}, bytes.NewReader(body), int64(len(body)), nil); err != nil {
			t.Fatal(err)
		}
	}
	fake := gofakes3.New(backend).Server()
	s := &Server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := credScope.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
			s.mu.Lock()
			s.keys, s.region = append(s.keys, m[1]), append(s.region, m[2])
			s.mu.Unlock()
		}
		switch r.URL.Path {
		case "/" + Bucket + "/" + Slow:
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
			return
		case "/" + Bucket + "/" + Downgrade:
			http.Redirect(w, r, "http://"+r.Host+"/"+Bucket+"/", http.StatusTemporaryRedirect)
			return
		case "/" + Bucket + "/" + Loop:
			http.Redirect(w, r, "/"+Bucket+"/"+Loop, http.StatusTemporaryRedirect)
			return
		}
		fake.ServeHTTP(w, r)
	}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // untrusted-certificate cases make the server log
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

// SignedWith returns the access key and region of the last signed request.
func (s *Server) SignedWith() (key, region string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.keys) == 0 {
		return "", ""
	}
	return s.keys[len(s.keys)-1], s.region[len(s.region)-1]
}

// Env isolates the AWS SDK from the machine for the rest of the test: no
// credentials, region, profile, CA bundle or instance role unless the test
// sets them, and the S3 endpoint at endpoint (AWS_ENDPOINT_URL_S3, a
// standard setting). It returns a folder for shared config files; the
// AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE settings point at its
// config and credentials.
func Env(t testing.TB, endpoint string) string {
	t.Helper()
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ROLE_ARN",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_CA_BUNDLE"} {
		t.Setenv(k, "") // restored when the test ends
		os.Unsetenv(k)
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_ENDPOINT_URL_S3", endpoint)
	return dir
}

// Credentials sets an access key in the environment for the rest of the
// test.
func Credentials(t testing.TB, keyID string) {
	t.Setenv("AWS_ACCESS_KEY_ID", keyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
}
