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
)

// registry starts go-containerregistry's OCI registry on a loopback port
// for the script and sets $REGISTRY to its host:port.
func registryCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: registry")
	}
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	ts.Defer(srv.Close)
	ts.Setenv("REGISTRY", strings.TrimPrefix(srv.URL, "http://"))
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
