package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/cloud-assembly/assemble/digest"
	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	ggcr "github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The OCI artifact format (docs/oci.md).
const (
	// ArtifactType is the manifest's artifactType.
	ArtifactType = "application/vnd.cloud-assembly.v1"
	// LayerMediaType is the media type of the one layer, the .cloud file.
	LayerMediaType = "application/vnd.cloud-assembly.v1+zip"
	// EmptyConfigMediaType is the config's media type: the empty
	// descriptor of the OCI image spec (1.1), the two bytes "{}".
	EmptyConfigMediaType = "application/vnd.oci.empty.v1+json"
	// AnnotationTitle names the file (the layer's annotation);
	// AnnotationCreated is when it was pushed (the manifest's).
	AnnotationTitle   = "org.opencontainers.image.title"
	AnnotationCreated = "org.opencontainers.image.created"
)

// ociSource reads the assembly layer of an OCI artifact in ranges. The
// blob is addressed by its digest; its size comes from the manifest.
type ociSource struct {
	*httpSource
	digest   v1.Hash
	manifest v1.Manifest
	raw      []byte // the manifest as the registry sent it; nil when read by the blob's digest
}

// registryTransport returns an authenticated transport for the
// repository, with the registry's ping done once.
func registryTransport(ctx context.Context, repo name.Repository, o *Options, scope string) (http.RoundTripper, error) {
	auth, err := o.Keychain.Resolve(repo)
	if err != nil {
		return nil, fmt.Errorf("registry credentials for %s: %w", repo.RegistryStr(), err)
	}
	rt, err := transport.NewWithContext(ctx, repo.Registry, auth, newSafeTransport(o), []string{repo.Scope(scope)})
	if err != nil {
		return nil, registryError(fmt.Sprintf("registry %s", repo.RegistryStr()), err)
	}
	return rt, nil
}

// registryError maps a registry's error to a sentinel.
func registryError(what string, err error) error {
	var te *transport.Error
	if asTransportError(err, &te) {
		switch c := te.StatusCode; {
		case c == http.StatusNotFound:
			return fmt.Errorf("%w: %s: %v", ErrNotFound, what, err)
		case c == http.StatusUnauthorized || c == http.StatusForbidden:
			return fmt.Errorf("%s: %w: %v", what, ErrAccessDenied, err)
		case c >= 500 || c == http.StatusTooManyRequests:
			return transient{fmt.Errorf("%s: %w", what, err)}
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// newOCISource finds the assembly's blob: through the manifest the
// location names or, for oci://...@sha256:DIGEST where no manifest has
// that digest, the blob of that digest (the .cloud file's SHA-256 is the
// assembly's name everywhere).
func newOCISource(ctx context.Context, loc *Location, o *Options, obj *Object) (*ociSource, error) {
	s, err := manifestSource(ctx, loc, o, obj)
	if loc.tagless && errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w (no tag was given, so tag latest was tried; name one: oci://REGISTRY/REPOSITORY:TAG)", err)
	}
	// A registry asked for a manifest by a digest that is a blob's says
	// 404 (go-containerregistry) or fails reading the blob as a manifest
	// (the distribution registry: 500 UNKNOWN); either way the blob of
	// that digest is what the location names. Denied access and a
	// cancelled context are answers of their own.
	if d, ok := loc.Ref.(name.Digest); ok && err != nil && !errors.Is(err, ErrAccessDenied) && ctx.Err() == nil {
		var berr error
		if s, berr = blobSource(ctx, loc, d, o, obj); berr == nil {
			return s, nil
		}
		if !errors.Is(berr, ErrNotFound) {
			return nil, berr
		}
		if !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s: no manifest and no blob has digest %s; a digest here is the manifest's (push prints it) or the .cloud file's SHA-256 (verify prints it)", ErrNotFound, loc, d.DigestStr())
	}
	return s, err
}

// blobSource reads the blob of digest d as the assembly: a HEAD request
// learns its size.
func blobSource(ctx context.Context, loc *Location, d name.Digest, o *Options, obj *Object) (*ociSource, error) {
	h, err := v1.NewHash(d.DigestStr())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrLocation, loc, err)
	}
	r := d.Context()
	url := fmt.Sprintf("%s://%s/v2/%s/blobs/%s", r.Scheme(), r.RegistryStr(), r.RepositoryStr(), h)
	var s *ociSource
	err = obj.retry(ctx, func(rctx context.Context) error {
		rt, err := registryTransport(rctx, r, o, transport.PullScope)
		if err != nil {
			return err
		}
		client := &http.Client{Transport: rt, CheckRedirect: sameScheme}
		req, err := http.NewRequestWithContext(rctx, http.MethodHead, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusNotFound:
			return fmt.Errorf("%w: blob %s", ErrNotFound, h)
		case resp.StatusCode != http.StatusOK:
			return statusError("blob "+h.String(), resp)
		case resp.ContentLength <= 0:
			return fmt.Errorf("%w: blob %s: no Content-Length", ErrBadResponse, h)
		}
		s = &ociSource{httpSource: &httpSource{url: url, client: client, size: resp.ContentLength, blob: h.String()}, digest: h}
		return nil
	})
	return s, err
}

func manifestSource(ctx context.Context, loc *Location, o *Options, obj *Object) (*ociSource, error) {
	ref := loc.Ref
	var s *ociSource
	// With no credentials for the registry, ask for the manifest straight
	// away, as containerd does, and do the registry's handshake (a ping,
	// perhaps an anonymous token) only if it asks for one: a public or
	// local registry then costs one request less.
	if auth, err := o.Keychain.Resolve(ref.Context()); err == nil && auth == authn.Anonymous {
		err := obj.retry(ctx, func(rctx context.Context) error {
			var err error
			s, err = anonymousOCISource(rctx, loc, o)
			return err
		})
		if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrNotAssembly) || errors.Is(err, ErrDigestMismatch) {
			return s, err
		}
	}
	err := obj.retry(ctx, func(rctx context.Context) error {
		rt, err := registryTransport(rctx, ref.Context(), o, transport.PullScope)
		if err != nil {
			return err
		}
		desc, err := ggcr.Get(ref, ggcr.WithContext(rctx), ggcr.WithTransport(rt), ggcr.WithRetryBackoff(ggcr.Backoff{Steps: 1}))
		if err != nil {
			return registryError(fmt.Sprintf("manifest %s", loc), err)
		}
		m, err := assemblyManifest(desc.MediaType, desc.Manifest)
		if err != nil {
			return fmt.Errorf("%s: %w", loc, err)
		}
		layer := m.Layers[0]
		r := ref.Context()
		blob := fmt.Sprintf("%s://%s/v2/%s/blobs/%s", r.Scheme(), r.RegistryStr(), r.RepositoryStr(), layer.Digest)
		s = &ociSource{
			httpSource: &httpSource{url: blob, client: &http.Client{Transport: rt, CheckRedirect: sameScheme}, size: layer.Size, sizeFrom: "the manifest", blob: layer.Digest.String()},
			digest:     layer.Digest,
			manifest:   *m,
			raw:        desc.Manifest,
		}
		return nil
	})
	return s, err
}

