package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	ggcr "github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/cloud-assembly/assemble/internal/testenv/ocireg"
	"github.com/cloud-assembly/assemble/internal/testenv/scaling"
)

// inProcessRegistry is go-containerregistry's registry on loopback; wrap,
// when set, may answer a request instead.
func inProcessRegistry(t *testing.T, wrap func(w http.ResponseWriter, r *http.Request) bool) string {
	t.Helper()
	srv := ocireg.InProcess(false, wrap)
	t.Cleanup(srv.Close)
	return ocireg.Host(srv)
}

// dockerRegistry starts Debian's docker-registry (the CNCF distribution
// registry) and returns its host:port; it skips, saying why, when the
// registry is not installed.
func dockerRegistry(t *testing.T) string {
	t.Helper()
	if why := ocireg.Absent(); why != "" {
		t.Skip(why)
	}
	addr, stop, err := ocireg.Docker(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

func pushRead(t *testing.T, host string) {
	ctx := context.Background()
	content := randomBytes(t, 3<<20+77)
	loc := "oci://" + host + "/team/app:v1"
	p, err := Push(ctx, loc, File{R: bytes.NewReader(content), Size: int64(len(content)), SHA256: sha(content), Title: "app.cloud"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Digest != sha(content) || p.Manifest.IsZero() {
		t.Fatalf("pushed %+v", p)
	}
	// The manifest, as another tool reads it (docs/oci.md).
	desc, err := ggcr.Get(mustRef(t, host+"/team/app:v1"))
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest.String() != p.Manifest.String() {
		t.Errorf("manifest digest %s, push said %s", desc.Digest, p.Manifest)
	}
	var m v1.Manifest
	json.Unmarshal(desc.Manifest, &m)
	if m.ArtifactType != ArtifactType || m.Config.MediaType != EmptyConfigMediaType || m.Config.Size != 2 || string(m.Config.Data) != "{}" ||
		len(m.Layers) != 1 || m.Layers[0].MediaType != LayerMediaType || m.Layers[0].Digest.String() != sha(content).String() ||
		m.Layers[0].Annotations[AnnotationTitle] != "app.cloud" || m.Annotations[AnnotationCreated] != "" {
		t.Errorf("manifest %s", desc.Manifest)
	}
	// The same file pushed again, under another tag, has the same
	// manifest: nothing in it depends on when or where it was pushed.
	p2, err := Push(ctx, "oci://"+host+"/other/app:v2", File{R: bytes.NewReader(content), Size: int64(len(content)), SHA256: sha(content), Title: "app.cloud"}, nil)
	if err != nil || p2.Manifest != p.Manifest {
		t.Fatalf("the same file pushed again: manifest %v (%v), first %s", p2, err, p.Manifest)
	}
	// The file's own digest names it too: the registry has no manifest
	// of that digest, and the blob is read.
	for _, l := range []string{loc, "oci://" + host + "/team/app@" + p.Manifest.String(), "oci://" + host + "/team/app@" + sha(content).String()} {
		o, err := Open(ctx, l, nil)
		if err != nil {
			t.Fatal(err)
		}
		if o.Size() != int64(len(content)) || o.Digest() != sha(content) || o.Version() != sha(content).String() {
			t.Errorf("%s: size %d digest %s version %s", l, o.Size(), o.Digest(), o.Version())
		}
		buf := make([]byte, 2<<20)
		if _, err := o.ReadAt(buf, 1000); err != nil || !bytes.Equal(buf, content[1000:1000+len(buf)]) {
			t.Fatalf("%s: ReadAt: %v", l, err)
		}
		if sum, err := o.SHA256(ctx); err != nil || sum != sha(content) {
			t.Fatalf("%s: SHA256 = %s, %v", l, sum, err)
		}
		o.Close()
	}
	// Options.Digest pins the blob before anything is read.
	if _, err := Open(ctx, loc, &Options{Digest: sha([]byte("other"))}); !errors.Is(err, ErrDigestMismatch) {
		t.Errorf("Open with another digest: %v, want ErrDigestMismatch", err)
	}
	other := sha([]byte("other")).String()
	if _, err := Open(ctx, "oci://"+host+"/team/app@"+other, nil); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), other) {
		t.Errorf("Open of a digest nothing has: %v, want ErrNotFound naming the digest", err)
	}
	if _, err := Open(ctx, "oci://"+host+"/team/app:nope", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open of a missing tag: %v, want ErrNotFound", err)
	}
	// An image is not an assembly.
	img, _ := random.Image(100, 1)
	if err := ggcr.Write(mustRef(t, host+"/team/image:v1"), img); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, "oci://"+host+"/team/image:v1", nil); !errors.Is(err, ErrNotAssembly) {
		t.Errorf("Open of an image: %v, want ErrNotAssembly", err)
	}
}

func mustRef(t *testing.T, s string) name.Reference {
	r, err := name.ParseReference(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestOCIInProcess(t *testing.T) { pushRead(t, inProcessRegistry(t, nil)) }

func TestOCIDockerRegistry(t *testing.T) { pushRead(t, dockerRegistry(t)) }

// TestOCIWrongBlob: a registry that answers a blob's digest with other
// bytes fails: at once when it names another digest, at the end (the
// whole file's SHA-256) when it does not.
func TestOCIWrongBlob(t *testing.T) {
	ctx := context.Background()
	content := randomBytes(t, 1<<20)
	other := append([]byte{}, content...)
	other[500000] ^= 0xff
	for _, c := range []struct {
		name   string
		header bool
	}{{"digest header", true}, {"same size, other bytes", false}} {
		t.Run(c.name, func(t *testing.T) {
			var lie bool
			host := inProcessRegistry(t, func(w http.ResponseWriter, r *http.Request) bool {
				if !lie || r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/blobs/"+sha(content).String()) {
					return false
				}
				if c.header {
					w.Header().Set("Docker-Content-Digest", sha(other).String())
				}
				http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(other))
				return true
			})
			loc := "oci://" + host + "/team/app:v1"
			if _, err := Push(ctx, loc, File{R: bytes.NewReader(content), Size: int64(len(content)), SHA256: sha(content)}, nil); err != nil {
				t.Fatal(err)
			}
			lie = true
			o, err := Open(ctx, loc, nil)
			if c.header {
				if !errors.Is(err, ErrDigestMismatch) {
					t.Fatalf("Open: %v, want ErrDigestMismatch", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if _, err := o.SHA256(ctx); !errors.Is(err, ErrDigestMismatch) {
				t.Fatalf("SHA256: %v, want ErrDigestMismatch", err)
			}
		})
	}
}

func TestPushHTTPSUnsupported(t *testing.T) {
	_, err := Push(context.Background(), "https://example.com/app.cloud", File{R: bytes.NewReader(nil), SHA256: sha(nil)}, nil)
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Push to https: %v, want ErrUnsupported", err)
	}
}

// TestOCICredentials: a registry that wants a password gets the one the
// Docker configuration holds for it (DOCKER_CONFIG, as 'docker login'
// writes it); without it, push and open fail.
func TestOCICredentials(t *testing.T) {
	host := inProcessRegistry(t, func(w http.ResponseWriter, r *http.Request) bool {
		if u, p, ok := r.BasicAuth(); ok && u == "ci" && p == "s3cret" {
			return false
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
		return true
	})
	ctx := context.Background()
	content := randomBytes(t, 100000)
	f := File{R: bytes.NewReader(content), Size: int64(len(content)), SHA256: sha(content)}
	loc := "oci://" + host + "/private/app:v1"
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	if _, err := Push(ctx, loc, f, nil); err == nil || !(strings.Contains(err.Error(), "UNAUTHORIZED") || strings.Contains(err.Error(), "401")) {
		t.Fatalf("Push without credentials: %v", err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"auths":{"`+host+`":{"auth":"Y2k6czNjcmV0"}}}`), 0o600) // ci:s3cret
	t.Setenv("DOCKER_CONFIG", dir)
	if _, err := Push(ctx, loc, f, nil); err != nil {
		t.Fatalf("Push with the Docker configuration's credentials: %v", err)
	}
	o, err := Open(ctx, loc, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if sum, err := o.SHA256(ctx); err != nil || sum != sha(content) {
		t.Fatalf("SHA256 = %s, %v", sum, err)
	}
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	if _, err := Open(ctx, loc, nil); err == nil || !(strings.Contains(err.Error(), "UNAUTHORIZED") || strings.Contains(err.Error(), "401")) {
		t.Fatalf("Open without credentials: %v", err)
	}
}

// TestOCIPushStalls: an upload the registry stops reading fails with
// ErrTimeout after Options.StallTimeout, however long the upload.
func TestOCIPushStalls(t *testing.T) {
	host := inProcessRegistry(t, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPatch || (r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads/")) {
			// Reads nothing, answers nothing (an unread body keeps the
			// server from noticing that the client went away).
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
			return true
		}
		return false
	})
	contents := map[int][]byte{1 << 20: randomBytes(t, 1<<20), 4 << 20: randomBytes(t, 4<<20)}
	// However long the upload: the stall timeout ends it, so 4 MiB take
	// no longer than 1 MiB.
	scaling.Bounded(t, "a stalled upload", 1<<20, func(n int) {
		content := contents[n]
		_, err := Push(context.Background(), "oci://"+host+"/team/app:v1", File{R: bytes.NewReader(content), Size: int64(len(content)), SHA256: sha(content)},
			&Options{StallTimeout: 300 * time.Millisecond})
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("Push to a stalled registry: %v, want ErrTimeout", err)
		}
	})
}
