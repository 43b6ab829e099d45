// Command latencyproxy is bench/deploy.sh's stand-in for the distance to a
// real AWS region: an HTTP reverse proxy on loopback that holds every
// request for -delay (50 ms, a region's round trip) before it passes it on
// to -upstream (moto_server), many requests at once, each on its own.
//
//	latencyproxy -upstream http://127.0.0.1:PORT -delay 50ms -ready FILE
//
// It writes its base URL (http://127.0.0.1:PORT) to -ready once it
// listens. Every TCP connection, from the client and to moto, has
// TCP_NODELAY set (Go's default, set here on purpose): with Nagle's
// algorithm a small write that follows another waits for the peer's
// delayed ACK, up to 40 ms on Linux, which would add a delay nobody asked
// for and that concurrency cannot overlap. Only the benchmark uses it;
// the tests talk to moto_server directly.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"time"
)

// noDelayListener sets TCP_NODELAY on every accepted connection.
type noDelayListener struct{ net.Listener }

func (l noDelayListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return c, err
}

func main() {
	upstream := flag.String("upstream", "", "the server to pass requests on to (moto_server's URL)")
	delay := flag.Duration("delay", 50*time.Millisecond, "how long each request is held before it is passed on")
	ready := flag.String("ready", "", "write the proxy's URL to this file once it listens")
	flag.Parse()
	u, err := url.Parse(*upstream)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		log.Fatalf("latencyproxy: -upstream %q: want http://HOST:PORT", *upstream)
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	transport := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetNoDelay(true)
			}
			return c, err
		},
		MaxIdleConnsPerHost: 64,
		DisableCompression:  true,
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.Transport = transport
	proxy.ErrorLog = log.New(os.Stderr, "latencyproxy: ", 0)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(*delay):
		case <-r.Context().Done():
			return
		}
		proxy.ServeHTTP(w, r)
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	base := "http://" + l.Addr().String()
	if *ready != "" {
		if err := os.WriteFile(*ready, []byte(base+"\n"), 0o644); err != nil {
			log.Fatal(err)
		}
	} else {
		fmt.Println(base)
	}
	log.Fatal(http.Serve(noDelayListener{l}, handler))
}