// anonymousOCISource fetches the manifest with no credentials and no
// handshake: over https, or plain http to a loopback registry. Any answer
// but the manifest, or not found, is an error the caller answers with the
// handshake.
func anonymousOCISource(ctx context.Context, loc *Location, o *Options) (*ociSource, error) {
	ref := loc.Ref
	r := ref.Context()
	scheme := "https"
	if isLoopback(hostOf(r.RegistryStr())) {
		scheme = "http"
	}
	client := &http.Client{Transport: newSafeTransport(o), CheckRedirect: sameScheme}
	base := fmt.Sprintf("%s://%s/v2/%s/", scheme, r.RegistryStr(), r.RepositoryStr())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"manifests/"+ref.Identifier(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", string(types.OCIManifestSchema1)+", "+string(types.OCIImageIndex)+", "+string(types.DockerManifestSchema2))
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%w: manifest %s: %s", ErrNotFound, loc, resp.Status)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Errorf("manifest %s: %s: %w", loc, resp.Status, ErrAccessDenied)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("manifest %s: %s", loc, resp.Status)
	}
	raw, err := io.ReadAll(io.LimitReader(watchBody(ctx, resp.Body), maxManifest+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxManifest {
		return nil, fmt.Errorf("%w: manifest %s is larger than %d bytes", ErrNotAssembly, loc, maxManifest)
	}
	if d, ok := ref.(name.Digest); ok {
		if sum := digest.Of(raw); sum.String() != d.DigestStr() {
			return nil, fmt.Errorf("%w: manifest %s has digest %s", ErrDigestMismatch, loc, sum)
		}
	}
	mt, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	m, err := assemblyManifest(types.MediaType(strings.TrimSpace(mt)), raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loc, err)
	}
	layer := m.Layers[0]
	return &ociSource{
		httpSource: &httpSource{url: base + "blobs/" + layer.Digest.String(), client: client, size: layer.Size, sizeFrom: "the manifest", blob: layer.Digest.String()},
		digest:     layer.Digest,
		manifest:   *m,
		raw:        raw,
	}, nil
}

// maxManifest bounds a manifest's size (the registries' common limit).
const maxManifest = 4 << 20

// assemblyManifest parses and checks an artifact manifest (docs/oci.md).
func assemblyManifest(mt types.MediaType, raw []byte) (*v1.Manifest, error) {
	if mt != types.OCIManifestSchema1 {
		return nil, fmt.Errorf("%w: manifest media type %q, want %q", ErrNotAssembly, mt, types.OCIManifestSchema1)
	}
	var m v1.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", ErrNotAssembly, err)
	}
	if m.ArtifactType != ArtifactType && string(m.Config.MediaType) != ArtifactType {
		return nil, fmt.Errorf("%w: artifactType %q, want %q", ErrNotAssembly, m.ArtifactType, ArtifactType)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != LayerMediaType {
		return nil, fmt.Errorf("%w: want one layer of media type %q", ErrNotAssembly, LayerMediaType)
	}
	l := m.Layers[0]
	if l.Digest.Algorithm != "sha256" || len(l.Digest.Hex) != 64 || l.Size <= 0 {
		return nil, fmt.Errorf("%w: layer digest %q, size %d", ErrNotAssembly, l.Digest, l.Size)
	}
	return &m, nil
}

func (s *ociSource) open(ctx context.Context, n int64) (int64, string, []byte, error) {
	n = min(n, s.size)
	body, err := s.get(ctx, s.size-n, n)
	if err != nil {
		return 0, "", nil, err
	}
	defer body.Close()
	tail := make([]byte, n)
	if err := readFull(body, tail); err != nil {
		return 0, "", nil, err
	}
	var one [1]byte
	if m, _ := io.ReadFull(body, one[:]); m > 0 {
		return 0, "", nil, fmt.Errorf("%w: range response for the last %d bytes is longer", ErrBadResponse, n)
	}
	s.sizeFrom = "" // the blob has the manifest's size: from now on, another is a change
	return s.size, s.digest.String(), tail, nil
}

func asTransportError(err error, te **transport.Error) bool {
	return errors.As(err, te)
}
