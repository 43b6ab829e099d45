package deploy

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/cloud-assembly/assemble/signing"
)

// savedImage is a `docker image save` archive of a random image, as
// tarball.Write makes it (manifest.json, config and layers).
func savedImage(t *testing.T) ([]byte, string) {
	t.Helper()
	img, err := random.Image(2048, 2)
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag("example.com/app:saved")
	var buf bytes.Buffer
	if err := tarball.Write(tag, img, &buf); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), d.String()
}

// The image is pushed to a real registry (go-containerregistry's, in
// process, over plain HTTP on loopback); a rerun pushes nothing.
func TestPushSavedImage(t *testing.T) {
	cfg := awsConfig(t) // STS answers the account check
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	tarBytes, digest := savedImage(t)
	src := signedSource(t, manifest(map[string]any{
		"Image": map[string]any{"type": "npm://@aws-cdk/aws-ecr.DockerImageDroplet", "environment": env,
			"properties": map[string]any{"savedImage": "docker/app.tar", "pushTarget": host + "/team/app", "tagName": "v1"}},
	}), files{"docker/app.tar": string(tarBytes)})
	// The plan says what would be pushed, and pushes nothing.
	po := opts(cfg, nil)
	po.Plan = true
	res, err := Deploy(context.Background(), src, po)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Droplet("Image").Actions, "\n"); got != "push "+host+"/team/app:v1 ("+digest+")" {
		t.Errorf("plan: %q", got)
	}
	if _, err := remote.Head(mustTag(t, host+"/team/app:v1")); err == nil {
		t.Fatal("the plan pushed the image")
	}
	res, err = Deploy(context.Background(), src, opts(cfg, nil))
	if err != nil {
		t.Fatal(err)
	}
	d := res.Droplet("Image")
	if d.Outcome != Pushed {
		t.Fatalf("outcome %s", d.Outcome)
	}
	if want := host + "/team/app@" + digest; d.Attributes["exactImageId"] != want {
		t.Errorf("exactImageId %q, want %q", d.Attributes["exactImageId"], want)
	}
	if want := host + "/team/app:v1"; d.Attributes["imageName"] != want {
		t.Errorf("imageName %q, want %q", d.Attributes["imageName"], want)
	}
	ref, _ := name.NewTag(host + "/team/app:v1")
	desc, err := remote.Head(ref)
	if err != nil || desc.Digest.String() != digest {
		t.Fatalf("registry holds %v (%v), want %s", desc, err, digest)
	}
	res, err = Deploy(context.Background(), src, opts(cfg, nil))
	if err != nil || res.Droplet("Image").Outcome != Unchanged {
		t.Fatalf("rerun: %v %s", err, res.Droplet("Image").Outcome)
	}
	if st, err := Status(context.Background(), src, opts(cfg, nil)); err != nil || !st.Match {
		t.Fatalf("status: %v %+v", err, st)
	}
}

// Plain HTTP goes to loopback registries only, as Docker does.
func TestPlainHTTPOnlyToLoopback(t *testing.T) {
	called := false
	next := roundTripFunc(func(*http.Request) (*http.Response, error) {
		called = true
		return &http.Response{StatusCode: 200, Body: http.NoBody}, nil
	})
	lo := loopbackOnly{next: next}
	for _, u := range []string{"http://10.0.0.8:5000/v2/", "http://192.168.1.2/v2/", "http://registry.example.com/v2/"} {
		called = false
		req := &http.Request{URL: mustURL(t, u)}
		if _, err := lo.RoundTrip(req); err == nil || called {
			t.Errorf("%s: plain HTTP was sent", u)
		}
	}
	for _, u := range []string{"http://127.0.0.1:5000/v2/", "http://localhost:5000/v2/", "http://[::1]:5000/v2/", "https://10.0.0.8/v2/"} {
		called = false
		if _, err := lo.RoundTrip(&http.Request{URL: mustURL(t, u)}); err != nil || !called {
			t.Errorf("%s: refused: %v", u, err)
		}
	}
}

