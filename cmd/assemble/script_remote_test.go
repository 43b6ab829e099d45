package main

import (
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/cloud-assembly/assemble/internal/testenv/ocireg"
)

// registry [VAR KIND] starts an OCI registry on a loopback port for the
// script and sets $VAR (default REGISTRY) to its host:port. KIND is tags
// (the default: go-containerregistry's registry without the referrers
// API, so writers keep the referrers tag schema), api (the same with the
// OCI 1.1 referrers API) or docker (Debian's docker-registry; a script
// that starts it skips first when it is absent: [!exec:docker-registry]).
func registryCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || (len(args) != 0 && len(args) != 2) {
		ts.Fatalf("usage: registry [VAR tags|api|docker]")
	}
	v, kind := "REGISTRY", "tags"
	if len(args) == 2 {
		v, kind = args[0], args[1]
	}
	switch kind {
	case "tags", "api":
		srv := ocireg.InProcess(kind == "api", nil)
		ts.Defer(srv.Close)
		ts.Setenv(v, ocireg.Host(srv))
	case "docker":
		dir, err := os.MkdirTemp(ts.Getenv("WORK"), "docker-registry-")
		ts.Check(err)
		addr, stop, err := ocireg.Docker(dir)
		ts.Check(err) // the script skips first: [!exec:docker-registry] skip
		ts.Defer(stop)
		ts.Setenv(v, addr)
	default:
		ts.Fatalf("registry: kind %q is not tags, api or docker", kind)
	}
}

// serve DIR serves the folder over HTTPS on a loopback port (Go's file
// server: byte ranges, Last-Modified) and sets $HTTPS to its URL; the
// server's certificate goes to $WORK/server.pem, named by SSL_CERT_FILE
// so that assemble trusts it.
func serveCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: serve DIR")
	}
	dir := ts.MkAbs(args[0])
	srv := httptest.NewTLSServer(http.FileServer(http.Dir(dir)))
	ts.Defer(srv.Close)
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	pemFile := filepath.Join(ts.Getenv("WORK"), "server.pem")
	ts.Check(os.WriteFile(pemFile, cert, 0o644))
	ts.Setenv("SSL_CERT_FILE", pemFile)
	ts.Setenv("HTTPS", srv.URL)
}

// jsonRegistry starts go-containerregistry's registry on loopback for the
// test and returns its host:port.
func jsonRegistry(t *testing.T) string {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}
