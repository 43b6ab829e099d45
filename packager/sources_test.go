package packager

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zip"

	"github.com/cloud-assembly/assemble/internal/fakes3"
	"github.com/cloud-assembly/assemble/packager/cfn"
	"github.com/cloud-assembly/assemble/packager/cfn/source"
)

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPackagesZip: a module read from a Packages zip includes another
// module of the same package by a relative path.
func TestPackagesZip(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range []struct{ name, body string }{
		{"lib/outer.yaml", "Modules:\n  In:\n    Source: ./inner/leaf.yaml\nOutputs:\n  Arn:\n    Value: !GetAtt In.Arn\n"},
		{"lib/inner/leaf.yaml", "Resources:\n  Bucket:\n    Type: AWS::S3::Bucket\nOutputs:\n  Arn:\n    Value: !GetAtt Bucket.Arn\n"},
	} {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, dir, map[string]string{
		"pkg.zip":       buf.String(),
		"template.yaml": "Packages:\n  lib:\n    Source: ./pkg.zip\nModules:\n  Out:\n    Source: $lib/lib/outer.yaml\nOutputs:\n  A:\n    Value: !GetAtt Out.Arn\n",
	})
	out, err := PackageTemplate(filepath.Join(dir, "template.yaml"), PackageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  OutInBucket:\n    Type: AWS::S3::Bucket", "SourceMap: $lib/lib/inner/leaf.yaml:Bucket:2", "Value: !GetAtt OutInBucket.Arn"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "Packages") {
		t.Errorf("Packages section left in the output:\n%s", out)
	}
}

// TestHTTPSSource: a module fetched from a local TLS server, pinned by
// Hash; a wrong pin is an error.
func TestHTTPSSource(t *testing.T) {
	module := "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n"
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(module))
	}))
	defer srv.Close()
	sum := sha256.Sum256([]byte(module))
	good := "sha256:" + hex.EncodeToString(sum[:])
	bad := "sha256:" + strings.Repeat("0", 64)
	for _, tc := range []struct {
		name, hash, source string
		want               error
	}{
		{"pinned", good, srv.URL + "/m.yaml", nil},
		{"mismatch", bad, srv.URL + "/m.yaml", source.ErrHashMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tmpl := "Modules:\n  Remote:\n    Source: " + tc.source + "\n"
			if tc.hash != "" {
				tmpl += "    Hash: " + tc.hash + "\n"
			}
			writeFiles(t, dir, map[string]string{"template.yaml": tmpl})
			srcs, err := cfn.NewSources(context.Background(), dir, &source.Options{Client: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			defer srcs.(io.Closer).Close()
			out, err := PackageTemplate(filepath.Join(dir, "template.yaml"), PackageOptions{Sources: srcs, NoSourceMap: true})
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(out), "RemoteTopic:") {
					t.Errorf("output lacks RemoteTopic:\n%s", out)
				}
				return
			}
			if !errors.Is(err, tc.want) || !errors.Is(err, cfn.ErrInvalid) {
				t.Fatalf("error %v, want %v (and cfn.ErrInvalid)", err, tc.want)
			}
			var ce *cfn.Error
			if !errors.As(err, &ce) || ce.Line != 3 {
				t.Errorf("error %v does not point at the Source line", err)
			}
		})
	}
}

// TestS3Source packages a template whose modules come from S3 (a real S3
// API server on localhost, gofakes3): a module by s3:// URI that includes
// another by a relative path, and a Packages zip from S3. With no AWS
// credentials configured the error is at the Source and says how to set
// them.
func TestS3Source(t *testing.T) {
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, _ := zw.Create("lib/queue.yaml")
	w.Write([]byte("Resources:\n  Queue:\n    Type: AWS::SQS::Queue\n"))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	srv := fakes3.Start(t, map[string][]byte{
		"mods/outer.yaml":      []byte("Modules:\n  In:\n    Source: ./inner/leaf.yaml\nOutputs:\n  Arn:\n    Value: !GetAtt In.Arn\n"),
		"mods/inner/leaf.yaml": []byte("Resources:\n  Bucket:\n    Type: AWS::S3::Bucket\nOutputs:\n  Arn:\n    Value: !GetAtt Bucket.Arn\n"),
		"pkg.zip":              zbuf.Bytes(),
	})
	tmpl := "Packages:\n  lib:\n    Source: s3://mods/pkg.zip\nModules:\n  Out:\n    Source: s3://mods/mods/outer.yaml\n  Q:\n    Source: $lib/lib/queue.yaml\nOutputs:\n  A:\n    Value: !GetAtt Out.Arn\n"
	pack := func(t *testing.T) ([]byte, error) {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"template.yaml": tmpl})
		srcs, err := cfn.NewSources(context.Background(), dir, &source.Options{Client: srv.Client()})
		if err != nil {
			t.Fatal(err)
		}
		defer srcs.(io.Closer).Close()
		return PackageTemplate(filepath.Join(dir, "template.yaml"), PackageOptions{Sources: srcs})
	}
	t.Run("credentials", func(t *testing.T) {
		fakes3.Env(t, srv.URL)
		fakes3.Credentials(t, "AKIDPACKAGE")
		out, err := pack(t)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"  OutInBucket:\n    Type: AWS::S3::Bucket", "SourceMap: s3://mods/mods/inner/leaf.yaml:Bucket:2", "  QQueue:\n", "Value: !GetAtt OutInBucket.Arn"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if key, _ := srv.SignedWith(); key != "AKIDPACKAGE" {
			t.Errorf("requests signed with %q, want AKIDPACKAGE", key)
		}
	})
	t.Run("no credentials", func(t *testing.T) {
		fakes3.Env(t, srv.URL)
		_, err := pack(t)
		var ce *cfn.Error
		if !errors.Is(err, source.ErrNoCredentials) || !errors.As(err, &ce) || ce.Line == 0 || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
			t.Fatalf("err = %v, want source.ErrNoCredentials placed in the template, with the fix", err)
		}
	})
}
