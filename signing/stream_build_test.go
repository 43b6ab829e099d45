package signing_test

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/packager"
	"github.com/cloud-assembly/assemble/signing"
)

// A real build signed in one pass (packager.BuildOptions.Sealer, as build
// --sign-key does: files read from disk, a directory droplet, a file
// larger than the writer's chunk) is byte for byte the build followed by
// SealFile (as sign does), with the same nonce, time and randomness.
func TestBuildSignedInOnePassMatchesBuildThenSign(t *testing.T) {
	dir := t.TempDir()
	big := make([]byte, 5<<20+3)
	rand.New(rand.NewSource(3)).Read(big)
	files := map[string][]byte{
		"assembly.yaml": []byte("environment: aws://123456789012/eu-west-1\ndroplets:\n" +
			"  App:\n    type: stack\n    properties: {template: template.yaml, stackName: app}\n" +
			"  Site:\n    type: directory\n    properties: {directory: site, bucketName: b}\n"),
		"template.yaml":     []byte("Resources:\n  Bucket:\n    Type: AWS::S3::Bucket\n"),
		"site/index.html":   []byte("<h1>hi</h1>\n"),
		"site/empty.txt":    nil,
		"site/img/blob.bin": big,
	}
	for name, body := range files {
		p := filepath.Join(dir, "project", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	signers, err := signing.LoadSigners(&signing.SignerOptions{KeyFile: filepath.Join("..", "fixtures", "keys", "rsa3072.sec.asc"), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	opts := func() *signing.SignOptions {
		return &signing.SignOptions{Now: func() time.Time { return now }, Rand: rand.New(rand.NewSource(9))}
	}
	mod := time.Date(2024, 5, 6, 7, 8, 10, 0, time.UTC)
	project := filepath.Join(dir, "project")

	ss, err := signing.NewStreamSigner(t.Context(), signers, opts())
	if err != nil {
		t.Fatal(err)
	}
	onePass := filepath.Join(dir, "one.cloud")
	if _, err := packager.Build(t.Context(), project, onePass, packager.BuildOptions{ModTime: mod, Sealer: ss}); err != nil {
		t.Fatalf("build, signed in one pass: %v", err)
	}
	built := filepath.Join(dir, "built.cloud")
	if _, err := packager.Build(t.Context(), project, built, packager.BuildOptions{ModTime: mod}); err != nil {
		t.Fatalf("build: %v", err)
	}
	twoPass := filepath.Join(dir, "two.cloud")
	if _, err := signing.SealFile(t.Context(), built, twoPass, signers, opts()); err != nil {
		t.Fatalf("sign: %v", err)
	}
	a, _ := os.ReadFile(onePass)
	b, _ := os.ReadFile(twoPass)
	if len(a) < len(big) || !bytes.Equal(a, b) {
		t.Fatalf("one pass (%d bytes) differs from build then sign (%d bytes)", len(a), len(b))
	}
}
