package source

import (
	"bytes"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/cloud-assembly/assemble/internal/fakes3"
)

// TestS3 reads modules and packages from S3 through aws-sdk-go-v2 against
// a real S3 API server: credentials and region come from the standard
// settings, relative sources resolve inside the bucket, and the limits of
// HTTPS sources (size, time, redirects, total) hold.
func TestS3(t *testing.T) {
	pkg := writeZip(t, "", []entry{{name: "m/a.yaml", content: "ZA\n"}, {name: "m/b.yaml", content: "ZB\n"}})
	srv := fakes3.Start(t, map[string][]byte{
		"m/a.yaml":     []byte("RA\n"),
		"m/sub/b.yaml": []byte("RB\n"),
		"big":          bytes.Repeat([]byte("x"), 4096),
		"pkg.zip":      pkg,
	})
	fakes3.Env(t, srv.URL)
	fakes3.Credentials(t, "AKIDFROMENV")
	t.Setenv("AWS_REGION", "eu-west-3")

	r, top, _ := project(t, &Options{Client: srv.Client(), Timeout: 2 * time.Second, MaxFileSize: 1024})
	b, loc, err := r.Resolve(ctx, top, "s3://mods/m/a.yaml", sum([]byte("RA\n")))
	if err != nil || string(b) != "RA\n" {
		t.Fatalf("fetch = %q, %v", b, err)
	}
	if loc != (Location{Kind: URL, URL: "s3://mods/m/a.yaml"}) {
		t.Errorf("location %+v", loc)
	}
	if key, region := srv.SignedWith(); key != "AKIDFROMENV" || region != "eu-west-3" {
		t.Errorf("request signed with %q in %q, want AKIDFROMENV in eu-west-3", key, region)
	}
	if b, l, err := r.Resolve(ctx, loc, "sub/b.yaml", ""); err != nil || string(b) != "RB\n" || l.URL != "s3://mods/m/sub/b.yaml" {
		t.Errorf("relative to an S3 file = %q %+v %v", b, l, err)
	}
	if err := r.AddPackage(top, "remote", "s3://mods/pkg.zip", sum(pkg)); err != nil {
		t.Fatal(err)
	}
	pa, ploc, err := r.Resolve(ctx, top, "$remote/m/a.yaml", "")
	if err != nil || string(pa) != "ZA\n" {
		t.Errorf("package from S3 = %q, %v", pa, err)
	}
	if b, _, err := r.Resolve(ctx, ploc, "b.yaml", ""); err != nil || string(b) != "ZB\n" {
		t.Errorf("relative in a package from S3 = %q, %v", b, err)
	}

	fast, _, _ := project(t, &Options{Client: srv.Client(), Timeout: 300 * time.Millisecond, MaxFileSize: 1024})
	for _, tt := range []struct {
		name, source, hash string
		want               error
		msg                string
	}{
		{"hash mismatch", "s3://mods/m/a.yaml", sum([]byte("tampered")), ErrHashMismatch, "pinned"},
		{"no such key", "s3://mods/missing.yaml", "", ErrNotFound, "s3://mods/missing.yaml"},
		{"no such bucket", "s3://other/a.yaml", "", ErrNotFound, "s3://other/a.yaml"},
		{"too large", "s3://mods/big", "", ErrTooLarge, "more than 1024"},
		{"timeout", "s3://mods/" + fakes3.Slow, "", ErrFetch, "deadline"},
		{"redirect to http", "s3://mods/" + fakes3.Downgrade, "", ErrFetch, "leaves HTTPS"},
		{"redirect loop", "s3://mods/" + fakes3.Loop, "", ErrFetch, "more than 5 redirects"},
		{"no key", "s3://mods", "", ErrBadSource, "s3://bucket/path"},
		{"no key but a slash", "s3://mods/", "", ErrBadSource, "s3://bucket/path"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := fast.Resolve(ctx, top, tt.source, tt.hash)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want %v saying %q", err, tt.want, tt.msg)
			}
		})
	}

	// All downloads together are bounded, S3 and HTTPS alike.
	small, _, _ := project(t, &Options{Client: srv.Client(), MaxFileSize: 1024, MaxDownloads: 5})
	if _, _, err := small.Resolve(ctx, top, "s3://mods/m/a.yaml", ""); err != nil {
		t.Fatalf("first download: %v", err)
	}
	if _, _, err := small.Resolve(ctx, top, "s3://mods/m/sub/b.yaml", ""); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "in all") {
		t.Errorf("second download: err = %v, want the total limit", err)
	}
}

