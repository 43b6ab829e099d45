package deploy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloud-assembly/assemble/internal/fakes3"
	"github.com/cloud-assembly/assemble/internal/testenv/moto"
)

// The composite checksum deploy computes is S3's: the SHA-256 of the
// parts' SHA-256s, "-", the part count, over parts of partSize.
func TestPartHasher(t *testing.T) {
	for _, n := range []int{0, 1, partSize - 1, partSize, partSize + 1, 3*partSize + 7} {
		content := bigContent(n, uint64(n))
		h := newPartHasher()
		// written in odd pieces
		for rest := content; len(rest) > 0; {
			k := min(len(rest), 777777)
			h.Write(rest[:k])
			rest = rest[k:]
		}
		sum, parts := h.sums()
		if want := sha256.Sum256(content); !bytes.Equal(sum, want[:]) {
			t.Errorf("%d bytes: whole SHA-256 differs", n)
		}
		var want [][]byte
		for rest := content; len(rest) > 0; {
			k := min(len(rest), partSize)
			s := sha256.Sum256(rest[:k])
			want = append(want, s[:])
			rest = rest[k:]
		}
		if len(parts) != len(want) {
			t.Fatalf("%d bytes: %d parts, want %d", n, len(parts), len(want))
		}
		for i := range want {
			if !bytes.Equal(parts[i], want[i]) {
				t.Errorf("%d bytes: part %d differs", n, i+1)
			}
		}
	}
	if got := uploadPartSize(40 << 30); got != partSize {
		t.Errorf("part size of 40 GiB: %d", got)
	}
	if got := uploadPartSize(10000 * partSize); got != 10000*partSize/10000+1 {
		t.Errorf("part size at 10,000 parts: %d", got)
	}
}

