package remote

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	ggcr "github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"golang.org/x/sync/errgroup"

	"github.com/cloud-assembly/assemble/digest"
)

// A File is what Push uploads: the bytes, their size and SHA-256
// ("sha256:HEX", as verify reports it), and a name for the OCI title.
// Push sends only bytes that have that SHA-256: every upload's body is
// checked as it is sent, and cut short before its last byte when the
// bytes read are not those (digest.ErrMismatch), so a file changed after
// verification is never committed.
type File struct {
	R      io.ReaderAt
	Size   int64
	SHA256 digest.Digest
	Title  string
	// Manifest, when set, is the OCI manifest the file came with
	// (Object.Manifest: a promotion from a registry). Pushed to OCI, it is
	// copied as it is, as 'crane copy' does, so that the copy has the
	// source's manifest digest; it must name the file as its one layer
	// and the empty config, else a manifest is made as for a file.
	Manifest []byte
	// Referrers are attached to the OCI artifact as OCI 1.1 referrers
	// (subject: its manifest; docs/oci.md), each once, after the
	// manifest; a registry without the referrers API gets the tag schema
	// (sha256-HEX of the manifest). S3 has no place for them: they are
	// not sent there (Pushed.Referrers stays empty).
	Referrers []Referrer
}

// Pushed says where a file went.
type Pushed struct {
	// Digest is the file's SHA-256: on OCI, the blob's.
	Digest digest.Digest
	// Manifest is the OCI manifest's digest (pull by
	// oci://REGISTRY/REPOSITORY@Manifest); zero on S3.
	Manifest digest.Digest
	// Version is S3's version ID (versioned buckets), ETag is S3's.
	Version, ETag string
	// Multipart: S3 took the file in parts.
	Multipart bool
	// Replaced: an S3 object was at the key and this one replaced it.
	Replaced bool
	// Referrers are the File.Referrers attached, in order (OCI only).
	Referrers []PushedReferrer
}

// MetadataSHA256 is the S3 user metadata key that holds the file's
// SHA-256 in hex (x-amz-meta-assemble-sha256).
const MetadataSHA256 = "assemble-sha256"

// Push uploads f to the location: to OCI as an artifact manifest with one
// layer holding the bytes unchanged (docs/oci.md), to S3 with its SHA-256
// checksum (multipart above Options.PartSize) and MetadataSHA256. HTTPS
// locations are read-only (ErrUnsupported).
func Push(ctx context.Context, location string, f File, opts *Options) (*Pushed, error) {
	loc, err := Parse(location)
	if err != nil {
		return nil, err
	}
	want := f.SHA256
	if want.IsZero() {
		return nil, fmt.Errorf("%w: push to %s: File.SHA256 is not set (the verified file's digest)", digest.ErrMalformed, loc)
	}
	o := opts.withDefaults()
	var sent atomic.Int64
	progress := func(n int64) {
		if o.Progress != nil {
			o.Progress(sent.Add(n), f.Size)
		}
	}
	switch loc.Scheme {
	case SchemeOCI:
		return pushOCI(ctx, loc, f, want, progress, &o)
	case SchemeS3:
		return pushS3(ctx, loc, f, want, progress, &o)
	}
	return nil, fmt.Errorf("%w: push to %s: HTTPS locations are read-only here; push to oci:// or s3://", ErrUnsupported, loc)
}

// fileLayer is the .cloud file as a go-containerregistry layer, read
// through a checked reader as it is uploaded.
type fileLayer struct {
	f        File
	h        v1.Hash
	want     digest.Digest
	progress func(int64)
}

func (l *fileLayer) Digest() (v1.Hash, error) { return l.h, nil }
func (l *fileLayer) DiffID() (v1.Hash, error) { return l.h, nil }
func (l *fileLayer) Compressed() (io.ReadCloser, error) {
	c := newChecked(l.f.R, 0, l.f.Size, l.want, "blob "+l.h.String())
	c.progress = l.progress
	return io.NopCloser(c), nil
}
func (l *fileLayer) Uncompressed() (io.ReadCloser, error) { return l.Compressed() }
func (l *fileLayer) Size() (int64, error)                 { return l.f.Size, nil }
func (l *fileLayer) MediaType() (types.MediaType, error)  { return LayerMediaType, nil }

// rawManifest is a manifest to put as it is.
type rawManifest struct {
	b  []byte
	mt types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return m.b, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mt, nil }

