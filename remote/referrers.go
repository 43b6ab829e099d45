package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	ggcr "github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/cloud-assembly/assemble/internal/limitio"
)

// The referrers attached to an assembly in a registry (OCI 1.1, a
// manifest whose subject is the assembly's manifest; docs/oci.md). Each
// is an artifact manifest of its artifact type, the empty config and one
// layer of that same media type holding the bytes.
const (
	// BundleArtifactType is a Sigstore bundle v0.3 about the .cloud file
	// (assemble attest --provenance), as cosign attaches its bundles.
	BundleArtifactType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// SignatureArtifactType is the assembly's signature.asc (the
	// cleartext OpenPGP signature over its attestation), for tools that
	// list who signed without reading the file.
	SignatureArtifactType = "application/vnd.cloud-assembly.signature.v1"
)

// The bounds on what a registry may hand back as referrers.
const (
	// maxReferrers bounds the referrers of the types above one assembly
	// may have.
	maxReferrers = 64
	// maxReferrerSize bounds one referrer's bytes.
	maxReferrerSize = 8 << 20
)

// A Referrer is an artifact attached to an assembly in a registry: its
// artifact type (BundleArtifactType, SignatureArtifactType) and bytes.
type Referrer struct {
	ArtifactType string
	Data         []byte
	// Annotations are the referrer manifest's (for a bundle, the
	// dev.sigstore.bundle.* keys cosign writes).
	Annotations map[string]string
	// Location names where it was read: oci://REGISTRY/REPOSITORY@ its
	// manifest's digest (empty for one not read from a registry).
	Location string
}

// Digest is the SHA-256 of the referrer's bytes, "sha256:HEX".
func (r Referrer) Digest() string {
	s := sha256.Sum256(r.Data)
	return "sha256:" + hex.EncodeToString(s[:])
}

// A PushedReferrer is a referrer Push attached: its artifact type and
// its manifest's digest.
type PushedReferrer struct {
	ArtifactType string
	Manifest     string
}

// referrerTypes are the artifact types Referrers reads and Push writes.
var referrerTypes = map[string]bool{BundleArtifactType: true, SignatureArtifactType: true}

// referrerManifest is the manifest of r attached to subject. It depends
// on r and the subject alone: the same referrer attached to the same
// manifest in any registry has one digest (a promotion keeps it).
func referrerManifest(subject v1.Descriptor, r Referrer) ([]byte, error) {
	if !referrerTypes[r.ArtifactType] {
		return nil, fmt.Errorf("%w: referrer artifact type %q, want %q or %q", ErrUnsupported, r.ArtifactType, BundleArtifactType, SignatureArtifactType)
	}
	if len(r.Data) == 0 || len(r.Data) > maxReferrerSize {
		return nil, fmt.Errorf("%w: a %s referrer of %d bytes (1 to %d)", ErrUnsupported, r.ArtifactType, len(r.Data), maxReferrerSize)
	}
	sum := sha256.Sum256(r.Data)
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  r.ArtifactType,
		Config:        emptyConfig,
		Layers: []v1.Descriptor{{MediaType: types.MediaType(r.ArtifactType), Size: int64(len(r.Data)),
			Digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}}},
		Subject:     &subject,
		Annotations: r.Annotations,
	}
	return json.Marshal(m)
}

// pushReferrers attaches refs to the manifest subject in repo: each
// referrer's bytes as a blob, then its manifest by digest.
// go-containerregistry keeps the referrers tag schema (sha256-HEX) up to
// date where the registry has no referrers API.
func pushReferrers(repo name.Repository, subject v1.Descriptor, refs []Referrer, ropts []ggcr.Option) ([]PushedReferrer, error) {
	var out []PushedReferrer
	seen := map[string]bool{}
	for _, r := range refs {
		b, err := referrerManifest(subject, r)
		if err != nil {
			return out, err
		}
		md := sha256.Sum256(b)
		d := "sha256:" + hex.EncodeToString(md[:])
		if seen[d] {
			continue
		}
		seen[d] = true
		if err := ggcr.WriteLayer(repo, static.NewLayer(r.Data, types.MediaType(r.ArtifactType)), ropts...); err != nil {
			return out, registryError(fmt.Sprintf("referrer %s: blob %s", r.ArtifactType, r.Digest()), err)
		}
		if err := ggcr.Put(repo.Digest(d), rawManifest{b, types.OCIManifestSchema1}, ropts...); err != nil {
			return out, registryError(fmt.Sprintf("referrer %s: manifest %s", r.ArtifactType, d), err)
		}
		out = append(out, PushedReferrer{ArtifactType: r.ArtifactType, Manifest: d})
	}
	return out, nil
}

// Referrers returns the referrers of the types above attached to the
// assembly's manifest, read once (later calls return the same bytes):
// each referrer manifest and each blob checked against the digest and
// size that name it (ErrDigestMismatch), each manifest's subject the
// assembly's manifest. Through the referrers API, or its tag schema where
// the registry has none. Only an OCI artifact found through its manifest
// has referrers: for S3, HTTPS and a blob read by its digest it returns
// nil.
func (o *Object) Referrers(ctx context.Context) ([]Referrer, error) {
	s, ok := o.src.(*ociSource)
	if !ok || s.raw == nil {
		return nil, nil
	}
	o.refOnce.Do(func() { o.refs, o.refErr = o.readReferrers(ctx, s) })
	return o.refs, o.refErr
}

