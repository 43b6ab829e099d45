package deploy

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
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
	if r.session, err = newSession(context.Background(), &r.opts); err != nil {
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
	auth, err := ecrAuth(context.Background(), r.session.in(m[2]).ecr)
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
