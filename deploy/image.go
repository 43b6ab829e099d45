package deploy

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
)

// imageKind pushes a saved image (`docker image save`) to a registry.
type imageKind struct{}

func init() { registerKind(droplets.DockerImageType, imageKind{}) }

func (imageKind) resolved(d *droplet) { assetDestination(d) }

func (imageKind) purpose() purpose { return forImages }

// usable: the tag in the registry holds the saved image.
func (k imageKind) usable(ctx context.Context, d *droplet) ([]string, error) { return k.status(ctx, d) }

func (imageKind) check(r *runner, id string, spec *assembly.Droplet) error {
	p := spec.Properties
	if _, ok := r.src.sizes[str(p, "savedImage")]; !ok {
		return fmt.Errorf("properties.savedImage: %q is not in the assembly", str(p, "savedImage"))
	}
	if str(p, "pushTarget") == "" {
		return fmt.Errorf("properties.pushTarget: a docker-image droplet needs a repository to push to")
	}
	return nil
}

func tagOf(props map[string]any) string {
	if t := str(props, "tagName"); t != "" {
		return t
	}
	return "latest"
}

// ref is the tag pushed: pushTarget:tagName.
func (imageKind) ref(d *droplet) (name.Tag, error) {
	target := str(d.props, "pushTarget")
	t, err := name.NewTag(target+":"+tagOf(d.props), name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("%w: properties.pushTarget %q: %v", ErrParameter, target, err)
	}
	return t, nil
}

// image reads the saved image into a spool, through the verification to
// its end, before any of it is used: go-containerregistry reads the
// archive many times, a part at a time, which no check of the whole file
// could follow; it reads the spool. release frees the spool.
func (imageKind) image(d *droplet) (img v1.Image, release func() error, err error) {
	saved := str(d.props, "savedImage")
	return spoolImage(func(w io.Writer) error { return copyFile(w, d.run.src, saved) }, func(err error) error {
		return fmt.Errorf("properties.savedImage %s: not a `docker image save` archive: %v", saved, err)
	})
}

// spoolImage writes a `docker image save` archive into a spool with write
// and reads it as an image; release frees the spool. notImage words the
// error of an archive that holds no image.
func spoolImage(write func(io.Writer) error, notImage func(error) error) (img v1.Image, release func() error, err error) {
	sp, err := newSpool(write)
	if err != nil {
		return nil, nil, err
	}
	if img, err = tarball.Image(func() (io.ReadCloser, error) { return io.NopCloser(sp.reader()), nil }, nil); err != nil {
		sp.Close()
		return nil, nil, notImage(err)
	}
	return img, sp.Close, nil
}

// local is what the droplet pushes: the tag, the saved image and its
// digest (release frees the image).
func (k imageKind) local(d *droplet) (ref name.Tag, img v1.Image, digest v1.Hash, release func() error, err error) {
	if ref, err = k.ref(d); err != nil {
		return
	}
	if img, release, err = k.image(d); err != nil {
		return
	}
	if digest, err = img.Digest(); err != nil {
		release()
		return ref, nil, digest, nil, fmt.Errorf("properties.savedImage: %v", err)
	}
	return
}

// ecrHostRE matches an ECR registry: ACCOUNT.dkr.ecr[-fips].REGION.amazonaws.com[.cn].
var ecrHostRE = regexp.MustCompile(`^[0-9]{12}\.dkr\.ecr(-fips)?\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$`)

// remoteOptions authenticate (ECR through its API, others through the
// Docker credential store) and carry traffic over a transport that sends
// plain HTTP to loopback hosts only.
func remoteOptions(ctx context.Context, d *droplet, reg name.Registry) ([]remote.Option, error) {
	opts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(loopbackOnly{next: d.run.transport()})}
	if m := ecrHostRE.FindStringSubmatch(reg.RegistryStr()); m != nil {
		// The registry's own account and region (the droplet's, for a
		// docker-build; a docker-image names any registry).
		account, _, _ := strings.Cut(reg.RegistryStr(), ".")
		cl, err := d.run.creds.reach(ctx, account, m[2], forImages)
		if err != nil {
			return nil, err
		}
		auth, err := ecrAuth(ctx, cl.ecr)
		if err != nil {
			return nil, err
		}
		return append(opts, remote.WithAuth(auth)), nil
	}
	kc := d.run.opts.Keychain
	if kc == nil {
		kc = authn.DefaultKeychain
	}
	return append(opts, remote.WithAuthFromKeychain(kc)), nil
}

func (r *runner) transport() http.RoundTripper {
	if r.opts.Transport != nil {
		return r.opts.Transport
	}
	return http.DefaultTransport
}

