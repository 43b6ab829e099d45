package source

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/klauspost/compress/zip"
)

var ctx = context.Background()

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// project makes a project folder with a template, modules and an outside
// file, and returns the resolver and the template's location.
func project(t *testing.T, opts *Options) (*Resolver, Location, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "project")
	files := map[string]string{
		"template.yaml":         "Modules: {}\n",
		"modules/a.yaml":        "A\n",
		"modules/sub/b.yaml":    "B\n",
		"files/code.py":         "print('hi')\n",
		"../outside.yaml":       "secret\n",
		"modules/big.yaml":      strings.Repeat("x", 2048),
		"modules/dir/keep.yaml": "keep\n",
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(base, "outside.yaml"), filepath.Join(root, "modules", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.yaml", filepath.Join(root, "modules", "inlink.yaml")); err != nil {
		t.Fatal(err)
	}
	r, err := New(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	top, err := r.FileLocation(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return r, top, root
}

func TestLocal(t *testing.T) {
	r, top, root := project(t, &Options{MaxFileSize: 1024})
	b, a, err := r.Resolve(ctx, top, "./modules/a.yaml", "")
	if err != nil || string(b) != "A\n" {
		t.Fatalf("Resolve a.yaml = %q, %v", b, err)
	}
	if a != (Location{Kind: File, Path: filepath.Join(root, "modules", "a.yaml")}) || r.Rel(a) != "modules/a.yaml" {
		t.Errorf("location %+v (%s)", a, r.Rel(a))
	}
	// Relative to the module's own folder.
	if b, _, err := r.Resolve(ctx, a, "sub/b.yaml", sum([]byte("B\n"))); err != nil || string(b) != "B\n" {
		t.Errorf("nested relative source = %q, %v", b, err)
	}
	if b, _, err := r.Resolve(ctx, a, "../files/code.py", ""); err != nil || string(b) != "print('hi')\n" {
		t.Errorf("insert-file style source = %q, %v", b, err)
	}
	if b, _, err := r.Resolve(ctx, a, "inlink.yaml", ""); err != nil || string(b) != "A\n" {
		t.Errorf("a link inside the project = %q, %v", b, err)
	}
	if _, _, err := r.Resolve(ctx, top, filepath.Join(root, "modules", "a.yaml"), ""); err != nil {
		t.Errorf("absolute path inside the project: %v", err)
	}

	tests := []struct {
		name, source, hash string
		want               error
	}{
		{"leaves root", "../../outside.yaml", "", ErrOutsideRoot},
		{"leaves root far", "../../../../../../etc/passwd", "", ErrOutsideRoot},
		{"absolute outside", "/etc/hostname", "", ErrOutsideRoot},
		{"symlink outside", "link.yaml", "", ErrOutsideRoot},
		{"missing", "nope.yaml", "", ErrNotFound},
		{"directory", "dir", "", ErrBadSource},
		{"too large", "big.yaml", "", ErrTooLarge},
		{"hash mismatch", "sub/b.yaml", sum([]byte("other")), ErrHashMismatch},
		{"bad hash", "sub/b.yaml", "md5:abc", ErrBadHash},
		{"short hash", "sub/b.yaml", "sha256:abcd", ErrBadHash},
		{"s3 without a key", "s3://bucket", "", ErrBadSource},
		{"http", "http://example.com/a.yaml", "", ErrUnsupportedScheme},
		{"file url", "file:///etc/passwd", "", ErrUnsupportedScheme},
		{"unknown package", "$nope/a.yaml", "", ErrUnknownPackage},
		{"alias without path", "$abc", "", ErrBadSource},
		{"empty", "", "", ErrBadSource},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := r.Resolve(ctx, a, tt.source, tt.hash)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	_, _, err = r.Resolve(ctx, a, "nope.yaml", "")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file should also match fs.ErrNotExist: %v", err)
	}
	_, _, err = r.Resolve(ctx, a, "sub/b.yaml", sum(nil))
	var he *HashError
	if !errors.As(err, &he) || he.Got != sum([]byte("B\n")) || he.Want != sum(nil) {
		t.Errorf("hash error %+v", err)
	}
	if _, err := r.FileLocation(filepath.Join(root, "..", "outside.yaml")); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("FileLocation outside = %v", err)
	}
}

type entry struct {
	name, content string
	dir           bool
}

func writeZip(t testing.TB, name string, entries []entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.dir {
			h.SetMode(fs.ModeDir | 0o755)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if name != "" {
		if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestPackage(t *testing.T) {
	r, top, root := project(t, &Options{MaxFileSize: 1024, MaxPackageFiles: 8})
	zipBytes := writeZip(t, filepath.Join(root, "pkg.zip"), []entry{
		{name: "mods/", dir: true},
		{name: "mods/a.yaml", content: "PA\n"},
		{name: "b.yaml", content: "PB\n"},
		{name: "bomb.yaml", content: strings.Repeat("0", 1<<20)},
		{name: "inner.zip", content: string(writeZip(t, "", []entry{{name: "x.yaml", content: "X\n"}}))},
	})
	if err := r.AddPackage(top, "abc", "./pkg.zip", sum(zipBytes)); err != nil {
		t.Fatal(err)
	}
	if err := r.AddPackage(top, "abc", "./pkg.zip", sum(zipBytes)); err != nil {
		t.Errorf("declaring the same package again: %v", err)
	}
	if err := r.AddPackage(top, "abc", "./other.zip", ""); !errors.Is(err, ErrBadSource) {
		t.Errorf("redeclaring abc elsewhere = %v, want ErrBadSource", err)
	}
	b, loc, err := r.Resolve(ctx, top, "$abc/mods/a.yaml", "")
	if err != nil || string(b) != "PA\n" {
		t.Fatalf("Resolve $abc/mods/a.yaml = %q, %v", b, err)
	}
	if loc != (Location{Kind: PackageEntry, Package: "abc", Path: "mods/a.yaml"}) || loc.String() != "$abc/mods/a.yaml" {
		t.Errorf("location %+v", loc)
	}
	// Modules inside a package refer to each other by relative path.
	if b, l, err := r.Resolve(ctx, loc, "../b.yaml", ""); err != nil || string(b) != "PB\n" || l.Path != "b.yaml" {
		t.Errorf("relative inside package = %q %+v %v", b, l, err)
	}
	// A package can hold another package.
	if err := r.AddPackage(loc, "inner", "../inner.zip", ""); err != nil {
		t.Fatal(err)
	}
	if b, _, err := r.Resolve(ctx, top, "$inner/x.yaml", ""); err != nil || string(b) != "X\n" {
		t.Errorf("nested package = %q, %v", b, err)
	}
	tests := []struct {
		name, source string
		from         Location
		want         error
	}{
		{"leaves package", "../../x.yaml", loc, ErrOutsidePackage},
		{"absolute in package", "/b.yaml", loc, ErrOutsidePackage},
		{"alias escape", "$abc/../x.yaml", top, ErrOutsidePackage},
		{"dot segment", "$abc/mods/./a.yaml", top, nil},
		{"missing entry", "$abc/nope.yaml", top, ErrNotFound},
		{"directory entry", "$abc/mods", top, ErrNotFound},
		{"zip bomb", "$abc/bomb.yaml", top, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := r.Resolve(ctx, tt.from, tt.source, "")
			if !errors.Is(err, tt.want) && (tt.want != nil || err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestBadPackages(t *testing.T) {
	tests := []struct {
		name    string
		entries []entry
		want    error
		also    error
	}{
		{"dot dot", []entry{{name: "../evil.yaml", content: "x"}}, ErrBadPackage, assembly.ErrInsecurePath},
		{"absolute", []entry{{name: "/etc/evil.yaml", content: "x"}}, ErrBadPackage, assembly.ErrInsecurePath},
		{"backslash", []entry{{name: `a\..\evil.yaml`, content: "x"}}, ErrBadPackage, assembly.ErrInsecurePath},
		{"duplicate", []entry{{name: "a.yaml", content: "x"}, {name: "a.yaml", content: "y"}}, ErrBadPackage, nil},
		{"too many files", []entry{{name: "1"}, {name: "2"}, {name: "3"}, {name: "4"}}, ErrTooLarge, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, top, root := project(t, &Options{MaxPackageFiles: 3})
			writeZip(t, filepath.Join(root, "bad.zip"), tt.entries)
			if err := r.AddPackage(top, "bad", "bad.zip", ""); err != nil {
				t.Fatal(err)
			}
			_, _, err := r.Resolve(ctx, top, "$bad/a.yaml", "")
			if !errors.Is(err, tt.want) || (tt.also != nil && !errors.Is(err, tt.also)) {
				t.Fatalf("err = %v, want %v and %v", err, tt.want, tt.also)
			}
		})
	}
	t.Run("not a zip", func(t *testing.T) {
		r, top, _ := project(t, nil)
		if err := r.AddPackage(top, "p", "modules/a.yaml", ""); err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.Resolve(ctx, top, "$p/a.yaml", ""); !errors.Is(err, ErrBadPackage) {
			t.Errorf("err = %v, want ErrBadPackage", err)
		}
	})
	t.Run("package hash mismatch", func(t *testing.T) {
		r, top, root := project(t, nil)
		writeZip(t, filepath.Join(root, "p.zip"), []entry{{name: "a.yaml", content: "x"}})
		if err := r.AddPackage(top, "p", "p.zip", sum(nil)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.Resolve(ctx, top, "$p/a.yaml", ""); !errors.Is(err, ErrHashMismatch) {
			t.Errorf("err = %v, want ErrHashMismatch", err)
		}
	})
	t.Run("bad aliases", func(t *testing.T) {
		r, top, _ := project(t, nil)
		for _, alias := range []string{"", "a/b", "$a"} {
			if err := r.AddPackage(top, alias, "p.zip", ""); !errors.Is(err, ErrBadSource) {
				t.Errorf("AddPackage(%q) = %v, want ErrBadSource", alias, err)
			}
		}
		if err := r.AddPackage(top, "a", "p.zip", "sha256:zz"); !errors.Is(err, ErrBadHash) {
			t.Errorf("AddPackage with bad hash = %v, want ErrBadHash", err)
		}
	})
}

// TestCorpusZip reads the peer suite's zip case: Packages abc -> package.zip,
// Source $abc/zip-module.yaml.
func TestCorpusZip(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "shared", "corpus", "modules", "aws-cli")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("peer corpus not present:", err)
	}
	r, err := New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	top, err := r.FileLocation(filepath.Join(dir, "zip-template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AddPackage(top, "abc", "package.zip", ""); err != nil {
		t.Fatal(err)
	}
	b, loc, err := r.Resolve(ctx, top, "$abc/zip-module.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Type: A::B::C") || loc.String() != "$abc/zip-module.yaml" {
		t.Errorf("got %q from %s", b, loc)
	}
}

func TestHTTPS(t *testing.T) {
	pkg := writeZip(t, "", []entry{{name: "m/a.yaml", content: "ZA\n"}, {name: "m/b.yaml", content: "ZB\n"}})
	mux := http.NewServeMux()
	mux.HandleFunc("/mods/a.yaml", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("RA\n")) })
	mux.HandleFunc("/mods/sub/b.yaml", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("RB\n")) })
	mux.HandleFunc("/pkg.zip", func(w http.ResponseWriter, r *http.Request) { w.Write(pkg) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(bytes.Repeat([]byte("x"), 4096)) })
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		for range 8 {
			w.Write(bytes.Repeat([]byte("x"), 512))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/downgrade", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.Host+"/mods/a.yaml", http.StatusFound)
	})
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusted-certificate case makes the server log
	srv.StartTLS()
	defer srv.Close()

	r, top, _ := project(t, &Options{Client: srv.Client(), Timeout: 300 * time.Millisecond, MaxFileSize: 1024})
	b, loc, err := r.Resolve(ctx, top, srv.URL+"/mods/a.yaml", sum([]byte("RA\n")))
	if err != nil || string(b) != "RA\n" {
		t.Fatalf("fetch = %q, %v", b, err)
	}
	if loc != (Location{Kind: URL, URL: srv.URL + "/mods/a.yaml"}) {
		t.Errorf("location %+v", loc)
	}
	if b, l, err := r.Resolve(ctx, loc, "sub/b.yaml", ""); err != nil || string(b) != "RB\n" || l.URL != srv.URL+"/mods/sub/b.yaml" {
		t.Errorf("relative to a URL = %q %+v %v", b, l, err)
	}
	if err := r.AddPackage(top, "remote", srv.URL+"/pkg.zip", sum(pkg)); err != nil {
		t.Fatal(err)
	}
	pa, ploc, err := r.Resolve(ctx, top, "$remote/m/a.yaml", "")
	if err != nil || string(pa) != "ZA\n" {
		t.Errorf("remote package = %q, %v", pa, err)
	}
	if b, _, err := r.Resolve(ctx, ploc, "b.yaml", ""); err != nil || string(b) != "ZB\n" {
		t.Errorf("relative in remote package = %q, %v", b, err)
	}
	tests := []struct {
		name, path, hash string
		want             error
	}{
		{"hash mismatch", "/mods/a.yaml", sum([]byte("tampered")), ErrHashMismatch},
		{"not found", "/missing.yaml", "", ErrFetch},
		{"too large", "/big", "", ErrTooLarge},
		{"too large chunked", "/chunked", "", ErrTooLarge},
		{"timeout", "/slow", "", ErrFetch},
		{"redirect to http", "/downgrade", "", ErrFetch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := r.Resolve(ctx, top, srv.URL+tt.path, tt.hash)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	// All downloads together are bounded too.
	small, _, _ := project(t, &Options{Client: srv.Client(), MaxFileSize: 1024, MaxDownloads: 5})
	if _, _, err := small.Resolve(ctx, loc, "a.yaml", ""); err != nil {
		t.Fatalf("first download: %v", err)
	}
	if _, _, err := small.Resolve(ctx, loc, "sub/b.yaml", ""); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "in all") {
		t.Errorf("second download: err = %v, want the total limit", err)
	}
	// Without the test server's certificate, the fetch fails.
	plain, err := New(t.TempDir(), &Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := plain.Resolve(ctx, Location{Kind: URL, URL: srv.URL + "/"}, "mods/a.yaml", ""); !errors.Is(err, ErrFetch) {
		t.Errorf("untrusted certificate: err = %v, want ErrFetch", err)
	}
}

// Issue 19 item 12: a FIFO in the project (an Fn::InsertFile or module
// Source naming it) is refused at once, by the rule every project path
// follows (internal/projectfs); it hung, waiting for a writer.
func TestLocalFIFO(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	r, top, root := project(t, nil)
	if err := syscall.Mkfifo(filepath.Join(root, "modules", "fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := r.Resolve(ctx, top, "./modules/fifo.yaml", ""); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrBadSource) || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("err = %v, want ErrBadSource (not a regular file)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO still waits for a writer")
	}
}
