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
// Hash; a wrong pin and an S3 source are errors.
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
		{"s3", "", "s3://bucket/m.yaml", source.ErrS3Unsupported},
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
