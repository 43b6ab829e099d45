package main

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/deploy"
	"github.com/cloud-assembly/assemble/internal/testenv/moto"
	"github.com/cloud-assembly/assemble/signing"
)

// writeCloud writes an unsigned assembly of the files (name, content).
func writeCloud(t *testing.T, path string, fs map[string]string) {
	t.Helper()
	w := assembly.NewWriter(assembly.WriterOptions{})
	for name, body := range fs {
		if err := w.AddBytes(name, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.WriteFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
}

// deployManifest is a stack and a file, in moto's account, with names of
// their own; edit changes the manifest's JSON object first.
func deployManifest(t *testing.T, u, bucket string, edit func(m map[string]any)) string {
	env := "aws://123456789012/us-east-1"
	ds := map[string]any{
		"Stack": map[string]any{"type": "npm://@aws-cdk/aws-cloudformation.StackDroplet", "environment": env,
			"properties": map[string]any{"stackName": "refuse-" + u, "template": "t.yaml"}},
		"File": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": env,
			"properties": map[string]any{"file": "f.txt", "bucketName": bucket, "objectKey": "f.txt"}},
	}
	m := map[string]any{"schema": "cloud-assembly/1.0", "droplets": ds}
	if edit != nil {
		edit(m)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// expiredSign attaches to the assembly at in a signature the expired
// fixture key made after it expired (go-crypto signs it; a hostile signer
// could), writing out.
func expiredSign(t *testing.T, in, out string) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "fixtures", "keys", "expired.sec.asc"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys, err := signing.ReadKeys(f)
	if err != nil {
		t.Fatal(err)
	}
	after := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	rc, err := assembly.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	a, err := signing.Attest(context.Background(), &rc.Reader, &signing.SignOptions{Now: func() time.Time { return after }})
	if err != nil {
		t.Fatal(err)
	}
	body, err := a.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := clearsign.Encode(&buf, keys[0].PrivateKey, &packet.Config{DefaultHash: crypto.SHA256, Time: func() time.Time { return after }})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(body)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := signing.SealFile(context.Background(), in, out, nil, &signing.SignOptions{Signature: buf.Bytes()}); err != nil {
		t.Fatal(err)
	}
}

// A tampered, unsigned, expired-key, wrong-account, missing-parameter or
// undeployable assembly changes nothing in the cloud: no stack, no object.
func TestDeployRefusalsChangeNothing(t *testing.T) {
	moto.Env(t)
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	cfn := cloudformation.NewFromConfig(cfg)
	fixtures, _ := filepath.Abs(filepath.Join("..", "..", "fixtures"))
	keyring := filepath.Join(fixtures, "keys", "trusted.asc")
	const template = "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n"
	for _, tc := range []struct {
		name, code string
		edit       func(m map[string]any)
		make       func(t *testing.T, dir, unsigned string) string // the assembly deployed
	}{
		{name: "tampered", code: "digest_mismatch", make: func(t *testing.T, dir, unsigned string) string {
			// The signed archive, f.txt's byte changed ("f" to "F"), the
			// rest (signature.asc too) copied as it is.
			out := filepath.Join(dir, "tampered.cloud")
			if err := os.WriteFile(out, tamperedCopy(t, sign(t, dir, unsigned)), 0o644); err != nil {
				t.Fatal(err)
			}
			return out
		}},
		{name: "unsigned", code: "unsigned", make: func(t *testing.T, dir, unsigned string) string { return unsigned }},
		{name: "expired-key", code: "key_expired", make: func(t *testing.T, dir, unsigned string) string {
			out := filepath.Join(dir, "expired.cloud")
			expiredSign(t, unsigned, out)
			return out
		}},
		{name: "wrong-account", code: "wrong_account", edit: func(m map[string]any) {
			m["droplets"].(map[string]any)["Stack"].(map[string]any)["environment"] = "aws://111111111111/us-east-1"
		}},
		{name: "missing-parameter", code: "missing_information", edit: func(m map[string]any) {
			m["missing"] = map[string]any{"stack-parameter:Stack:Email": map[string]any{"provider": "stack-parameter", "props": map[string]any{"droplet": "Stack", "parameter": "Email"}}}
		}},
		{name: "undeployable", code: "undeployable", edit: func(m map[string]any) {
			m["droplets"].(map[string]any)["Blue"] = map[string]any{"type": "npm://@cloud-assembly/blueprint.BlueprintDroplet", "environment": "aws://123456789012/us-east-1", "properties": map[string]any{"blueprint": "bp.yaml"}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := make([]byte, 4)
			rand.Read(b)
			u := hex.EncodeToString(b)
			bucket := "refuse-" + u
			if _, err := s3c.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			unsigned := filepath.Join(dir, "unsigned.cloud")
			writeCloud(t, unsigned, map[string]string{"manifest.json": deployManifest(t, u, bucket, tc.edit), "t.yaml": template, "f.txt": "f", "bp.yaml": "resources: {}\n"})
			target := ""
			if tc.make != nil {
				target = tc.make(t, dir, unsigned)
			} else {
				target = sign(t, dir, unsigned)
			}
			for _, plan := range []bool{true, false} {
				args := []string{"assemble", "deploy", "--keyring", keyring, "--json", target}
				if plan {
					args = append(args, "--plan")
				}
				var stdout, stderr bytes.Buffer
				if code := run(context.Background(), args, nil, &stdout, &stderr); code != 1 {
					t.Fatalf("exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
				}
				var obj struct {
					Error struct{ Code string } `json:"error"`
				}
				json.Unmarshal(stdout.Bytes(), &obj)
				if obj.Error.Code != tc.code {
					t.Errorf("code %q, want %q\n%s", obj.Error.Code, tc.code, stdout.String())
				}
			}
			stacks, err := cfn.ListStacks(context.Background(), &cloudformation.ListStacksInput{})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range stacks.StackSummaries {
				if strings.Contains(aws.ToString(s.StackName), u) && s.StackStatus != cfntypes.StackStatusDeleteComplete {
					t.Errorf("stack %s made (%s)", aws.ToString(s.StackName), s.StackStatus)
				}
			}
			objs, err := s3c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
			if err != nil {
				t.Fatal(err)
			}
			if len(objs.Contents) != 0 {
				t.Errorf("%d objects uploaded", len(objs.Contents))
			}
		})
	}
}

// sign signs unsigned with the fixture key through the command.
func sign(t *testing.T, dir, unsigned string) string {
	t.Helper()
	out := filepath.Join(dir, "signed.cloud")
	key, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "keys", "ed25519.sec.asc"))
	var stderr bytes.Buffer
	if code := run(context.Background(), []string{"assemble", "sign", "--key", key, "-o", out, unsigned}, nil, &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("sign: %s", stderr.String())
	}
	return out
}

// Ctrl-C exits 130, with the code "interrupted": before verification ends,
// or while deploying (deploy.ErrInterrupted).
func TestDeployInterruptedExits130(t *testing.T) {
	dir := t.TempDir()
	unsigned := filepath.Join(dir, "u.cloud")
	writeCloud(t, unsigned, map[string]string{"manifest.json": `{"schema":"cloud-assembly/1.0","droplets":{}}`})
	signed := sign(t, dir, unsigned)
	keyring, _ := filepath.Abs(filepath.Join("..", "..", "fixtures", "keys", "trusted.asc"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, []string{"assemble", "deploy", "--keyring", keyring, "--json", signed}, nil, &stdout, &stderr); code != 130 {
		t.Fatalf("exit %d, want 130\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), `"code": "interrupted"`) {
		t.Errorf("stdout %s", stdout.String())
	}
	err := deployError(fmt.Errorf("x: %w", deploy.ErrInterrupted))
	if code := report(&bytes.Buffer{}, nil, err); code != 130 {
		t.Errorf("deploy.ErrInterrupted exits %d", code)
	}
}
