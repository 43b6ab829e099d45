// Package ocireg starts OCI registries on loopback for tests:
// go-containerregistry's registry in process, with or without the OCI 1.1
// referrers API, and Debian's docker-registry (the CNCF distribution
// registry 2.8, which has no referrers API: writers keep the tag schema).
package ocireg

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// InProcess starts go-containerregistry's registry on a loopback port,
// with its referrers API when referrers is set (without it
// /v2/.../referrers/... answers 404, as a registry without the API does);
// wrap, when set, may answer a request instead. The caller closes the
// server; its host:port is Host(srv).
func InProcess(referrers bool, wrap func(w http.ResponseWriter, r *http.Request) bool) *httptest.Server {
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)), registry.WithReferrersSupport(referrers))
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if wrap != nil && wrap(w, r) {
			return
		}
		reg.ServeHTTP(w, r)
	}))
}

// Host is a test server's host:port.
func Host(srv *httptest.Server) string { return strings.TrimPrefix(srv.URL, "http://") }

// Absent says why Docker cannot start the registry (it is not
// installed), for a test to skip with; "" when it can.
func Absent() string {
	if _, err := exec.LookPath("docker-registry"); err != nil {
		return "docker-registry is not installed (Debian's docker-registry package; .ci/run installs it)"
	}
	return ""
}

// Docker starts Debian's docker-registry on a free loopback port, with
// its configuration and storage in dir, and returns its host:port and
// the function that stops it (a test skips first when Absent says why).
func Docker(dir string) (addr string, stop func(), err error) {
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr = l.Addr().String()
	l.Close()
	cfg := filepath.Join(dir, "config.yml")
	conf := fmt.Sprintf("version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n", filepath.Join(dir, "data"), addr)
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		return "", nil, err
	}
	cmd := exec.Command(bin, "serve", cfg)
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=none")
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("docker-registry did not start: %w", err)
	}
	stop = func() { cmd.Process.Kill(); cmd.Wait() }
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/v2/")
		if err == nil {
			resp.Body.Close()
			return addr, stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("docker-registry did not answer on %s within 20s", addr)
}