// ecrAuth gets a registry login from ecr:GetAuthorizationToken.
func ecrAuth(ctx context.Context, c *ecr.Client) (authn.Authenticator, error) {
	out, err := c.GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
	if err != nil {
		return nil, fmt.Errorf("%w: ecr:GetAuthorizationToken: %s", ErrAWS, apiMessage(err))
	}
	if len(out.AuthorizationData) == 0 {
		return nil, fmt.Errorf("%w: ecr:GetAuthorizationToken returned no token", ErrAWS)
	}
	raw, err := base64.StdEncoding.DecodeString(aws.ToString(out.AuthorizationData[0].AuthorizationToken))
	if err != nil {
		return nil, fmt.Errorf("%w: ecr:GetAuthorizationToken: a token that is not base64", ErrAWS)
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok {
		return nil, fmt.Errorf("%w: ecr:GetAuthorizationToken: a token that is not USER:PASSWORD", ErrAWS)
	}
	return authn.FromConfig(authn.AuthConfig{Username: user, Password: pass}), nil
}

// loopbackOnly refuses plain HTTP to any host but a loopback one, as
// Docker does (go-containerregistry would also try it for private
// addresses).
type loopbackOnly struct{ next http.RoundTripper }

func (l loopbackOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "http" && !isLoopback(req.URL.Hostname()) {
		return nil, fmt.Errorf("plain HTTP to %s refused: only loopback registries are reached without TLS", req.URL.Host)
	}
	return l.next.RoundTrip(req)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// imageAttrs are an image's attributes: where it was pushed, by digest and by tag.
func imageAttrs(ref name.Tag, digest v1.Hash) map[string]string {
	return map[string]string{"exactImageId": ref.Context().Name() + "@" + digest.String(), "imageName": ref.Name()}
}

// remoteDigest is the digest the tag points at, or "" when there is none.
func remoteDigest(ctx context.Context, d *droplet, ref name.Tag) (v1.Hash, bool, error) {
	opts, err := remoteOptions(ctx, d, ref.Registry)
	if err != nil {
		return v1.Hash{}, false, err
	}
	desc, err := remote.Head(ref, opts...)
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) && te.StatusCode == http.StatusNotFound {
			return v1.Hash{}, false, nil
		}
		return v1.Hash{}, false, fmt.Errorf("%w: %s: %v", ErrPush, ref, err)
	}
	return desc.Digest, true, nil
}

// push writes the image to ref.
func push(ctx context.Context, d *droplet, ref name.Tag, img v1.Image) error {
	opts, err := remoteOptions(ctx, d, ref.Registry)
	if err != nil {
		return err
	}
	d.progress("pushing %s", ref)
	if err := remote.Write(ref, img, opts...); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrPush, ref, err)
	}
	return nil
}

func (k imageKind) current(ctx context.Context, d *droplet) (map[string]string, bool, error) {
	return currentTag(ctx, d, k.ref)
}

// currentTag is the attributes of the image the droplet's tag points at;
// ok is false when there is no such tag.
func currentTag(ctx context.Context, d *droplet, refOf func(*droplet) (name.Tag, error)) (attrs map[string]string, ok bool, err error) {
	ref, err := refOf(d)
	if err != nil {
		return nil, false, err
	}
	h, ok, err := remoteDigest(ctx, d, ref)
	if err != nil || !ok {
		return nil, false, err
	}
	return imageAttrs(ref, h), true, nil
}

func (k imageKind) deploy(ctx context.Context, d *droplet) (Outcome, map[string]string, error) {
	ref, img, digest, release, err := k.local(d)
	if err != nil {
		return "", nil, err
	}
	defer release()
	have, ok, err := remoteDigest(ctx, d, ref)
	if err != nil {
		return "", nil, err
	}
	if ok && have == digest {
		d.res.action("%s already points at %s", ref, digest)
		return Unchanged, imageAttrs(ref, digest), nil
	}
	if err := push(ctx, d, ref, img); err != nil {
		return "", nil, err
	}
	d.res.action("pushed %s (%s)", ref, digest)
	return Pushed, imageAttrs(ref, digest), nil
}

func (k imageKind) plan(ctx context.Context, d *droplet) error {
	if len(d.unknown) > 0 {
		d.res.action("push the image to a place known after deploy (%s)", strings.Join(d.unknown, ", "))
		return nil
	}
	ref, digest, have, ok, err := k.compare(ctx, d)
	if err != nil {
		return err
	}
	if ok && have == digest {
		d.res.action("%s unchanged (%s)", ref, digest)
		d.run.setAttrs(d.id, imageAttrs(ref, digest))
		return nil
	}
	d.res.action("push %s (%s)", ref, digest)
	d.run.setAttrs(d.id, imageAttrs(ref, digest))
	return nil
}