// emptyConfig is the config every assembly manifest names: the empty
// descriptor of the OCI image spec (1.1).
var emptyConfig = func() v1.Descriptor {
	es := sha256.Sum256([]byte("{}"))
	return v1.Descriptor{MediaType: EmptyConfigMediaType, Size: 2, Digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(es[:])}, Data: []byte("{}")}
}()

// Manifest returns the OCI artifact manifest of a pushed assembly
// (docs/oci.md): artifactType ArtifactType, the empty config, one layer
// titled f.Title. It depends on the file alone (its digest, size and
// title): the same file pushed anywhere has the same manifest digest.
func Manifest(f File) ([]byte, error) {
	if f.SHA256.IsZero() {
		return nil, fmt.Errorf("%w: File.SHA256 is not set (the file's digest)", digest.ErrMalformed)
	}
	layer := v1.Descriptor{MediaType: LayerMediaType, Size: f.Size, Digest: v1.Hash{Algorithm: "sha256", Hex: f.SHA256.Hex()}}
	if f.Title != "" {
		layer.Annotations = map[string]string{AnnotationTitle: f.Title}
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  ArtifactType,
		Config:        emptyConfig,
		Layers:        []v1.Descriptor{layer},
	}
	return json.Marshal(m)
}

// copyable reports whether raw, a source's manifest, can be pushed as it
// is for f: an assembly manifest whose one layer is f and whose config is
// the empty one (the only blobs the push writes).
func copyable(raw []byte, f File, hx string) bool {
	m, err := assemblyManifest(types.OCIManifestSchema1, raw)
	if err != nil {
		return false
	}
	l := m.Layers[0]
	return l.Digest.Hex == hx && l.Size == f.Size && m.Config.Digest == emptyConfig.Digest && m.Config.Size == emptyConfig.Size
}

func pushOCI(ctx context.Context, loc *Location, f File, want digest.Digest, progress func(int64), o *Options) (*Pushed, error) {
	tag, ok := loc.Ref.(name.Tag)
	if !ok {
		return nil, fmt.Errorf("%w: push to %s: push to a tag (oci://REGISTRY/REPOSITORY:TAG); a digest is what the push makes", ErrLocation, loc)
	}
	hx := want.Hex()
	b := f.Manifest
	if b == nil || !copyable(b, f, hx) {
		var err error
		if b, err = Manifest(f); err != nil {
			return nil, err
		}
	}
	rt, err := registryTransport(ctx, tag.Context(), o, transport.PushScope)
	if err != nil {
		return nil, fmt.Errorf("push to %s: %w", loc, err)
	}
	ropts := []ggcr.Option{ggcr.WithContext(ctx), ggcr.WithTransport(rt)}
	repo := tag.Context()
	if err := ggcr.WriteLayer(repo, static.NewLayer([]byte("{}"), EmptyConfigMediaType), ropts...); err != nil {
		return nil, registryError(fmt.Sprintf("push to %s: config", loc), err)
	}
	layer := &fileLayer{f: f, h: v1.Hash{Algorithm: "sha256", Hex: hx}, want: want, progress: progress}
	if err := ggcr.WriteLayer(repo, layer, ropts...); err != nil {
		return nil, registryError(fmt.Sprintf("push to %s: blob sha256:%s", loc, hx), err)
	}
	// The referrers go first, the tag last: whoever finds the tag finds
	// the referrers too (a registry takes a referrer before its subject).
	md := digest.Of(b)
	p := &Pushed{Digest: want, Manifest: md}
	subject := v1.Descriptor{MediaType: types.OCIManifestSchema1, Size: int64(len(b)), Digest: v1.Hash{Algorithm: "sha256", Hex: md.Hex()}}
	refs, err := pushReferrers(repo, subject, f.Referrers, ropts)
	if err != nil {
		return nil, fmt.Errorf("push to %s: %w (the tag was not written)", loc, err)
	}
	p.Referrers = refs
	if err := ggcr.Put(tag, rawManifest{b, types.OCIManifestSchema1}, ropts...); err != nil {
		return nil, registryError(fmt.Sprintf("push to %s: manifest", loc), err)
	}
	return p, nil
}

// s3Version is S3's version ID, but the "null" of an unversioned bucket.
func s3Version(v *string) string {
	if s := aws.ToString(v); s != "null" {
		return s
	}
	return ""
}