// TestS3Settings: credentials and region come from the standard chain: a
// profile of the shared files, and us-east-1 when no region is set; with no
// credentials anywhere the error says how to give them.
func TestS3Settings(t *testing.T) {
	srv := fakes3.Start(t, map[string][]byte{"m/a.yaml": []byte("RA\n")})

	t.Run("profile", func(t *testing.T) {
		dir := fakes3.Env(t, srv.URL)
		writeFile(t, filepath.Join(dir, "credentials"), "[dev]\naws_access_key_id = AKIDFROMPROFILE\naws_secret_access_key = s\n")
		writeFile(t, filepath.Join(dir, "config"), "[profile dev]\nregion = ap-south-1\n")
		t.Setenv("AWS_PROFILE", "dev")
		r, top, _ := project(t, &Options{Client: srv.Client()})
		if _, _, err := r.Resolve(ctx, top, "s3://mods/m/a.yaml", ""); err != nil {
			t.Fatal(err)
		}
		if key, region := srv.SignedWith(); key != "AKIDFROMPROFILE" || region != "ap-south-1" {
			t.Errorf("request signed with %q in %q, want AKIDFROMPROFILE in ap-south-1", key, region)
		}
	})
	t.Run("default region", func(t *testing.T) {
		fakes3.Env(t, srv.URL)
		fakes3.Credentials(t, "AKIDNOREGION")
		r, top, _ := project(t, &Options{Client: srv.Client()})
		if _, _, err := r.Resolve(ctx, top, "s3://mods/m/a.yaml", ""); err != nil {
			t.Fatal(err)
		}
		if key, region := srv.SignedWith(); key != "AKIDNOREGION" || region != defaultS3Region {
			t.Errorf("request signed with %q in %q, want AKIDNOREGION in %s", key, region, defaultS3Region)
		}
	})
	t.Run("ca bundle", func(t *testing.T) {
		// No test client: the server is trusted only through AWS_CA_BUNDLE.
		dir := fakes3.Env(t, srv.URL)
		fakes3.Credentials(t, "AKIDCABUNDLE")
		bundle := filepath.Join(dir, "ca.pem")
		writeFile(t, bundle, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
		r, top, _ := project(t, &Options{Timeout: 5 * time.Second})
		if _, _, err := r.Resolve(ctx, top, "s3://mods/m/a.yaml", ""); !errors.Is(err, ErrFetch) {
			t.Fatalf("without the bundle: err = %v, want ErrFetch (untrusted certificate)", err)
		}
		t.Setenv("AWS_CA_BUNDLE", bundle)
		r, top, _ = project(t, &Options{Timeout: 5 * time.Second})
		if b, _, err := r.Resolve(ctx, top, "s3://mods/m/a.yaml", ""); err != nil || string(b) != "RA\n" {
			t.Fatalf("with AWS_CA_BUNDLE: %q, %v", b, err)
		}
		if key, _ := srv.SignedWith(); key != "AKIDCABUNDLE" {
			t.Errorf("request signed with %q", key)
		}
	})
	t.Run("no credentials", func(t *testing.T) {
		fakes3.Env(t, srv.URL)
		r, top, _ := project(t, &Options{Client: srv.Client(), Timeout: 5 * time.Second})
		_, _, err := r.Resolve(ctx, top, "s3://mods/m/a.yaml", "")
		if !errors.Is(err, ErrNoCredentials) || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
			t.Fatalf("err = %v, want ErrNoCredentials with the fix", err)
		}
		// A package from S3 fails the same way when it is first used.
		if err := r.AddPackage(top, "p", "s3://mods/pkg.zip", ""); err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.Resolve(ctx, top, "$p/a.yaml", ""); !errors.Is(err, ErrNoCredentials) {
			t.Errorf("package: err = %v, want ErrNoCredentials", err)
		}
	})
}

func writeFile(t *testing.T, name, body string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestS3ErrorWithoutMessage: an S3 error with a code but no message (the
// SDK's answer to a missing bucket or key with no body) names the code
// rather than ending in an empty ": ".
func TestS3ErrorWithoutMessage(t *testing.T) {
	err := s3Error("s3://b/k", &smithy.GenericAPIError{Code: "NotFound"})
	if !errors.Is(err, ErrNotFound) || !strings.HasSuffix(err.Error(), "s3://b/k: NotFound") {
		t.Fatalf("err = %v, want ErrNotFound ending in the code", err)
	}
}
