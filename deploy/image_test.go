package deploy

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/google/go-containerregistry/pkg/authn"
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
	// The repository is made by cdk bootstrap, never by deploy: without
	// it, nothing is built or pushed.
	if _, err := Deploy(context.Background(), src, o); !errors.Is(err, ErrRepository) || !strings.Contains(err.Error(), "cdk-containers-"+motoAccount) {
		t.Fatalf("no repository: want ErrRepository, got %v", err)
	}
	if _, err := os.Stat(filepath.Join(bin, "args")); err == nil {
		t.Fatal("built without a repository to push to")
	}
	makeRepository(t, cfg, "cdk-containers-"+motoAccount)
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

// makeRepository creates an ECR repository in cfg's account and region.
func makeRepository(t testing.TB, cfg aws.Config, name string) {
	t.Helper()
	if _, err := ecr.NewFromConfig(cfg).CreateRepository(context.Background(), &ecr.CreateRepositoryInput{RepositoryName: aws.String(name)}); err != nil {
		t.Fatal(err)
	}
}

// ecrRegistry stands in for one account/region's ECR registry: an
// in-process registry (go-containerregistry's) that answers only the
// login moto's ecr:GetAuthorizationToken gives that account (moto 5.2.1
// makes the password ACCOUNT-auth-token, ACCOUNT being the credentials'
// account: so a push with another account's login is refused, 401), and
// counts the writes.
type ecrRegistry struct {
	host                   string // ACCOUNT.dkr.ecr.REGION.amazonaws.com
	srv                    *httptest.Server
	writes, blobs, commits atomic.Int64 // every write; blob uploads finished; manifests put
	refused                atomic.Int64 // requests without the account's login
}

func newECRRegistry(t *testing.T, account, region string) *ecrRegistry {
	e := &ecrRegistry{host: account + ".dkr.ecr." + region + ".amazonaws.com"}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	login := "Basic " + base64.StdEncoding.EncodeToString([]byte("AWS:"+account+"-auth-token"))
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != login {
			e.refused.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="`+e.host+`"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			e.writes.Add(1)
			switch {
			case r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads/"):
				e.blobs.Add(1)
			case r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/"):
				e.commits.Add(1)
			}
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

// ecrTransport sends each ECR host's traffic to its stand-in, as if ECR
// answered over TLS; any other host is an error.
func ecrTransport(regs map[string]*ecrRegistry) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		e := regs[r.URL.Host]
		if e == nil {
			return nil, fmt.Errorf("unexpected host %s", r.URL.Host)
		}
		local, _ := url.Parse(e.srv.URL)
		fwd := r.Clone(r.Context())
		fwd.URL.Scheme, fwd.URL.Host, fwd.Host = "http", local.Host, local.Host
		resp, err := http.DefaultTransport.RoundTrip(fwd)
		if resp != nil {
			resp.Request = r
		}
		return resp, err
	})
}