func pushS3(ctx context.Context, loc *Location, f File, want digest.Digest, progress func(int64), o *Options) (*Pushed, error) {
	if loc.VersionID != "" {
		return nil, fmt.Errorf("%w: push to %s: S3 makes the version; push to s3://BUCKET/KEY", ErrLocation, loc)
	}
	c, err := s3Client(ctx, o, true)
	if err != nil {
		return nil, err
	}
	hx := want.Hex()
	meta := map[string]string{MetadataSHA256: hx}
	ct := LayerMediaType
	what := fmt.Sprintf("push to %s", loc)
	_, herr := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &loc.Bucket, Key: &loc.Key})
	replaced := herr == nil
	if f.Size <= o.PartSize {
		body := newChecked(f.R, 0, f.Size, want, what)
		body.progress = progress
		out, err := c.PutObject(ctx, &s3.PutObjectInput{
			Bucket: &loc.Bucket, Key: &loc.Key, Body: body, ContentLength: &f.Size,
			ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sumOf(want))), Metadata: meta, ContentType: &ct,
		})
		if err != nil {
			return nil, s3Error(what, err)
		}
		return &Pushed{Digest: want, Version: s3Version(out.VersionId), ETag: aws.ToString(out.ETag), Replaced: replaced}, nil
	}
	// Multipart: one pass over the file takes each part's SHA-256 and the
	// whole file's, which must be the verified one; each part is then
	// sent checked against its own, so the parts S3 assembles are the
	// bytes of that one pass.
	var parts []partSum
	whole := digest.NewHasher()
	for off := int64(0); off < f.Size; off += o.PartSize {
		n := min(o.PartSize, f.Size-off)
		ph := digest.NewHasher()
		if _, err := io.Copy(io.MultiWriter(whole, ph), io.NewSectionReader(f.R, off, n)); err != nil {
			return nil, fmt.Errorf("%s: %w: %w", what, digest.ErrMismatch, err)
		}
		parts = append(parts, partSum{off: off, n: n, sum: ph.Digest()})
	}
	if sum := whole.Digest(); sum != want {
		return nil, fmt.Errorf("%w: %s: the file has %s, not the verified %s; nothing was uploaded", digest.ErrMismatch, what, sum, want)
	}
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket: &loc.Bucket, Key: &loc.Key, ChecksumAlgorithm: s3types.ChecksumAlgorithmSha256, Metadata: meta, ContentType: &ct,
	})
	if err != nil {
		return nil, s3Error(what, err)
	}
	abort := func(err error) (*Pushed, error) {
		c.AbortMultipartUpload(context.WithoutCancel(ctx), &s3.AbortMultipartUploadInput{Bucket: &loc.Bucket, Key: &loc.Key, UploadId: up.UploadId})
		return nil, s3Error(what, err)
	}
	var (
		mu        sync.Mutex
		completed []s3types.CompletedPart
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, p := range parts {
		num := int32(i + 1)
		g.Go(func() error {
			body := newChecked(f.R, p.off, p.n, p.sum, fmt.Sprintf("%s: part %d", what, num))
			body.progress = progress
			ps := base64.StdEncoding.EncodeToString(sumOf(p.sum))
			out, err := c.UploadPart(gctx, &s3.UploadPartInput{
				Bucket: &loc.Bucket, Key: &loc.Key, UploadId: up.UploadId, PartNumber: &num,
				Body: body, ContentLength: &p.n, ChecksumSHA256: &ps,
			})
			if err != nil {
				return err
			}
			mu.Lock()
			completed = append(completed, s3types.CompletedPart{ETag: out.ETag, PartNumber: &num, ChecksumSHA256: out.ChecksumSHA256})
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return abort(err)
	}
	sort.Slice(completed, func(a, b int) bool { return *completed[a].PartNumber < *completed[b].PartNumber })
	out, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &loc.Bucket, Key: &loc.Key, UploadId: up.UploadId, MultipartUpload: &s3types.CompletedMultipartUpload{Parts: completed},
	})
	if err != nil {
		return abort(err)
	}
	return &Pushed{Digest: want, Version: s3Version(out.VersionId), ETag: aws.ToString(out.ETag), Multipart: true, Replaced: replaced}, nil
}

// partSum is one part of a multipart upload and its SHA-256.
type partSum struct {
	off, n int64
	sum    digest.Digest
}

func sumOf(d digest.Digest) []byte {
	s := d.Sum()
	return s[:]
}
