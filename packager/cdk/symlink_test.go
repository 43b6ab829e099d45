package cdk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/assembly"
)

const oneAsset = `{"version": "55.0.0", "artifacts": {"S.assets": {"type": "cdk:asset-manifest", "properties": {"file": "S.assets.json"}}}}`
const oneAssetFiles = `{"version": "55.0.0", "files": {"h": {"source": {"path": "asset.h"}, "destinations": {"d": {"bucketName": "b", "objectKey": "k"}}}}}`

// TestMapSymlinks: a symlink to a file inside the cdk.out ships that file's
// bytes; any other symlink is refused with its class.
func TestMapSymlinks(t *testing.T) {
	tests := []struct {
		name   string
		target func(base string) string // the link's target
		err    error
	}{
		{"inside", func(string) string { return "real.txt" }, nil},
		{"outside", func(base string) string { return filepath.Join(base, "secret.txt") }, ErrOutside},
		{"dotdot", func(string) string { return "../secret.txt" }, ErrOutside},
		{"folder", func(string) string { return "sub" }, ErrCloudAssembly},
		{"broken", func(string) string { return "gone.txt" }, ErrNotCopied},
		{"loop", func(string) string { return "asset.h" }, ErrCloudAssembly},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			dir := filepath.Join(base, "cdk.out")
			writeFiles(t, base, map[string]string{"secret.txt": "outside"})
			writeFiles(t, dir, map[string]string{"manifest.json": oneAsset, "S.assets.json": oneAssetFiles, "real.txt": "bytes", "sub/x": "x"})
			if err := os.Symlink(tt.target(base), filepath.Join(dir, "asset.h")); err != nil {
				t.Fatal(err)
			}
			mp, err := Map(dir)
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("got %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			for _, f := range mp.Files {
				if f.Name == "cdk.out/asset.h" {
					if b, _ := os.ReadFile(f.Path); string(b) != "bytes" {
						t.Errorf("asset.h ships %q", b)
					}
					return
				}
			}
			t.Error("asset.h not shipped")
		})
	}
}

// TestMapJSONBudget: artifacts that name one large metadata file again and
// again stop at the bound on JSON read again, not after reading it each time.
func TestMapJSONBudget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cdk.out")
	big := `{"/x": [{"type": "aws:cdk:info", "data": "` + strings.Repeat("x", 30<<20) + `"}]}`
	var arts []string
	for i := 0; i < 5; i++ {
		arts = append(arts, fmt.Sprintf(`"a%d": {"type": "cdk:tree", "properties": {"file": "t.json"}, "additionalMetadataFile": "big.json"}`, i))
	}
	writeFiles(t, dir, map[string]string{"manifest.json": `{"version": "55.0.0", "artifacts": {` + strings.Join(arts, ",") + `}}`, "big.json": big, "t.json": "{}"})
	if _, err := Map(dir); !errors.Is(err, assembly.ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
}

// TestMapPathsStayInside: every path a CDK manifest names (a template, an
// asset manifest, a metadata file, a nested assembly, a file asset, a
// Docker build context) that leaves the cdk.out, lexically or as an
// absolute path, is refused with ErrOutside, even where the file it names
// exists.
func TestMapPathsStayInside(t *testing.T) {
	const env = `"environment": "aws://unknown-account/unknown-region"`
	fields := map[string]func(p string) map[string]string{
		"templateFile": func(p string) map[string]string {
			return map[string]string{"manifest.json": `{"version": "55.0.0", "artifacts": {"S": {"type": "aws:cloudformation:stack", ` + env + `, "properties": {"templateFile": ` + p + `}}}}`}
		},
		"asset manifest file": func(p string) map[string]string {
			return map[string]string{"manifest.json": `{"version": "55.0.0", "artifacts": {"S.assets": {"type": "cdk:asset-manifest", "properties": {"file": ` + p + `}}}}`}
		},
		"additionalMetadataFile": func(p string) map[string]string {
			return map[string]string{"manifest.json": `{"version": "55.0.0", "artifacts": {"S": {"type": "aws:cloudformation:stack", ` + env + `, "properties": {"templateFile": "t.json"}, "additionalMetadataFile": ` + p + `}}}`}
		},
		"directoryName": func(p string) map[string]string {
			return map[string]string{"manifest.json": `{"version": "55.0.0", "artifacts": {"Stage": {"type": "cdk:cloud-assembly", "properties": {"directoryName": ` + p + `}}}}`}
		},
		"file asset": func(p string) map[string]string {
			return map[string]string{"manifest.json": oneAsset, "S.assets.json": `{"version": "55.0.0", "files": {"h": {"source": {"path": ` + p + `}, "destinations": {"d": {"bucketName": "b", "objectKey": "k"}}}}}`}
		},
		"image directory": func(p string) map[string]string {
			return map[string]string{"manifest.json": oneAsset, "S.assets.json": `{"version": "55.0.0", "dockerImages": {"i": {"source": {"directory": ` + p + `}, "destinations": {"d": {"repositoryName": "r", "imageTag": "t"}}}}}`}
		},
	}
	for field, files := range fields {
		for _, target := range []string{"outside", "outside/manifest.json"} {
			for _, p := range []func(base string) string{
				func(string) string { return "../" + target },
				func(string) string { return "sub/../../" + target },
				func(string) string { return "./../" + target },
				func(base string) string { return filepath.Join(base, target) },
				func(base string) string { return filepath.Join(base, "cdk.out", "t.json") },
			} {
				base := t.TempDir()
				// Whatever the path names exists, outside the cdk.out.
				writeFiles(t, base, map[string]string{"outside/manifest.json": `{"version": "55.0.0", "artifacts": {}}`, "outside/Dockerfile": "FROM scratch\n"})
				dir := filepath.Join(base, "cdk.out")
				fs := files(fmt.Sprintf("%q", p(base)))
				fs["t.json"], fs["sub/x"] = "{}", "x"
				writeFiles(t, dir, fs)
				if _, err := Map(dir); !errors.Is(err, ErrOutside) {
					t.Errorf("%s %q: got %v, want ErrOutside", field, p(base), err)
				}
			}
		}
	}
}
