package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
)

// s3Client returns the client of the options, or one from the AWS SDK's
// default configuration. For reads (ranged GETs) its own retries are off:
// ours apply; uploads keep the SDK's (standard retryer, with backoff).
func s3Client(ctx context.Context, o *Options, sdkRetries bool) (*s3.Client, error) {
	if o.S3 != nil {
		return o.S3, nil
	}
	opts := []func(*config.LoadOptions) error{config.WithLogger(logging.Nop{})}
	if !sdkRetries {
		opts = append(opts, config.WithRetryMaxAttempts(1))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("reading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	return s3.NewFromConfig(cfg), nil
}

// s3Source reads an S3 object in ranges, pinned to the first response's
// ETag (If-Match) and version.
type s3Source struct {
	c        *s3.Client
	bucket   string
	key      string
	version  string // asked for, or the first response's
	etag     string
	size     int64
	metadata map[string]string
}

func newS3Source(ctx context.Context, loc *Location, o *Options) (*s3Source, error) {
	c, err := s3Client(ctx, o, false)
	if err != nil {
		return nil, err
	}
	return &s3Source{c: c, bucket: loc.Bucket, key: loc.Key, version: loc.VersionID}, nil
}

func (s *s3Source) input(rng string) *s3.GetObjectInput {
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &s.key, Range: &rng}
	if s.version != "" {
		in.VersionId = &s.version
	}
	if s.etag != "" {
		in.IfMatch = &s.etag
	}
	return in
}

// s3Error maps an S3 failure to a sentinel.
func s3Error(what string, err error) error {
	if isNoCredentials(err) {
		return fmt.Errorf("%w: %s: %v", ErrNoCredentials, what, err)
	}
	var re *awshttp.ResponseError
	code := 0
	if errors.As(err, &re) {
		code = re.HTTPStatusCode()
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchKey", "NoSuchBucket", "NotFound", "NoSuchVersion":
			return fmt.Errorf("%w: %s: %v", ErrNotFound, what, err)
		case "PreconditionFailed":
			return fmt.Errorf("%w: %s: the version read first is no longer there", ErrChanged, what)
		case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken", "Forbidden":
			return fmt.Errorf("%s: %w: %v", what, ErrAccessDenied, err)
		}
	}
	switch {
	case code == http.StatusNotFound:
		return fmt.Errorf("%w: %s: %v", ErrNotFound, what, err)
	case code == http.StatusPreconditionFailed:
		return fmt.Errorf("%w: %s: the version read first is no longer there", ErrChanged, what)
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return fmt.Errorf("%s: %w: %v", what, ErrAccessDenied, err)
	case code >= 500 || code == http.StatusTooManyRequests:
		return transient{fmt.Errorf("%s: %w", what, err)}
	}
	return fmt.Errorf("%s: %w", what, err)
}

func (s *s3Source) open(ctx context.Context, n int64) (int64, string, []byte, error) {
	out, err := s.c.GetObject(ctx, s.input(fmt.Sprintf("bytes=-%d", n)))
	if err != nil {
		var re *awshttp.ResponseError
		if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusRequestedRangeNotSatisfiable {
			// An empty object has no last bytes.
			h, herr := s.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &s.key, VersionId: nilIfEmpty(s.version)})
			if herr == nil && aws.ToInt64(h.ContentLength) == 0 {
				s.etag = aws.ToString(h.ETag)
				return 0, s.etag, nil, nil
			}
		}
		return 0, "", nil, s3Error(fmt.Sprintf("GetObject s3://%s/%s", s.bucket, s.key), err)
	}
	body := watchBody(ctx, out.Body)
	defer body.Close()
	length := aws.ToInt64(out.ContentLength)
	total := length
	if cr := aws.ToString(out.ContentRange); cr != "" {
		first, last, t, err := contentRange(cr)
		if err != nil {
			return 0, "", nil, err
		}
		if last != t-1 || first != max(0, t-n) || last-first+1 != length {
			return 0, "", nil, fmt.Errorf("%w: asked for the last %d bytes, got %s (%d bytes)", ErrBadResponse, n, cr, length)
		}
		total = t
	} else if length > n {
		return 0, "", nil, fmt.Errorf("%w: asked for the last %d bytes, got %d", ErrBadResponse, n, length)
	}
	tail := make([]byte, length)
	if err := readFull(body, tail); err != nil {
		return 0, "", nil, err
	}
	s.size, s.etag, s.metadata = total, aws.ToString(out.ETag), out.Metadata
	if v := aws.ToString(out.VersionId); v != "" && v != "null" {
		s.version = v
	}
	pin := s.etag
	if s.version != "" {
		pin = s.version
	}
	return total, pin, tail, nil
}

func (s *s3Source) get(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	what := fmt.Sprintf("GetObject s3://%s/%s bytes %d-%d", s.bucket, s.key, off, off+n-1)
	out, err := s.c.GetObject(ctx, s.input(fmt.Sprintf("bytes=%d-%d", off, off+n-1)))
	if err != nil {
		return nil, s3Error(what, err)
	}
	bad := func(err error) (io.ReadCloser, error) {
		out.Body.Close()
		return nil, err
	}
	if v := aws.ToString(out.VersionId); s.version != "" && v != "" && v != s.version {
		return bad(fmt.Errorf("%w: %s: version was %s, now %s", ErrChanged, what, s.version, v))
	}
	if err := checkRange(aws.ToString(out.ContentRange), aws.ToInt64(out.ContentLength), aws.ToString(out.ETag), off, n, s.size, s.etag, ""); err != nil {
		return bad(fmt.Errorf("%s: %w", what, err))
	}
	return watchBody(ctx, out.Body), nil
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
