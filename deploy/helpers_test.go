package deploy

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/testenv/moto"
	"github.com/cloud-assembly/assemble/signing"
)

func TestMain(m *testing.M) { moto.Main(m) }

// motoAccount is the account moto_server answers for.
const motoAccount = "123456789012"

var keysDir = filepath.Join("..", "fixtures", "keys")

// uniq is a fresh lower-case name suffix: tests share one moto_server.
func uniq() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// files of a test assembly: manifest.json (a value marshaled as JSON)
// and the other files' contents.
type files map[string]string

// writeAssembly writes an unsigned assembly and returns its path.
func writeAssembly(t testing.TB, manifest any, fs files) string {
	t.Helper()
	w := assembly.NewWriter(assembly.WriterOptions{})
	b, err := json.MarshalIndent(manifest, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddBytes("manifest.json", b); err != nil {
		t.Fatal(err)
	}
	for name, body := range fs {
		if err := w.AddBytes(name, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), "app.cloud")
	if err := w.WriteFile(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func readKeys(t testing.TB, name string) openpgp.EntityList {
	t.Helper()
	f, err := os.Open(filepath.Join(keysDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	el, err := signing.ReadKeys(f)
	if err != nil {
		t.Fatal(err)
	}
	return el
}

// sign signs the assembly at p in place with the fixture key.
func sign(t testing.TB, p, key string, now time.Time) {
	t.Helper()
	signers, err := signing.LoadSigners(&signing.SignerOptions{KeyFile: filepath.Join(keysDir, key), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	out := p + ".signed"
	if _, err := signing.SealFile(context.Background(), p, out, signers, &signing.SignOptions{Now: func() time.Time { return now }}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(out, p); err != nil {
		t.Fatal(err)
	}
}

// signedSource builds, signs and verifies an assembly: the Source a
// command gets.
func signedSource(t testing.TB, manifest any, fs files) *Source {
	t.Helper()
	p := writeAssembly(t, manifest, fs)
	sign(t, p, "ed25519.sec.asc", time.Now())
	src, err := open(t, p, "ed25519.pub.asc")
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// open verifies the assembly at p against the keyring, as verify does.
func open(t testing.TB, p, keyring string) (*Source, error) {
	t.Helper()
	rc, err := assembly.Open(p)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { rc.Close() })
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	v, err := signing.Verify(context.Background(), &rc.Reader, readKeys(t, keyring), nil)
	if err != nil {
		return nil, err
	}
	return FromVerified(v, digest.Of(b)), nil
}

// awsConfig is the SDK configuration moto.Env points at moto_server.
func awsConfig(t testing.TB) aws.Config {
	t.Helper()
	moto.Env(t)
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func makeBucket(t testing.TB, cfg aws.Config, name string) {
	t.Helper()
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		t.Fatal(err)
	}
}

// stacksNamed lists the live stacks whose name holds part.
func stacksNamed(t testing.TB, cfg aws.Config, part string) []string {
	t.Helper()
	c := cloudformation.NewFromConfig(cfg)
	out, err := c.ListStacks(context.Background(), &cloudformation.ListStacksInput{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range out.StackSummaries {
		if s.StackStatus != cfntypes.StackStatusDeleteComplete && strings.Contains(aws.ToString(s.StackName), part) {
			names = append(names, aws.ToString(s.StackName))
		}
	}
	return names
}

// objects lists the keys of a bucket.
func objects(t testing.TB, cfg aws.Config, bucket string) []string {
	t.Helper()
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	out, err := c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

func stack(id, env, name, template string, params map[string]string, deps ...string) map[string]any {
	props := map[string]any{"stackName": name, "template": template}
	if params != nil {
		props["parameters"] = params
	}
	d := map[string]any{"type": "npm://@aws-cdk/aws-cloudformation.StackDroplet", "environment": env, "properties": props}
	if len(deps) > 0 {
		d["dependsOn"] = deps
	}
	return d
}

func manifest(ds map[string]any) map[string]any {
	return map[string]any{"schema": "cloud-assembly/1.0", "droplets": ds}
}

const env = "aws://" + motoAccount + "/us-east-1"

func hexSHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
