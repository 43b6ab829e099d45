package deploy

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Whether an S3 object holds a droplet's signed bytes is decided on bytes,
// never on metadata: anyone who can write an object can write its
// metadata (assemble-content-sha256 included). The verdict rests on what
// S3 computes and cannot be told, the object's SHA-256 checksum
// (HeadObject with checksum mode on: S3 checks a checksum sent with an
// upload against the body, and computes the composite checksum of a
// multipart upload from its parts), recomputed here from the signed bytes
// (for a multipart object, with the part size deploy uploads with); where
// S3 has no SHA-256 checksum for the object (uploaded by another tool, or
// with another algorithm), or its composite checksum is over other part
// sizes, the object is read and hashed. The metadata is a hint only: when
// it names other bytes, deploy uploads without reading the object first.

// uploadPartSize is the part size deploy's uploader uses for an object of
// size bytes: partSize, grown (as the transfer manager grows it) where
// the object would need more than S3's 10,000 parts.
func uploadPartSize(size int64) int64 {
	const maxParts = 10000
	if size/partSize >= maxParts {
		return size/maxParts + 1
	}
	return partSize
}

// A partHasher hashes content as a whole and in parts of partSize: the
// SHA-256 of the content, and of each part of its multipart upload.
type partHasher struct {
	whole, part hash.Hash
	n, inPart   int64
	parts       [][]byte
}

func newPartHasher() *partHasher { return &partHasher{whole: sha256.New(), part: sha256.New()} }

func (h *partHasher) Write(p []byte) (int, error) {
	h.whole.Write(p)
	n := len(p)
	for len(p) > 0 {
		take := min(int64(len(p)), partSize-h.inPart)
		h.part.Write(p[:take])
		h.inPart += take
		p = p[take:]
		if h.inPart == partSize {
			h.parts = append(h.parts, h.part.Sum(nil))
			h.part.Reset()
			h.inPart = 0
		}
	}
	h.n += int64(n)
	return n, nil
}

// sums returns the content's SHA-256 and the SHA-256 of each part.
func (h *partHasher) sums() (sum []byte, parts [][]byte) {
	parts = h.parts
	if h.inPart > 0 {
		parts = append(parts, h.part.Sum(nil))
	}
	return h.whole.Sum(nil), parts
}

// wantChecksum is the x-amz-checksum-sha256 S3 answers for o uploaded by
// deploy: the content's SHA-256 for a single PutObject; for a multipart
// upload the composite checksum, the SHA-256 of the parts' SHA-256s
// followed by "-" and the number of parts. ok is false when it cannot be
// computed (parts of another size than the ones hashed).
func (o *object) wantChecksum() (string, bool) {
	if o.size < multipartThreshold {
		return base64.StdEncoding.EncodeToString(o.sum), true
	}
	if uploadPartSize(o.size) != partSize || int64(len(o.parts)) != (o.size+partSize-1)/partSize {
		return "", false
	}
	return compositeChecksum(o.parts), true
}

// compositeChecksum is S3's composite SHA-256 checksum of a multipart
// object whose parts have these SHA-256s.
func compositeChecksum(parts [][]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return base64.StdEncoding.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(parts))
}

// compareMode is who asks: deploy (which may take a metadata hint that the
// bytes differ, and upload without reading) or status (bytes only).
type compareMode int

const (
	forDeploy compareMode = iota
	forStatus
)

// How an object was compared (Counter-free tests read it).
const (
	byChecksum = "checksum"
	byReading  = "read"
	byHint     = "hint"
	// byAbsence: the object, or its bucket, is not there (status says
	// absent when none of a droplet's objects is).
	byAbsence = "absent"
)

// compare tells whether the object in S3 holds o's signed bytes: "" when
// it does, else what differs, in words; how says what decided it.
func (o *object) compare(ctx context.Context, c *s3.Client, mode compareMode) (diff, how string, err error) {
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.key), ChecksumMode: s3types.ChecksumModeEnabled})
	if err != nil {
		switch apiCode(err) {
		case "NotFound", "NoSuchKey", "404":
			return o.url() + " does not exist", byAbsence, nil
		case "NoSuchBucket":
			return fmt.Sprintf("bucket %s does not exist", o.bucket), byAbsence, nil
		}
		return "", "", fmt.Errorf("%w: s3:HeadObject %s: %s", ErrAWS, o.url(), apiMessage(err))
	}
	if n := aws.ToInt64(head.ContentLength); n != o.size {
		return fmt.Sprintf("%s holds other bytes (%d bytes, want %d)", o.url(), n, o.size), byChecksum, nil
	}
	if mode == forDeploy {
		if hint := head.Metadata[MetaContentSHA256]; hint != "" && hint != o.hexSum() {
			return fmt.Sprintf("%s holds other bytes (its metadata names SHA-256 %s, want %s)", o.url(), hint, o.hexSum()), byHint, nil
		}
	}
	if got := aws.ToString(head.ChecksumSHA256); got != "" {
		whole := base64.StdEncoding.EncodeToString(o.sum)
		// Any of these equal to S3's checksum means the same bytes: each
		// is a SHA-256 over the content or over its parts' SHA-256s (the
		// composite with its part count, as S3 answers it, or without, as
		// some S3 implementations do).
		match := []string{whole}
		if want, ok := o.wantChecksum(); ok && want != whole {
			base, _, _ := strings.Cut(want, "-")
			match = append(match, want, base)
		}
		if slices.Contains(match, got) {
			return "", byChecksum, nil
		}
		// Unequal decides only between two whole-object checksums; a
		// composite one may be over other part sizes than deploy's.
		multipart := strings.Contains(got, "-") || head.ChecksumType == s3types.ChecksumTypeComposite || strings.Contains(aws.ToString(head.ETag), "-")
		if !multipart {
			return fmt.Sprintf("%s holds other bytes (S3's SHA-256 checksum %s, want %s)", o.url(), got, whole), byChecksum, nil
		}
		if mode == forDeploy {
			// Maybe the same bytes in other parts: uploading the signed
			// bytes is right either way, and needs no read first.
			return fmt.Sprintf("%s: S3's composite SHA-256 checksum %s is not the signed bytes' in parts of %d bytes", o.url(), got, partSize), byChecksum, nil
		}
	}
	return o.read(ctx, c)
}

// read reads the object and hashes it.
func (o *object) read(ctx context.Context, c *s3.Client) (diff, how string, err error) {
	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.key)})
	if err != nil {
		switch apiCode(err) {
		case "NotFound", "NoSuchKey", "404":
			return o.url() + " does not exist", byAbsence, nil
		}
		return "", "", fmt.Errorf("%w: s3:GetObject %s: %s", ErrAWS, o.url(), apiMessage(err))
	}
	defer get.Body.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(get.Body, o.size+1))
	if err != nil {
		return "", "", fmt.Errorf("%w: s3:GetObject %s: %v", ErrAWS, o.url(), err)
	}
	if n != o.size {
		return fmt.Sprintf("%s holds other bytes (%d bytes read, want %d)", o.url(), n, o.size), byReading, nil
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != o.hexSum() {
		return fmt.Sprintf("%s holds other bytes (SHA-256 %s, want %s)", o.url(), got, o.hexSum()), byReading, nil
	}
	return "", byReading, nil
}
