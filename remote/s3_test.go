package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cloud-assembly/assemble/internal/testenv/moto"
)

func TestMain(m *testing.M) { moto.Main(m) }

// motoBucket points the SDK at moto_server and makes a bucket of the
// test's own.
func motoBucket(t *testing.T, versioned bool) (*s3.Client, string) {
	t.Helper()
	moto.Env(t)
	ctx := context.Background()
	c, err := s3Client(ctx, &Options{}, true)
	if err != nil {
		t.Fatal(err)
	}
	bucket := fmt.Sprintf("remote-test-%d", time.Now().UnixNano())
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	if versioned {
		if _, err := c.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &bucket,
			VersioningConfiguration: &s3types.VersioningConfiguration{Status: s3types.BucketVersioningStatusEnabled}}); err != nil {
			t.Fatal(err)
		}
	}
	return c, bucket
}

func TestS3PushRead(t *testing.T) {
	c, bucket := motoBucket(t, false)
	ctx := context.Background()
	for _, size := range []int{300000, 11 << 20} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			content := randomBytes(t, size)
			loc := fmt.Sprintf("s3://%s/releases/app-%d.cloud", bucket, size)
			p, err := Push(ctx, loc, File{R: bytes.NewReader(content), Size: int64(size), SHA256: sha(content)}, &Options{PartSize: 5 << 20})
			if err != nil {
				t.Fatal(err)
			}
			if p.Digest != sha(content) || p.Multipart != (size > 5<<20) {
				t.Errorf("pushed %+v", p)
			}
			key := fmt.Sprintf("releases/app-%d.cloud", size)
			h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
			if err != nil {
				t.Fatal(err)
			}
			if h.Metadata[MetadataSHA256] != sha(content).Hex() {
				t.Errorf("metadata %v", h.Metadata)
			}
			o, err := Open(ctx, loc, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if o.Size() != int64(size) {
				t.Fatalf("size %d", o.Size())
			}
			buf := make([]byte, 100000)
			if _, err := o.ReadAt(buf, int64(size/3)); err != nil || !bytes.Equal(buf, content[size/3:size/3+len(buf)]) {
				t.Fatalf("ReadAt: %v", err)
			}
			if sum, err := o.SHA256(ctx); err != nil || sum != sha(content) {
				t.Fatalf("SHA256 = %s, %v", sum, err)
			}
		})
	}
	if _, err := Open(ctx, "s3://"+bucket+"/nothing.cloud", nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open of a missing key: %v, want ErrNotFound", err)
	}
}

// TestS3Replaced: an object replaced between two ranges fails with
// ErrChanged (If-Match on the first response's ETag).
func TestS3Replaced(t *testing.T) {
	c, bucket := motoBucket(t, false)
	ctx := context.Background()
	key := "app.cloud"
	put := func(b []byte) {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(b)}); err != nil {
			t.Fatal(err)
		}
	}
	put(randomBytes(t, 1<<20))
	o, err := Open(ctx, "s3://"+bucket+"/"+key, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	put(randomBytes(t, 1<<20))
	if _, err := o.ReadAt(make([]byte, 10), 0); !errors.Is(err, ErrChanged) {
		t.Fatalf("ReadAt of a replaced object: %v, want ErrChanged", err)
	}
}

// TestS3Version: ?versionId= reads that version, whatever came after.
func TestS3Version(t *testing.T) {
	c, bucket := motoBucket(t, true)
	ctx := context.Background()
	v1, v2 := randomBytes(t, 400000), randomBytes(t, 500000)
	p1, err := Push(ctx, "s3://"+bucket+"/app.cloud", File{R: bytes.NewReader(v1), Size: int64(len(v1)), SHA256: sha(v1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p1.Version == "" {
		t.Fatal("no version ID from a versioned bucket")
	}
	key := "app.cloud"
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: &key, Body: bytes.NewReader(v2)}); err != nil {
		t.Fatal(err)
	}
	o, err := Open(ctx, "s3://"+bucket+"/app.cloud?versionId="+p1.Version, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if sum, err := o.SHA256(ctx); err != nil || sum != sha(v1) || o.Version() != p1.Version {
		t.Fatalf("SHA256 = %s, %v (version %s)", sum, err, o.Version())
	}
}

// TestS3PushReplaces: a push to a key that holds an object says it
// replaced it; an unversioned bucket's version (moto: "null") is none.
// With no AWS credentials at all, the failure is ErrNoCredentials.
func TestS3PushReplaces(t *testing.T) {
	_, bucket := motoBucket(t, false)
	ctx := context.Background()
	content := randomBytes(t, 1000)
	loc := "s3://" + bucket + "/app.cloud"
	for i, replaced := range []bool{false, true} {
		p, err := Push(ctx, loc, File{R: bytes.NewReader(content), Size: 1000, SHA256: sha(content)}, nil)
		if err != nil || p.Replaced != replaced || p.Version != "" {
			t.Fatalf("push %d: %+v, %v; want replaced %v, no version", i, p, err, replaced)
		}
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "")
	t.Setenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "")
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "")
	if _, err := Push(ctx, loc, File{R: bytes.NewReader(content), Size: 1000, SHA256: sha(content)}, nil); !errors.Is(err, ErrNoCredentials) {
		t.Errorf("push with no credentials: %v, want ErrNoCredentials", err)
	}
}