// "Match" rests on bytes, never on metadata: an object overwritten with
// other bytes of the same size, its assemble-content-sha256 metadata
// copied, is found by status and replaced by deploy; an object that holds
// the signed bytes is left alone. Each case runs for a single-part and a
// multipart object, against moto_server directly (which stores no SHA-256
// checksum unless the uploader sends one, and then stores it unchecked:
// the object is read and hashed) and through fakes3.Checksums, a double
// that answers S3's checksums computed from the bytes (decided by the
// checksum alone, with no GetObject).
func TestObjectMatchRestsOnBytes(t *testing.T) {
	type forge int
	const (
		noChecksum    forge = iota // the SDK's default (CRC32): no SHA-256 for S3 to answer
		sha256Claimed              // x-amz-checksum-sha256 sent: single part, the signed bytes' (a lie); multipart, computed per part
	)
	for _, tc := range []struct {
		name      string
		size      int
		proxy     bool
		forge     forge
		wantReads bool // the verdict needs a GetObject
	}{
		{"single/moto/no-checksum", 64 << 10, false, noChecksum, true},
		{"multipart/moto/no-checksum", partSize + 1000, false, noChecksum, true},
		// moto computes a multipart upload's composite checksum from the
		// parts but answers it without S3's "-N" (and no checksum type):
		// equal, it says the same bytes; unequal, it may be over other
		// part sizes, so the object is read
		{"multipart/moto/sha256", partSize + 1000, false, sha256Claimed, true},
		{"single/double/no-checksum", 64 << 10, true, noChecksum, true},
		{"single/double/sha256", 64 << 10, true, sha256Claimed, false},
		{"multipart/double/no-checksum", partSize + 1000, true, noChecksum, true},
		// a composite checksum that differs may be over other part sizes:
		// status reads (deploy uploads)
		{"multipart/double/sha256", 2*partSize + 1000, true, sha256Claimed, true},
		// Not run: single/moto/sha256. moto keeps a claimed SHA-256 it did
		// not check and answers it back, so against moto alone the lie
		// would pass; S3 refuses the upload (BadDigest), which the double
		// stands for.
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := awsConfig(t)
			if tc.proxy {
				p := fakes3.Checksums(t, moto.Endpoint(t))
				t.Setenv("AWS_ENDPOINT_URL_S3", p.URL)
				var err error
				if cfg, err = config.LoadDefaultConfig(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			bucket := "bytes-" + uniq()
			makeBucket(t, cfg, bucket)
			content := bigContent(tc.size, 7)
			src, err := open(t, fileAssembly(t, bucket, content), "ed25519.pub.asc")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Deploy(context.Background(), src, opts(cfg, nil)); err != nil {
				t.Fatal(err)
			}
			// A rerun uploads nothing; through the double, it reads nothing.
			cnt := &Counter{}
			res, err := Deploy(context.Background(), src, opts(cfg, cnt))
			if err != nil || res.Droplet("Big").Outcome != Unchanged {
				t.Fatalf("rerun: %v %+v", err, res.Droplet("Big"))
			}
			if n := changes(cnt); n != 0 {
				t.Errorf("rerun made %d changing calls: %v", n, cnt.Counts())
			}
			if tc.proxy && cnt.Count("GetObject") != 0 {
				t.Errorf("rerun through the checksum double read the object (%d GetObject): the checksum should decide", cnt.Count("GetObject"))
			}
			if st, err := Status(context.Background(), src, opts(cfg, nil)); err != nil || !st.Match {
				t.Fatalf("status: %v %+v", err, st.Droplets)
			}

			// The forger: other bytes, same size, same metadata.
			c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
			head, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("big.bin")})
			if err != nil {
				t.Fatal(err)
			}
			if head.Metadata[MetaContentSHA256] != hexSHA256(content) {
				t.Fatalf("metadata %v", head.Metadata)
			}
			forged := bigContent(tc.size, 8)
			in := &transfermanager.UploadObjectInput{Bucket: aws.String(bucket), Key: aws.String("big.bin"), Body: bytes.NewReader(forged),
				ContentLength: aws.Int64(int64(len(forged))), Metadata: head.Metadata}
			if tc.forge == sha256Claimed {
				in.ChecksumAlgorithm = tmtypes.ChecksumAlgorithmSha256
				if tc.size < multipartThreshold {
					sum := sha256.Sum256(content) // the signed bytes' checksum, claimed for other bytes
					in.ChecksumSHA256 = aws.String(base64.StdEncoding.EncodeToString(sum[:]))
				}
			}
			tm := transfermanager.New(c, func(o *transfermanager.Options) { o.PartSizeBytes, o.MultipartUploadThreshold = partSize, partSize })
			if _, err := tm.UploadObject(context.Background(), in); err != nil {
				t.Fatal(err)
			}

			cnt = &Counter{}
			st, err := Status(context.Background(), src, opts(cfg, cnt))
			if !errors.Is(err, ErrDiffers) || st.Match {
				t.Fatalf("status of a forged object: %v %+v", err, st.Droplets)
			}
			if d := st.Droplets[0]; d.State != "differs" || !strings.Contains(strings.Join(d.Differences, "\n"), "s3://"+bucket+"/big.bin holds other bytes") {
				t.Errorf("status: %+v", d)
			}
			if reads := cnt.Count("GetObject") > 0; reads != tc.wantReads {
				t.Errorf("status read the object: %v, want %v (%v)", reads, tc.wantReads, cnt.Counts())
			}

			// Deploy puts the signed bytes back, then all matches.
			cnt = &Counter{}
			res, err = Deploy(context.Background(), src, opts(cfg, cnt))
			if err != nil || res.Droplet("Big").Outcome != Uploaded {
				t.Fatalf("deploy over a forged object: %v %+v", err, res.Droplet("Big"))
			}
			if cnt.Count("PutObject")+cnt.Count("CreateMultipartUpload") == 0 {
				t.Errorf("deploy uploaded nothing: %v", cnt.Counts())
			}
			if st, err := Status(context.Background(), src, opts(cfg, nil)); err != nil || !st.Match {
				t.Fatalf("status after deploy: %v %+v", err, st.Droplets)
			}
		})
	}
}
