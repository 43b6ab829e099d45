// Command rangeserver serves the remote benchmark's locations on loopback
// (bench/remote.sh) and counts, at the server, the requests and bytes each
// client run costs:
//
//	rangeserver -dir DIR -blobs DIR -ready FILE
//
//	GET /files/NAME   NAME under -dir, with byte ranges (http.ServeContent) and an ETag
//	/v2/...           go-containerregistry's OCI registry, blobs on disk under -blobs
//	GET /_stats       {"requests":N,"bytes":M} since the last /_stats (which it resets)
//	anything else     with -proxy URL, passed on to that server (moto_server: S3
//	                  through this server, AWS_ENDPOINT_URL=BASE), counted too
//
// It writes its base URL (http://127.0.0.1:PORT) to -ready once it listens.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/registry"
)

var requests, sent atomic.Int64

type counter struct {
	http.ResponseWriter
}

func (c counter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	sent.Add(int64(n))
	return n, err
}

func main() {
	dir := flag.String("dir", ".", "folder of files served under /files/")
	blobs := flag.String("blobs", "", "folder of the registry's blobs")
	ready := flag.String("ready", "", "file to write the base URL to")
	proxy := flag.String("proxy", "", "server to pass other requests on to (S3)")
	flag.Parse()
	os.MkdirAll(*blobs, 0o755)
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)), registry.WithBlobHandler(registry.NewDiskBlobHandler(*blobs)))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	var rp *httputil.ReverseProxy
	if *proxy != "" {
		u, err := url.Parse(*proxy)
		if err != nil {
			log.Fatal(err)
		}
		rp = httputil.NewSingleHostReverseProxy(u)
	}
	var mu sync.Mutex
	etags := map[string]string{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/_stats" {
			fmt.Fprintf(w, `{"requests":%d,"bytes":%d}`+"\n", requests.Swap(0), sent.Swap(0))
			return
		}
		requests.Add(1)
		if name, ok := strings.CutPrefix(r.URL.Path, "/files/"); ok {
			f, err := os.Open(filepath.Join(*dir, filepath.Base(name)))
			if err != nil {
				http.NotFound(w, r)
				return
			}
			defer f.Close()
			st, _ := f.Stat()
			key := fmt.Sprint(name, st.Size(), st.ModTime().UnixNano())
			mu.Lock()
			if etags[key] == "" {
				s := sha256.Sum256([]byte(key))
				etags[key] = `"` + hex.EncodeToString(s[:8]) + `"`
			}
			w.Header().Set("ETag", etags[key])
			mu.Unlock()
			http.ServeContent(counter{w}, r, "", st.ModTime(), f)
			return
		}
		if *proxy != "" && !strings.HasPrefix(r.URL.Path, "/v2/") {
			rp.ServeHTTP(counter{w}, r)
			return
		}
		reg.ServeHTTP(counter{w}, r)
	})
	if *ready != "" {
		os.WriteFile(*ready, []byte("http://"+l.Addr().String()), 0o644)
	}
	log.Fatal(http.Serve(l, h))
}