func (o *Object) readReferrers(ctx context.Context, s *ociSource) ([]Referrer, error) {
	repo := o.loc.Ref.Context()
	sum := sha256.Sum256(s.raw)
	subject := "sha256:" + hex.EncodeToString(sum[:])
	what := fmt.Sprintf("referrers of %s@%s", repo.Name(), subject)
	var rt http.RoundTripper
	var descs []v1.Descriptor
	err := o.retry(ctx, func(rctx context.Context) error {
		var err error
		if rt, err = registryTransport(rctx, repo, &o.opts, transport.PullScope); err != nil {
			return err
		}
		idx, err := ggcr.Referrers(repo.Digest(subject), ggcr.WithContext(rctx), ggcr.WithTransport(rt), ggcr.WithRetryBackoff(ggcr.Backoff{Steps: 1}))
		if err != nil {
			return registryError(what, err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrBadResponse, what, err)
		}
		descs = descs[:0]
		for _, d := range im.Manifests {
			// Some registries list a referrer's config media type (the
			// empty one) in place of its artifactType (go-containerregistry's
			// registry does): those image manifests are read to learn
			// theirs.
			ambiguous := (d.ArtifactType == "" || d.ArtifactType == EmptyConfigMediaType) && d.MediaType == types.OCIManifestSchema1
			if referrerTypes[d.ArtifactType] || ambiguous {
				descs = append(descs, d)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(descs) > maxReferrers {
		return nil, fmt.Errorf("%w: %s: %d referrers that may be of assemble's types, more than %d", ErrBadResponse, what, len(descs), maxReferrers)
	}
	sort.Slice(descs, func(i, j int) bool { return descs[i].Digest.String() < descs[j].Digest.String() })
	client := &http.Client{Transport: rt, CheckRedirect: sameScheme}
	base := fmt.Sprintf("%s://%s/v2/%s/", repo.Scheme(), repo.RegistryStr(), repo.RepositoryStr())
	var refs []Referrer
	for _, d := range descs {
		where := fmt.Sprintf("%s@%s", repo.Name(), d.Digest)
		raw, err := o.fetchChecked(ctx, client, base+"manifests/"+d.Digest.String(), string(types.OCIManifestSchema1), d, maxManifest, "referrer manifest "+where)
		if err != nil {
			return nil, err
		}
		var m v1.Manifest
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("%w: referrer manifest %s: %v", ErrBadResponse, where, err)
		}
		if !referrerTypes[m.ArtifactType] && !referrerTypes[d.ArtifactType] {
			continue // another tool's
		}
		switch {
		case m.Subject == nil || m.Subject.Digest.String() != subject:
			return nil, fmt.Errorf("%w: referrer manifest %s names another subject than %s", ErrBadResponse, where, subject)
		case referrerTypes[d.ArtifactType] && m.ArtifactType != d.ArtifactType:
			return nil, fmt.Errorf("%w: referrer manifest %s has artifact type %q, its listing says %q", ErrBadResponse, where, m.ArtifactType, d.ArtifactType)
		case len(m.Layers) != 1 || string(m.Layers[0].MediaType) != m.ArtifactType:
			return nil, fmt.Errorf("%w: referrer manifest %s: want one layer of media type %q", ErrBadResponse, where, m.ArtifactType)
		}
		l := m.Layers[0]
		data, err := o.fetchChecked(ctx, client, base+"blobs/"+l.Digest.String(), "", l, maxReferrerSize, fmt.Sprintf("referrer %s: blob %s", where, l.Digest))
		if err != nil {
			return nil, err
		}
		refs = append(refs, Referrer{ArtifactType: m.ArtifactType, Data: data, Annotations: m.Annotations, Location: "oci://" + where})
	}
	return refs, nil
}

// fetchChecked GETs url and returns its body only when it has the
// descriptor's size and SHA-256 (ErrDigestMismatch otherwise); a
// descriptor over limit is refused before the request.
func (o *Object) fetchChecked(ctx context.Context, client *http.Client, url, accept string, d v1.Descriptor, limit int64, what string) ([]byte, error) {
	if d.Digest.Algorithm != "sha256" || len(d.Digest.Hex) != 64 {
		return nil, fmt.Errorf("%w: %s: digest %q is not a SHA-256", ErrBadResponse, what, d.Digest)
	}
	if d.Size <= 0 || d.Size > limit {
		return nil, fmt.Errorf("%w: %s: size %d (1 to %d bytes)", ErrBadResponse, what, d.Size, limit)
	}
	var body []byte
	err := o.retry(ctx, func(rctx context.Context) error {
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return statusError(what, resp)
		}
		cr := &limitio.Reader{R: watchBody(rctx, resp.Body), Add: func(n int64) { o.received.Add(n) }}
		b, err := io.ReadAll(io.LimitReader(cr, d.Size+1))
		if err != nil {
			return transient{fmt.Errorf("%s: %w", what, err)}
		}
		body = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(body)
	if got := hex.EncodeToString(sum[:]); int64(len(body)) != d.Size || got != d.Digest.Hex {
		n := fmt.Sprint(len(body))
		if int64(len(body)) > d.Size {
			n = "more than " + fmt.Sprint(d.Size)
		}
		return nil, fmt.Errorf("%w: %s: the registry sent %s bytes of digest sha256:%s, not the %d bytes of %s its descriptor names", ErrDigestMismatch, what, n, got, d.Size, d.Digest)
	}
	return bytes.Clone(body), nil
}