// Issue 30, item 3: a target over 2 accounts x 2 regions whose assembly
// holds a saved image: the image goes to each pair's own ECR registry
// (pushTarget ${AWS::AccountId}.dkr.ecr.${AWS::Region}.amazonaws.com/...),
// logged in with that account's ecr:GetAuthorizationToken through the
// target's deployRole, each blob and the manifest written once per
// registry; the stack of each pair takes its own registry's
// exactImageId. A pair whose repository does not exist is refused before
// anything is pushed anywhere (--max-failures 0). An unchanged re-deploy
// writes nothing to any registry and makes no changing AWS call; status
// matches in every pair.
func TestMatrixImages(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	pairs := []string{
		"aws://" + devAccount + "/us-east-1",
		"aws://" + devAccount + "/eu-west-1",
		"aws://" + prodAccount + "/us-east-1",
		"aws://" + prodAccount + "/eu-west-1", // its repository is made late
	}
	repo := "app-" + u
	regs := map[string]*ecrRegistry{}
	byPair := map[string]*ecrRegistry{}
	for i, p := range pairs {
		acct, region := p[6:18], p[19:]
		e := newECRRegistry(t, acct, region)
		regs[e.host], byPair[p] = e, e
		if i < 3 {
			makeRepository(t, inRegion(accountConfig(t, cfg, acct), region), repo)
		}
	}
	tarBytes, digest := savedImage(t)
	m := manifest(map[string]any{
		"Image": map[string]any{"type": "npm://@aws-cdk/aws-ecr.DockerImageDroplet", "environment": "aws://unknown-account/unknown-region",
			"properties": map[string]any{"savedImage": "docker/app.tar", "pushTarget": `\${AWS::AccountId}.dkr.ecr.\${AWS::Region}.amazonaws.com/` + repo, "tagName": "v1"}},
		"App": stack("App", "aws://unknown-account/unknown-region", "img-"+u, "app.yaml", map[string]string{"Stage": "${target.Stage}", "Target": "${Image.exactImageId}"}),
	})
	m["targets"] = map[string]any{"prod": map[string]any{"environments": pairs, "values": map[string]string{"Stage": "prod"}, "deployRole": deployRole}}
	src := signedSource(t, m, files{"docker/app.tar": string(tarBytes), "app.yaml": stageTemplate})

	c := &Counter{}
	o := opts(cfg, c)
	o.Method, o.Target, o.Concurrency, o.MaxFailures = Direct, "prod", 4, 0
	o.Transport = ecrTransport(regs)
	res, err := Deploy(context.Background(), src, o)
	if !errors.Is(err, ErrRepository) || !errors.Is(err, ErrPairNotStarted) || !strings.Contains(err.Error(), pairs[3]) {
		t.Fatalf("a missing repository: want ErrRepository for %s and the others not started, got %v", pairs[3], err)
	}
	if !errors.Is(errorsOf(res.Pairs[3]), ErrRepository) {
		t.Fatalf("%s: %s", pairs[3], res.Pairs[3].Error)
	}
	for _, e := range regs {
		if n := e.writes.Load(); n != 0 {
			t.Fatalf("%s: %d writes before the refusal", e.host, n)
		}
	}
	if n := changes(c); n != 0 {
		t.Fatalf("%d changing calls before the refusal", n)
	}

	acct, region := pairs[3][6:18], pairs[3][19:]
	makeRepository(t, inRegion(accountConfig(t, cfg, acct), region), repo)
	res, err = Deploy(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range res.Pairs {
		e := byPair[pr.Environment]
		d := pr.Droplet("Image")
		if want := e.host + "/" + repo + "@" + digest; d.Outcome != Pushed || d.Attributes["exactImageId"] != want {
			t.Fatalf("%s: %s %v, want %s", pr.Environment, d.Outcome, d.Attributes, want)
		}
		if e.blobs.Load() != 3 || e.commits.Load() != 1 {
			t.Errorf("%s: %d blob uploads and %d manifests, want the config and 2 layers once and the manifest once", e.host, e.blobs.Load(), e.commits.Load())
		}
		if e.refused.Load() == 0 {
			t.Errorf("%s: never asked for its login: the test shows nothing of the account", e.host)
		}
		desc, err := remote.Head(mustTag(t, e.host+"/"+repo+":v1"), remote.WithTransport(o.Transport),
			remote.WithAuth(&authn.Basic{Username: "AWS", Password: pr.Environment[6:18] + "-auth-token"}))
		if err != nil || desc.Digest.String() != digest {
			t.Fatalf("%s holds %v (%v), want %s", e.host, desc, err, digest)
		}
		ac := inRegion(accountConfig(t, cfg, pr.Environment[6:18]), pr.Environment[19:])
		if params, _ := stackParams(t, ac, "img-"+u); params["Target"] != e.host+"/"+repo+"@"+digest {
			t.Errorf("%s: the stack's Target is %q, not its own registry's image", pr.Environment, params["Target"])
		}
	}

	// Unchanged: no write to any registry, no changing call.
	for _, e := range regs {
		e.writes.Store(0)
	}
	c2 := &Counter{}
	o.APIOptions = []func(*middlewareStack) error{c2.Middleware}
	res, err = Deploy(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range regs {
		if n := e.writes.Load(); n != 0 {
			t.Errorf("rerun: %d writes to %s", n, e.host)
		}
	}
	if n := changes(c2); n != 0 {
		t.Errorf("rerun: %d changing calls (%v)", n, c2.Counts())
	}
	for _, pr := range res.Pairs {
		for _, d := range pr.Droplets {
			if d.Outcome != Unchanged {
				t.Errorf("rerun %s: %s %s", pr.Environment, d.ID, d.Outcome)
			}
		}
	}
	st, err := Status(context.Background(), src, o)
	if err != nil || len(st.Pairs) != 4 || !st.Match {
		t.Fatalf("status: %v %+v", err, st)
	}
}
