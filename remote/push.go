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
	"time"

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
)

// A File is what Push uploads: the bytes, their size and SHA-256
// ("sha256:HEX", as verify reports it), and a name for the OCI title.
type File struct {
	R      io.ReaderAt
	Size   int64
	SHA256 string
	Title  string
}

// Pushed says where a file went.
type Pushed struct {
	// Digest is the file's SHA-256, "sha256:HEX": on OCI, the blob's.
	Digest string
	// Manifest is the OCI manifest's digest (pull by
	// oci://REGISTRY/REPOSITORY@Manifest).
	Manifest string
	// Version is S3's version ID (versioned buckets), ETag is S3's.
	Version, ETag string
	// Multipart: S3 took the file in parts.
	Multipart bool
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
	hx, err := ParseDigest(f.SHA256)
	if err != nil {
		return nil, err
	}
	o := opts.withDefaults()
	switch loc.Scheme {
	case SchemeOCI:
		return pushOCI(ctx, loc, f, hx, &o)
	case SchemeS3:
		return pushS3(ctx, loc, f, hx, &o)
	}
	return nil, fmt.Errorf("%w: push to %s: HTTPS locations are read-only here; push to oci:// or s3://", ErrUnsupported, loc)
}

// fileLayer is the .cloud file as a go-containerregistry layer, read from
// its ReaderAt as it is uploaded.
type fileLayer struct {
	f File
	h v1.Hash
}

func (l *fileLayer) Digest() (v1.Hash, error) { return l.h, nil }
func (l *fileLayer) DiffID() (v1.Hash, error) { return l.h, nil }
func (l *fileLayer) Compressed() (io.ReadCloser, error) {
	return io.NopCloser(io.NewSectionReader(l.f.R, 0, l.f.Size)), nil
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

// Manifest returns the OCI artifact manifest of a pushed assembly
// (docs/oci.md): artifactType ArtifactType, the empty config, one layer.
func Manifest(f File, created time.Time) ([]byte, error) {
	hx, err := ParseDigest(f.SHA256)
	if err != nil {
		return nil, err
	}
	empty := []byte("{}")
	es := sha256.Sum256(empty)
	layer := v1.Descriptor{MediaType: LayerMediaType, Size: f.Size, Digest: v1.Hash{Algorithm: "sha256", Hex: hx}}
	if f.Title != "" {
		layer.Annotations = map[string]string{AnnotationTitle: f.Title}
	}
	m := v1.Manifest{
		SchemaVersion: 2,
		MediaType:     types.OCIManifestSchema1,
		ArtifactType:  ArtifactType,
		Config:        v1.Descriptor{MediaType: EmptyConfigMediaType, Size: 2, Digest: v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(es[:])}, Data: empty},
		Layers:        []v1.Descriptor{layer},
		Annotations:   map[string]string{AnnotationCreated: created.UTC().Format(time.RFC3339)},
	}
	return json.Marshal(m)
}

func pushOCI(ctx context.Context, loc *Location, f File, hx string, o *Options) (*Pushed, error) {
	tag, ok := loc.Ref.(name.Tag)
	if !ok {
		return nil, fmt.Errorf("%w: push to %s: push to a tag (oci://REGISTRY/REPOSITORY:TAG); a digest is what the push makes", ErrLocation, loc)
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
	if err := ggcr.WriteLayer(repo, &fileLayer{f: f, h: v1.Hash{Algorithm: "sha256", Hex: hx}}, ropts...); err != nil {
		return nil, registryError(fmt.Sprintf("push to %s: blob sha256:%s", loc, hx), err)
	}
	b, err := Manifest(f, o.Now())
	if err != nil {
		return nil, err
	}
	if err := ggcr.Put(tag, rawManifest{b, types.OCIManifestSchema1}, ropts...); err != nil {
		return nil, registryError(fmt.Sprintf("push to %s: manifest", loc), err)
	}
	md := sha256.Sum256(b)
	return &Pushed{Digest: "sha256:" + hx, Manifest: "sha256:" + hex.EncodeToString(md[:])}, nil
}

func pushS3(ctx context.Context, loc *Location, f File, hx string, o *Options) (*Pushed, error) {
	if loc.VersionID != "" {
		return nil, fmt.Errorf("%w: push to %s: S3 makes the version; push to s3://BUCKET/KEY", ErrLocation, loc)
	}
	c, err := s3Client(ctx, o, true)
	if err != nil {
		return nil, err
	}
	sum, _ := hex.DecodeString(hx)
	meta := map[string]string{MetadataSHA256: hx}
	ct := LayerMediaType
	what := fmt.Sprintf("push to %s", loc)
	if f.Size <= o.PartSize {
		out, err := c.PutObject(ctx, &s3.PutObjectInput{
			Bucket: &loc.Bucket, Key: &loc.Key, Body: io.NewSectionReader(f.R, 0, f.Size), ContentLength: &f.Size,
			ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum)), Metadata: meta, ContentType: &ct,
		})
		if err != nil {
			return nil, s3Error(what, err)
		}
		return &Pushed{Digest: "sha256:" + hx, Version: aws.ToString(out.VersionId), ETag: aws.ToString(out.ETag)}, nil
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
		mu    sync.Mutex
		parts []s3types.CompletedPart
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i, off := int32(1), int64(0); off < f.Size; i, off = i+1, off+o.PartSize {
		n := min(o.PartSize, f.Size-off)
		g.Go(func() error {
			sec := io.NewSectionReader(f.R, off, n)
			h := sha256.New()
			if _, err := io.Copy(h, sec); err != nil {
				return err
			}
			ps := base64.StdEncoding.EncodeToString(h.Sum(nil))
			out, err := c.UploadPart(gctx, &s3.UploadPartInput{
				Bucket: &loc.Bucket, Key: &loc.Key, UploadId: up.UploadId, PartNumber: &i,
				Body: io.NewSectionReader(f.R, off, n), ContentLength: &n, ChecksumSHA256: &ps,
			})
			if err != nil {
				return err
			}
			mu.Lock()
			parts = append(parts, s3types.CompletedPart{ETag: out.ETag, PartNumber: &i, ChecksumSHA256: out.ChecksumSHA256})
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return abort(err)
	}
	sort.Slice(parts, func(a, b int) bool { return *parts[a].PartNumber < *parts[b].PartNumber })
	out, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &loc.Bucket, Key: &loc.Key, UploadId: up.UploadId, MultipartUpload: &s3types.CompletedMultipartUpload{Parts: parts},
	})
	if err != nil {
		return abort(err)
	}
	return &Pushed{Digest: "sha256:" + hx, Version: aws.ToString(out.VersionId), ETag: aws.ToString(out.ETag), Multipart: true}, nil
}