// compare reads the saved image's digest and the one its tag points at
// in the registry (ok false when the tag is not there): what plan, status
// and diff judge an image droplet by.
func (k imageKind) compare(ctx context.Context, d *droplet) (ref name.Tag, digest, have v1.Hash, ok bool, err error) {
	ref, _, digest, release, err := k.local(d)
	if err != nil {
		return ref, digest, have, false, err
	}
	defer release()
	have, ok, err = remoteDigest(ctx, d, ref)
	return ref, digest, have, ok, err
}

func (k imageKind) status(ctx context.Context, d *droplet) ([]string, error) {
	ref, digest, have, ok, err := k.compare(ctx, d)
	if err != nil {
		return nil, err
	}
	d.run.setAttrs(d.id, imageAttrs(ref, digest))
	switch {
	case !ok:
		return nil, absent("%s does not exist", ref)
	case have != digest:
		return []string{fmt.Sprintf("%s points at %s, want %s", ref, have, digest)}, nil
	}
	return nil, nil
}

// buildKind is a Docker build context (a CDK image asset). It needs a
// Docker engine to build; with none, it is refused before any change.
type buildKind struct{}

func dockerAvailable(ctx context.Context, opts *Options) bool {
	if opts.DockerAvailable != nil {
		return opts.DockerAvailable(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return osexec.CommandContext(ctx, "docker", "version", "--format", "{{.Server.Version}}").Run() == nil
}

// buildUnsupported are docker-build properties that reach outside the
// verified archive (local secrets, SSH agents, other contexts, caches,
// outputs): refused, so that every byte built comes from the assembly.
var buildUnsupported = []string{"buildSecrets", "buildSsh", "buildContexts", "outputs", "cacheFrom", "cacheTo"}

func init() { registerKind(droplets.DockerBuildType, buildKind{}) }

func (buildKind) resolved(d *droplet) { assetDestination(d) }

func (buildKind) purpose() purpose { return forImages }

// usable: the tag in the registry holds an image this droplet built.
func (k buildKind) usable(ctx context.Context, d *droplet) ([]string, error) { return k.status(ctx, d) }

func (buildKind) check(r *runner, id string, spec *assembly.Droplet) error {
	p := spec.Properties
	for _, k := range buildUnsupported {
		if v, ok := p[k]; ok && v != nil {
			return fmt.Errorf("%w: properties.%s: deploy builds from the verified archive only, and %s reaches outside it: build and push this image with cdk-assets, and leave the droplet out with Options.Only", ErrUndeployable, k, k)
		}
	}
	if len(r.src.filesUnder(str(p, "directory"))) == 0 {
		return fmt.Errorf("properties.directory: %q holds no file of the assembly", str(p, "directory"))
	}
	if str(p, "repositoryName") == "" || str(p, "imageTag") == "" {
		return fmt.Errorf("properties: a docker-build droplet needs repositoryName and imageTag")
	}
	if !r.forStatus && !dockerAvailable(context.Background(), &r.opts) {
		return fmt.Errorf("%w: droplet %s is a Docker build context (%s): building it needs a Docker engine, and none answers (docker version); start one, or leave the droplet out with Options.Only", ErrNoDocker, id, spec.Type)
	}
	return nil
}

// ref is where the image goes: the ECR repository of the droplet's
// account and region, tagged imageTag (CDK's destination).
func (buildKind) ref(d *droplet) (name.Tag, error) {
	suffix := "amazonaws.com"
	if strings.HasPrefix(d.region, "cn-") {
		suffix = "amazonaws.com.cn"
	}
	s := fmt.Sprintf("%s.dkr.ecr.%s.%s/%s:%s", d.account, d.region, suffix, str(d.props, "repositoryName"), str(d.props, "imageTag"))
	t, err := name.NewTag(s, name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("%w: repositoryName and imageTag make %q: %v", ErrParameter, s, err)
	}
	return t, nil
}

// build builds the image with the local engine from a tar of the build
// context read from the verified archive, streamed to its standard input
// (the engine never reads a folder on disk; a file that is not the signed
// bytes ends the stream with an error, and the build fails), then saves it
// to a spool (release frees it).
func (buildKind) build(ctx context.Context, d *droplet) (img v1.Image, release func() error, err error) {
	dir := strings.TrimSuffix(str(d.props, "directory"), "/")
	exec := map[string]bool{}
	for _, e := range strList(d.props, "executables") {
		exec[e] = true
	}
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		for _, n := range d.run.src.filesUnder(dir) {
			rel := strings.TrimPrefix(n, dir+"/")
			mode := int64(0o644)
			if exec[rel] {
				mode = 0o755
			}
			if err := tw.WriteHeader(&tar.Header{Name: rel, Mode: mode, Size: d.run.src.sizes[n], Typeflag: tar.TypeReg}); err != nil {
				pw.CloseWithError(err)
				return
			}
			if err := copyFile(tw, d.run.src, n); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
		pw.CloseWithError(tw.Close())
	}()
	defer pr.Close()
	tmp, err := os.MkdirTemp("", "assemble-build-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	iid := filepath.Join(tmp, "iid")
	args := []string{"build", "--iidfile", iid}
	if f := str(d.props, "dockerFile"); f != "" {
		args = append(args, "--file", f)
	}
	args = append(args, buildArgs(d.props)...)
	args = append(args, "-")
	d.progress("docker %s", strings.Join(args, " "))
	var stderr bytes.Buffer
	cmd := osexec.CommandContext(ctx, "docker", args...)
	cmd.Stdin, cmd.Stderr = pr, &stderr
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("%w: docker build: %v: %s", ErrPush, err, lastLines(stderr.String()))
	}
	id, err := os.ReadFile(iid)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: docker build wrote no image ID: %v", ErrPush, err)
	}
	stderr.Reset()
	return spoolImage(func(w io.Writer) error {
		cmd := osexec.CommandContext(ctx, "docker", "image", "save", strings.TrimSpace(string(id)))
		cmd.Stdout, cmd.Stderr = w, &stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%w: docker image save: %v: %s", ErrPush, err, lastLines(stderr.String()))
		}
		return nil
	}, func(err error) error { return fmt.Errorf("%w: docker image save wrote no image: %v", ErrPush, err) })
}

