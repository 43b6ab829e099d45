package deploy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// clients are the AWS clients of one region, made once.
type clients struct {
	cfn      *cloudformation.Client
	s3       *s3.Client
	uploader *transfermanager.Client
	ecr      *ecr.Client
}

// awsSession holds the configuration and the clients by region.
type awsSession struct {
	cfg     aws.Config
	mu      sync.Mutex
	regions map[string]*clients
}

func newSession(ctx context.Context, opts *Options) (*awsSession, error) {
	var cfg aws.Config
	if opts.AWS != nil {
		cfg = opts.AWS.Copy()
		if opts.Region != "" {
			cfg.Region = opts.Region
		}
	} else {
		var load []func(*config.LoadOptions) error
		if opts.Region != "" {
			load = append(load, config.WithRegion(opts.Region))
		}
		if opts.Profile != "" {
			load = append(load, config.WithSharedConfigProfile(opts.Profile))
		}
		var err error
		if cfg, err = config.LoadDefaultConfig(ctx, load...); err != nil {
			return nil, fmt.Errorf("%w: loading the AWS configuration: %v", ErrAWS, err)
		}
	}
	cfg.APIOptions = append(cfg.APIOptions, opts.APIOptions...)
	if cfg.Retryer == nil && cfg.RetryMaxAttempts == 0 {
		// CloudFormation throttles readily (many stacks polled at once):
		// the SDK's standard retryer and backoff, with more attempts than
		// its default 3, unless the configuration names its own
		// (AWS_MAX_ATTEMPTS, a profile's max_attempts).
		cfg.RetryMaxAttempts = 10
	}
	return &awsSession{cfg: cfg, regions: map[string]*clients{}}, nil
}

func (s *awsSession) in(region string) *clients {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.regions[region]; c != nil {
		return c
	}
	cfg := s.cfg.Copy()
	cfg.Region = region
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = true
		// objects uploaded in parts carry a checksum of checksums, which
		// GetObject cannot validate: no log line on stderr for each
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	c := &clients{
		cfn: cloudformation.NewFromConfig(cfg),
		s3:  s3c,
		uploader: transfermanager.New(s3c, func(o *transfermanager.Options) {
			o.PartSizeBytes, o.MultipartUploadThreshold, o.Concurrency = partSize, multipartThreshold, uploadConcurrency
			// a failed multipart upload is aborted even when ctx ended
			o.FailTimeout = 30 * time.Second
		}),
		ecr: ecr.NewFromConfig(cfg),
	}
	s.regions[region] = c
	return c
}

// callerAccount asks STS who the credentials are.
func (s *awsSession) callerAccount(ctx context.Context) (string, error) {
	out, err := sts.NewFromConfig(s.cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		return "", fmt.Errorf("%w: sts:GetCallerIdentity: %v", ErrAWS, err)
	}
	return aws.ToString(out.Account), nil
}

// apiCode is the error code of an AWS API error ("ValidationError").
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// apiMessage is an AWS API error's message, or err's text.
func apiMessage(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorMessage()
	}
	return err.Error()
}

// A Counter counts the AWS API calls made through the SDK, by operation
// ("PutObject", "ExecuteChangeSet"); add its Middleware to
// Options.APIOptions.
type Counter struct {
	mu    sync.Mutex
	calls map[string]*atomic.Int64
}

// Middleware is the SDK middleware that counts each operation's calls.
func (c *Counter) Middleware(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("assembleCallCounter",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c.add(middleware.GetOperationName(ctx))
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
}

func (c *Counter) add(op string) {
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]*atomic.Int64{}
	}
	n := c.calls[op]
	if n == nil {
		n = &atomic.Int64{}
		c.calls[op] = n
	}
	c.mu.Unlock()
	n.Add(1)
}

// Count is how many calls of the operation were made.
func (c *Counter) Count(op string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.calls[op]; n != nil {
		return n.Load()
	}
	return 0
}

// Counts returns every operation's count.
func (c *Counter) Counts() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.calls))
	for op, n := range c.calls {
		out[op] = n.Load()
	}
	return out
}
