package deploy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/cloud-assembly/assemble/signing"
)

// bigContent is n pseudo-random bytes (incompressible: the archive's
// deflate stream stores them as they are).
func bigContent(n int, seed uint64) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(seed)})
	r.Read(b)
	return b
}

// fileAssembly writes and signs an assembly of one file droplet uploading
// content to bucket, and returns its path (the content is not kept).
func fileAssembly(t *testing.T, bucket string, content []byte) string {
	t.Helper()
	p := writeAssembly(t, manifest(map[string]any{
		"Big": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": env,
			"properties": map[string]any{"file": "big.bin", "bucketName": bucket, "objectKey": "big.bin"}},
	}), files{"big.bin": string(content)})
	sign(t, p, "ed25519.sec.asc", time.Now())
	return p
}

// heapBytes is the bytes of live and not yet swept heap objects.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A 64 MiB file deploys with the heap growing by a fraction of it: the
// file is streamed through the verification twice (its SHA-256, then the
// upload in 5 MiB parts), never held whole. The heap is sampled every
// millisecond with the collector made eager (GOGC=10), so that the peak
// measures what the upload holds, not garbage awaiting collection.
func TestLargeFileStreams(t *testing.T) {
	cfg := awsConfig(t)
	bucket := "big-" + uniq()
	makeBucket(t, cfg, bucket)
	const size = 64 << 20
	p := fileAssembly(t, bucket, bigContent(size, 1))
	src, err := open(t, p, "ed25519.pub.asc")
	if err != nil {
		t.Fatal(err)
	}
	cnt := &Counter{}
	o := opts(cfg, cnt)

	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	base := heapBytes()
	var peak uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if h := heapBytes(); h > peak {
				peak = h
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	res, err := Deploy(context.Background(), src, o)
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	growth := int64(peak) - int64(base)
	t.Logf("heap: base %d MiB, peak growth %.1f MiB for a %d MiB file; calls %v", base>>20, float64(growth)/(1<<20), size>>20, cnt.Counts())
	if growth > size/2 {
		t.Errorf("the heap grew by %d bytes deploying a %d-byte file: not streamed", growth, size)
	}
	if got := res.Droplet("Big").Outcome; got != Uploaded {
		t.Fatalf("outcome %s", got)
	}
	if n := cnt.Count("UploadPart"); n != size/partSize+1 {
		t.Errorf("%d parts, want %d", n, size/partSize+1)
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	head, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("big.bin")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToInt64(head.ContentLength) != size || head.Metadata[MetaContentSHA256] != hexSHA256(bigContent(size, 1)) {
		t.Errorf("object: %d bytes, metadata %v", aws.ToInt64(head.ContentLength), head.Metadata)
	}
	// The rerun compares the stored SHA-256 and uploads nothing.
	cnt = &Counter{}
	if res, err = Deploy(context.Background(), src, opts(cfg, cnt)); err != nil || res.Droplet("Big").Outcome != Unchanged || changes(cnt) != 0 {
		t.Errorf("rerun: %v %s %v", err, res.Droplet("Big").Outcome, cnt.Counts())
	}
}

// forgeCRC flips the lowest bit of s[0] and changes s[1:5] so that the
// CRC-32 of any message ending in s is unchanged: the tamper a careful
// attacker makes, which the archive's CRC cannot see and only the signed
// hash can. (CRC-32 is affine: the change of the CRC is a linear function
// of the change of the bytes, solved here over GF(2).)
func forgeCRC(s []byte) {
	zero := make([]byte, len(s))
	c0 := crc32.ChecksumIEEE(zero)
	lin := func(i int, bit byte) uint32 {
		zero[i] = bit
		v := crc32.ChecksumIEEE(zero) ^ c0
		zero[i] = 0
		return v
	}
	var basis [32]struct {
		v, combo uint32
		ok       bool
	}
	for b := range 32 {
		v, combo := lin(1+b/8, 1<<(b%8)), uint32(1)<<b
		for p := 31; p >= 0; p-- {
			if v>>p&1 == 0 {
				continue
			}
			if !basis[p].ok {
				basis[p].v, basis[p].combo, basis[p].ok = v, combo, true
				break
			}
			v, combo = v^basis[p].v, combo^basis[p].combo
		}
	}
	x, combo := lin(0, 1), uint32(0)
	for p := 31; p >= 0; p-- {
		if x>>p&1 == 1 {
			x, combo = x^basis[p].v, combo^basis[p].combo
		}
	}
	s[0] ^= 1
	for b := range 32 {
		if combo>>b&1 == 1 {
			s[1+b/8] ^= 1 << (b % 8)
		}
	}
}

// A byte changed in the middle of the file on disk after verification,
// between deploy's first read (its SHA-256) and the upload (its parts),
// with the archive's CRC-32 kept right: the upload's read ends in
// signing's digest mismatch, the multipart upload is aborted, and the
// bucket holds nothing.
func TestTamperedMidFileUploadsNothing(t *testing.T) {
	cfg := awsConfig(t)
	bucket := "tamper-" + uniq()
	makeBucket(t, cfg, bucket)
	const size = 16 << 20 // over multipartThreshold: the read that fails is the last part's
	content := bigContent(size, 2)
	p := fileAssembly(t, bucket, content)
	src, err := open(t, p, "ed25519.pub.asc")
	if err != nil {
		t.Fatal(err)
	}
	tamper := tamperer(t, p, content)
	var once sync.Once
	o := opts(cfg, nil)
	o.Progress = func(e Event) {
		if strings.HasPrefix(e.Message, "uploading ") {
			once.Do(func() {
				if err := tamper(); err != nil {
					t.Error(err)
				}
			})
		}
	}
	res, err := Deploy(context.Background(), src, o)
	if !errors.Is(err, signing.ErrDigestMismatch) || !errors.Is(res.Droplet("Big").Err, signing.ErrDigestMismatch) || !errors.Is(err, ErrUpload) {
		t.Fatalf("deploy: %v (droplet: %v)", err, res.Droplet("Big").Err)
	}
	if keys := objects(t, cfg, bucket); len(keys) != 0 {
		t.Errorf("objects after a tampered upload: %v", keys)
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	mu, err := c.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(mu.Uploads) != 0 {
		t.Errorf("%d multipart uploads left, want them aborted", len(mu.Uploads))
	}
}

// An object below multipartThreshold is sent with x-amz-checksum-sha256
// set to the SHA-256 of deploy's first read, so that S3 refuses a body
// that differs (BadDigest); S3 then keeps that checksum with the object.
//
// moto 5.2.1 does not compare the header with the body (s3/responses.py
// _get_checksum: "TODO: AWS computes the provided value and verifies it's
// the same"): it stores whatever is sent. So this test checks that the
// header carries the signed content's SHA-256 (moto returns it to
// HeadObject with checksum mode on), and records what moto does with a
// wrong one; that a tampered body fails is tested by
// TestTamperedMidFileUploadsNothing, through the verification itself.
func TestSmallObjectCarriesChecksumSHA256(t *testing.T) {
	cfg := awsConfig(t)
	bucket := "sum-" + uniq()
	makeBucket(t, cfg, bucket)
	content := bigContent(100<<10, 3)
	src, err := open(t, fileAssembly(t, bucket, content), "ed25519.pub.asc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Deploy(context.Background(), src, opts(cfg, nil)); err != nil {
		t.Fatal(err)
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	head, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("big.bin"), ChecksumMode: s3types.ChecksumModeEnabled})
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.Sum256(content)
	if got := aws.ToString(head.ChecksumSHA256); got != base64.StdEncoding.EncodeToString(want[:]) {
		t.Errorf("x-amz-checksum-sha256 %q, want the content's SHA-256 %q", got, base64.StdEncoding.EncodeToString(want[:]))
	}

	other := sha256.Sum256([]byte("the signed bytes"))
	_, err = c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("wrong"),
		Body: strings.NewReader("other bytes"), ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(other[:]))})
	if err == nil {
		t.Log("moto stored a body whose SHA-256 differs from its x-amz-checksum-sha256 (moto does not check it; S3 answers BadDigest)")
	} else if code := apiCode(err); code != "BadDigest" && code != "InvalidRequest" {
		t.Errorf("a wrong x-amz-checksum-sha256: %v", err)
	}
}

