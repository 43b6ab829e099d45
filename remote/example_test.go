package remote_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/cloud-assembly/assemble/remote"
)

// Open reads a file at a location in byte ranges, as an io.ReaderAt with a
// size: here a loopback HTTP server, as assembly.NewReader would read an
// assembly there.
func ExampleOpen() {
	content := []byte(strings.Repeat("assemble", 1000))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(content))
	}))
	defer srv.Close()

	ctx := context.Background()
	o, err := remote.Open(ctx, srv.URL+"/app.cloud", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer o.Close()
	p := make([]byte, 8)
	o.ReadAt(p, 800)
	sum, _ := o.SHA256(ctx)
	fmt.Println(o.Size(), o.Version(), string(p))
	fmt.Println(sum)
	// Output:
	// 8000 "v1" assemble
	// sha256:43852fafe1c9d96d246f707707aefa087549e5c1484416f1ec2160d19e9d2c9a
}