// buildArgs are the docker build flags of the droplet's properties.
func buildArgs(p map[string]any) []string {
	var args []string
	ba := strMap(p, "buildArgs")
	for _, k := range slices.Sorted(maps.Keys(ba)) {
		args = append(args, "--build-arg", k+"="+ba[k])
	}
	for _, f := range []struct{ prop, flag string }{{"buildTarget", "--target"}, {"platform", "--platform"}, {"networkMode", "--network"}} {
		if v := str(p, f.prop); v != "" {
			args = append(args, f.flag, v)
		}
	}
	if off, _, _ := boolProp(p, "cacheDisabled"); off {
		args = append(args, "--no-cache")
	}
	return args
}

func lastLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return strings.Join(lines, "; ")
}

// current: the tag, when it exists (its name is CDK's hash of the build
// context, so the tag present is this image, as cdk-assets judges it).
func (k buildKind) current(ctx context.Context, d *droplet) (map[string]string, bool, error) {
	return currentTag(ctx, d, k.ref)
}

func (k buildKind) deploy(ctx context.Context, d *droplet) (Outcome, map[string]string, error) {
	if attrs, ok, err := k.current(ctx, d); err != nil {
		return "", nil, err
	} else if ok {
		d.res.action("%s exists already (the tag names the build context's hash): not built", attrs["imageName"])
		return Unchanged, attrs, nil
	}
	ref, err := k.ref(d)
	if err != nil {
		return "", nil, err
	}
	img, release, err := k.build(ctx, d)
	if err != nil {
		return "", nil, err
	}
	defer release()
	digest, err := img.Digest()
	if err != nil {
		return "", nil, err
	}
	if err := push(ctx, d, ref, img); err != nil {
		return "", nil, err
	}
	d.res.action("built and pushed %s (%s)", ref, digest)
	return Pushed, imageAttrs(ref, digest), nil
}

func (k buildKind) plan(ctx context.Context, d *droplet) error {
	attrs, ok, err := k.current(ctx, d)
	if err != nil {
		return err
	}
	if ok {
		d.res.action("%s exists already: unchanged", attrs["imageName"])
		d.run.setAttrs(d.id, attrs)
		return nil
	}
	ref, err := k.ref(d)
	if err != nil {
		return err
	}
	d.res.action("build the image from %s and push %s (its digest known after deploy)", str(d.props, "directory"), ref)
	return nil
}

func (k buildKind) status(ctx context.Context, d *droplet) ([]string, error) {
	attrs, ok, err := k.current(ctx, d)
	if err != nil {
		return nil, err
	}
	if !ok {
		ref, _ := k.ref(d)
		return nil, absent("%s does not exist", ref)
	}
	d.run.setAttrs(d.id, attrs)
	return nil, nil
}