// tamperer returns a function that changes a byte in the middle of
// content, stored as is in the archive at p, keeping its CRC-32 right.
func tamperer(t *testing.T, p string, content []byte) func() error {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	q := len(content) / 2
	at := bytes.Index(raw, content[q:q+64])
	if at < 0 {
		t.Fatal("the content's middle is not stored as is in the archive")
	}
	tampered := bytes.Clone(content)
	forgeCRC(tampered[q:])
	if crc32.ChecksumIEEE(tampered) != crc32.ChecksumIEEE(content) || bytes.Equal(tampered, content) {
		t.Fatal("forgeCRC")
	}
	return func() error {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteAt(tampered[q:q+5], int64(at))
		return err
	}
}

// A directory's zip is written from the verified files into an unnamed
// temporary file (nothing in TMPDIR while it uploads, nothing after); a
// file changed after verification fails the zip with signing's sentinel
// before anything is sent.
func TestDirectoryZipSpool(t *testing.T) {
	cfg := awsConfig(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	bucket := "zip-" + uniq()
	makeBucket(t, cfg, bucket)
	content := bigContent(1<<20, 4)
	write := func() string {
		p := writeAssembly(t, manifest(map[string]any{
			"Site": map[string]any{"type": "npm://@aws-cdk/assets.DirectoryDroplet", "environment": env,
				"properties": map[string]any{"directory": "site", "bucketName": bucket, "objectKey": "site.zip"}},
		}), files{"site/big.bin": string(content), "site/index.html": "<p>hi</p>"})
		sign(t, p, "ed25519.sec.asc", time.Now())
		return p
	}
	listTmp := func() []string {
		es, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}

	p := write()
	src, err := open(t, p, "ed25519.pub.asc")
	if err != nil {
		t.Fatal(err)
	}
	o := opts(cfg, nil)
	var during []string
	o.Progress = func(e Event) {
		if strings.HasPrefix(e.Message, "uploading ") {
			during = listTmp()
		}
	}
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	if len(during) != 0 || len(listTmp()) != 0 {
		t.Errorf("TMPDIR while uploading %v, after %v: want the spool unnamed", during, listTmp())
	}
	if keys := objects(t, cfg, bucket); len(keys) != 1 || keys[0] != "site.zip" {
		t.Fatalf("objects %v", keys)
	}

	bucket2 := "zip-" + uniq()
	makeBucket(t, cfg, bucket2)
	bucket = bucket2
	p = write()
	if src, err = open(t, p, "ed25519.pub.asc"); err != nil {
		t.Fatal(err)
	}
	if err := tamperer(t, p, content)(); err != nil {
		t.Fatal(err)
	}
	cnt := &Counter{}
	_, err = Deploy(context.Background(), src, opts(cfg, cnt))
	if !errors.Is(err, signing.ErrDigestMismatch) {
		t.Fatalf("deploy of a tampered folder: %v", err)
	}
	if keys := objects(t, cfg, bucket2); len(keys) != 0 || changes(cnt) != 0 {
		t.Errorf("objects %v, calls %v", keys, cnt.Counts())
	}
	if len(listTmp()) != 0 {
		t.Errorf("TMPDIR after a failed zip: %v", listTmp())
	}
}