func TestDockerBuildRefusedWithoutEngine(t *testing.T) {
	cfg := awsConfig(t)
	src := signedSource(t, manifest(map[string]any{
		"Build": map[string]any{"type": "npm://@cloud-assembly/docker.DockerBuildDroplet", "environment": env,
			"properties": map[string]any{"directory": "ctx", "repositoryName": "app", "imageTag": "v1"}},
	}), files{"ctx/Dockerfile": "FROM scratch\n"})
	o := opts(cfg, nil)
	o.DockerAvailable = func(context.Context) bool { return false }
	_, err := Deploy(context.Background(), src, o)
	if !errors.Is(err, ErrNoDocker) || !strings.Contains(err.Error(), "Build") {
		t.Fatalf("got %v", err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// ECR hosts log in with ecr:GetAuthorizationToken (moto answers it); the
// host names the region.
func TestECRAuth(t *testing.T) {
	cfg := awsConfig(t)
	r := &runner{opts: Options{AWS: &cfg}}
	var err error
	if r.creds, err = newCredentials(context.Background(), &r.opts, ""); err != nil {
		t.Fatal(err)
	}
	m := ecrHostRE.FindStringSubmatch("123456789012.dkr.ecr.eu-west-1.amazonaws.com")
	if m == nil || m[2] != "eu-west-1" {
		t.Fatalf("ECR host not recognized: %v", m)
	}
	for _, h := range []string{"123456789012.dkr.ecr.eu-west-1.amazonaws.com.evil.example", "ghcr.io", "dkr.ecr.eu-west-1.amazonaws.com"} {
		if ecrHostRE.MatchString(h) {
			t.Errorf("%s taken for ECR", h)
		}
	}
	cl, err := r.creds.reach(context.Background(), "123456789012", m[2], forImages)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := ecrAuth(context.Background(), cl.ecr)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := auth.Authorization()
	if err != nil || ac.Username != "AWS" || ac.Password == "" {
		t.Errorf("authorization %+v, %v", ac, err)
	}
}

func mustTag(t *testing.T, s string) name.Tag {
	tag, err := name.NewTag(s)
	if err != nil {
		t.Fatal(err)
	}
	return tag
}

// A Docker build context is built by the local engine from a tar of the
// verified files fed on standard input, saved, and pushed to the ECR
// repository of the droplet's account and region; a rerun finds the tag
// (CDK's hash of the context) and builds nothing. A stand-in `docker`
// plays the engine (none runs here); the ECR host's traffic goes to an
// in-process registry.
func TestDockerBuildPushesToECR(t *testing.T) {
	cfg := awsConfig(t)
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	tarBytes, digest := savedImage(t)
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "image.tar"), tarBytes, 0o644)
	script := `#!/bin/sh
dir=$(dirname "$0")
case "$1" in
version) exit 0 ;;
build) echo "$@" > "$dir/args"; cat > "$dir/context.tar"; shift
  while [ $# -gt 0 ]; do if [ "$1" = --iidfile ]; then echo sha256:feed > "$2"; fi; shift; done ;;
image) cat "$dir/image.tar" ;;
*) exit 3 ;;
esac
`
	if err := os.WriteFile(filepath.Join(bin, "docker"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	src := signedSource(t, manifest(map[string]any{
		"Img": map[string]any{"type": "npm://@cloud-assembly/docker.DockerBuildDroplet", "environment": "aws://unknown-account/unknown-region",
			"properties": map[string]any{"directory": "ctx", "dockerFile": "build/Dockerfile", "buildArgs": map[string]any{"A": "1"}, "platform": "linux/amd64",
				"repositoryName": `cdk-containers-\${AWS::AccountId}`, "imageTag": "abc123", "executables": []any{"run.sh"}}},
	}), files{"ctx/build/Dockerfile": "FROM scratch\n", "ctx/run.sh": "#!/bin/sh\n"})
	host := motoAccount + ".dkr.ecr.us-east-1.amazonaws.com"
	local, _ := url.Parse(srv.URL)
	o := opts(cfg, nil)
	o.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host != host {
			return nil, fmt.Errorf("unexpected host %s", r.URL.Host)
		}
		fwd := r.Clone(r.Context())
		fwd.URL.Scheme, fwd.URL.Host, fwd.Host = "http", local.Host, local.Host
		resp, err := http.DefaultTransport.RoundTrip(fwd)
		if resp != nil {
			resp.Request = r // as if ECR answered over TLS
		}
		return resp, err
	})
	res, err := Deploy(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Droplet("Img")
	if want := host + "/cdk-containers-" + motoAccount + "@" + digest; d.Outcome != Pushed || d.Attributes["exactImageId"] != want {
		t.Fatalf("%s %v, want %s", d.Outcome, d.Attributes, want)
	}
	args, _ := os.ReadFile(filepath.Join(bin, "args"))
	if got := strings.TrimSpace(string(args)); !strings.HasSuffix(got, "--file build/Dockerfile --build-arg A=1 --platform linux/amd64 -") {
		t.Errorf("docker %s", got)
	}
	ctxTar, _ := os.ReadFile(filepath.Join(bin, "context.tar"))
	tr := tar.NewReader(bytes.NewReader(ctxTar))
	modes := map[string]int64{}
	for h, err := tr.Next(); err == nil; h, err = tr.Next() {
		modes[h.Name] = h.Mode
	}
	if modes["build/Dockerfile"] != 0o644 || modes["run.sh"] != 0o755 || len(modes) != 2 {
		t.Errorf("build context %v", modes)
	}
	os.Remove(filepath.Join(bin, "args"))
	res, err = Deploy(context.Background(), src, o)
	if err != nil || res.Droplet("Img").Outcome != Unchanged {
		t.Fatalf("rerun: %v %s", err, res.Droplet("Img").Outcome)
	}
	if _, err := os.Stat(filepath.Join(bin, "args")); err == nil {
		t.Error("the rerun built the image again")
	}
}

// Properties that reach outside the archive are refused before any change.
func TestDockerBuildRefusesOutsideInputs(t *testing.T) {
	cfg := awsConfig(t)
	src := signedSource(t, manifest(map[string]any{
		"Img": map[string]any{"type": "npm://@cloud-assembly/docker.DockerBuildDroplet", "environment": env,
			"properties": map[string]any{"directory": "ctx", "repositoryName": "r", "imageTag": "t", "buildSecrets": map[string]any{"id": "src=/home/me/.aws"}}},
	}), files{"ctx/Dockerfile": "FROM scratch\n"})
	o := opts(cfg, nil)
	o.DockerAvailable = func(context.Context) bool { return true }
	if _, err := Deploy(context.Background(), src, o); !errors.Is(err, ErrUndeployable) || !strings.Contains(err.Error(), "buildSecrets") {
		t.Fatalf("got %v", err)
	}
}

// A saved image changed after verification (a byte in the middle of its
// layer, CRC-32 kept right) fails with signing's sentinel while it is
// copied into the spool, before the registry is asked anything: the
// registry holds no tag.
func TestTamperedImagePushesNothing(t *testing.T) {
	cfg := awsConfig(t)
	var requests atomic.Int64
	reg := registry.New()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	img, err := random.Image(1<<20, 1) // a layer of random bytes: stored as is in the archive
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tarball.Write(mustTag(t, "example.com/app:saved"), img, &buf); err != nil {
		t.Fatal(err)
	}
	p := writeAssembly(t, manifest(map[string]any{
		"Image": map[string]any{"type": "npm://@aws-cdk/aws-ecr.DockerImageDroplet", "environment": env,
			"properties": map[string]any{"savedImage": "docker/app.tar", "pushTarget": host + "/team/app", "tagName": "v1"}},
	}), files{"docker/app.tar": buf.String()})
	sign(t, p, "ed25519.sec.asc", time.Now())
	src, err := open(t, p, "ed25519.pub.asc")
	if err != nil {
		t.Fatal(err)
	}
	if err := tamperer(t, p, buf.Bytes())(); err != nil {
		t.Fatal(err)
	}
	_, err = Deploy(context.Background(), src, opts(cfg, nil))
	if !errors.Is(err, signing.ErrDigestMismatch) {
		t.Fatalf("deploy: %v", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests to the registry", n)
	}
}
