package source

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
)

// defaultS3Region is used when no region is configured (AWS_REGION,
// AWS_DEFAULT_REGION, the profile's region): S3 answers for every bucket
// there, with a redirect error naming the bucket's own region.
const defaultS3Region = "us-east-1"

// s3Client is the part of the S3 API a Resolver uses.
type s3Client interface {
	GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// s3URI splits s3://bucket/key.
func s3URI(raw string) (bucket, key string, err error) {
	u, err := url.Parse(raw)
	if err != nil || !strings.EqualFold(u.Scheme, "s3") || u.Host == "" || u.User != nil || u.RawQuery != "" || strings.TrimPrefix(u.Path, "/") == "" {
		return "", "", fmt.Errorf("%w: %s is not an S3 URI; write s3://bucket/path/to/file", ErrBadSource, raw)
	}
	return u.Host, strings.TrimPrefix(u.Path, "/"), nil
}

// s3 returns the S3 client, made on first use from the standard AWS
// settings (environment, shared config and credentials files, SSO, web
// identity, container and instance roles, AWS_CA_BUNDLE, AWS_ENDPOINT_URL
// and AWS_ENDPOINT_URL_S3). Its requests go through an HTTP client with the
// Resolver's redirect policy and timeout, so S3 sources have the limits of
// HTTPS ones.
func (r *Resolver) s3(ctx context.Context) (s3Client, error) {
	if r.s3c != nil || r.s3err != nil {
		return r.s3c, r.s3err
	}
	// The SDK adds AWS_CA_BUNDLE to a client it can build; it starts from
	// the transport of Options.Client, when that is an *http.Transport.
	given, _ := r.client.Transport.(*http.Transport)
	if r.client.Transport == nil {
		given = nil
	}
	bc := awshttp.NewBuildableClient().WithTimeout(r.opts.Timeout)
	if given != nil {
		bc = bc.WithTransportOptions(func(tr *http.Transport) {
			if given.TLSClientConfig != nil {
				tr.TLSClientConfig = given.TLSClientConfig.Clone()
			}
			tr.Proxy, tr.DialContext, tr.DialTLSContext = given.Proxy, given.DialContext, given.DialTLSContext
		})
	}
	opts := []func(*config.LoadOptions) error{config.WithLogger(logging.Nop{})} // our errors say what failed
	if r.client.Transport == nil || given != nil {
		opts = append(opts, config.WithHTTPClient(bc))
	} else {
		opts = append(opts, config.WithHTTPClient(r.client)) // a custom RoundTripper, used as it is
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		r.s3err = fmt.Errorf("%w: reading the AWS configuration: %v", ErrNoCredentials, err)
		return nil, r.s3err
	}
	if b, ok := cfg.HTTPClient.(*awshttp.BuildableClient); ok {
		c := *r.client // the redirect policy and timeout of HTTPS sources
		c.Transport = b.GetTransport()
		cfg.HTTPClient = &c
	}
	if cfg.Region == "" {
		cfg.Region = defaultS3Region
	}
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		r.s3err = fmt.Errorf("%w for S3 sources: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE, or run with a role (%v)", ErrNoCredentials, err)
		return nil, r.s3err
	}
	r.s3c = s3.NewFromConfig(cfg)
	return r.s3c, nil
}

// fetchS3 reads s3://bucket/key with the limits of an HTTPS download.
func (r *Resolver) fetchS3(ctx context.Context, raw string, limit int64) ([]byte, Location, error) {
	bucket, key, err := s3URI(raw)
	if err != nil {
		return nil, Location{}, err
	}
	loc := Location{Kind: URL, URL: "s3://" + bucket + "/" + key}
	if b, ok := r.fetched[loc.URL]; ok {
		if int64(len(b)) > limit {
			return nil, Location{}, fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, loc.URL, limit)
		}
		return b, loc, nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	c, err := r.s3(ctx)
	if err != nil {
		return nil, Location{}, fmt.Errorf("%s: %w", loc.URL, err)
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, Location{}, s3Error(loc.URL, err)
	}
	defer out.Body.Close()
	if out.ContentLength != nil && *out.ContentLength > limit {
		return nil, Location{}, fmt.Errorf("%w: %s is %d bytes, more than %d", ErrTooLarge, loc.URL, *out.ContentLength, limit)
	}
	b, err := r.readDownload(out.Body, limit, loc.URL)
	if err != nil {
		return nil, Location{}, err
	}
	r.fetched[loc.URL] = b
	return b, loc, nil
}

// s3Error turns an S3 API error into one of ours, with the fix where there
// is one.
func s3Error(uri string, err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchKey", "NoSuchBucket", "NotFound":
			why := ae.ErrorMessage()
			if why == "" {
				why = ae.ErrorCode() // a HEAD-like answer has no body to say more
			}
			return fmt.Errorf("%w: %s: %s", ErrNotFound, uri, why)
		case "PermanentRedirect", "AuthorizationHeaderMalformed", "IllegalLocationConstraintException":
			return fmt.Errorf("%w: GET %s: the bucket is in another region; set AWS_REGION to it (%s)", ErrFetch, uri, ae.ErrorCode())
		case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "ExpiredToken":
			return fmt.Errorf("%w: GET %s: %s: check the AWS credentials and the bucket's policy", ErrFetch, uri, ae.ErrorCode())
		}
	}
	return fmt.Errorf("%w: GET %s: %v", ErrFetch, uri, err)
}
