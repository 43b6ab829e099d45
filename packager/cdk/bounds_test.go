package cdk

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/testenv/scaling"
)

// hostileCDKOut writes a cdk.out of one asset manifest (S.assets.json,
// assets as given) and stacks, each depending on it, and with t.json as
// their template. extra holds more files, and under "assetArtifact" more
// fields of the asset manifest's artifact.
func hostileCDKOut(t *testing.T, assets string, stacks int, extra map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "cdk.out")
	arts := []string{`"S.assets": {"type": "cdk:asset-manifest", "properties": {"file": "S.assets.json"}` + extra["assetArtifact"] + `}`}
	for i := 0; i < stacks; i++ {
		arts = append(arts, fmt.Sprintf(`"Stack%d": {"type": "aws:cloudformation:stack", "environment": "aws://unknown-account/unknown-region", "properties": {"templateFile": "t.json"}, "dependencies": ["S.assets"]}`, i))
	}
	files := map[string]string{
		"manifest.json": `{"version": "55.0.0", "artifacts": {` + strings.Join(arts, ",\n") + `}}`,
		"S.assets.json": assets,
		"t.json":        "{}",
	}
	for k, v := range extra {
		if k != "assetArtifact" {
			files[k] = v
		}
	}
	writeFiles(t, dir, files)
	return dir
}

// fileAssets is an asset manifest of n file assets, all of path.
func fileAssets(n int, path string) string {
	var as []string
	for i := 0; i < n; i++ {
		as = append(as, fmt.Sprintf(`"a%d": {"source": {"path": %q}, "destinations": {"d": {"bucketName": "b", "objectKey": "k%d"}}}`, i, path, i))
	}
	return `{"version": "55.0.0", "files": {` + strings.Join(as, ",") + `}}`
}

// TestMapManifestBound: a small cdk.out whose droplets would not fit in a
// manifest.json (assembly.MaxManifestSize, assembly.MaxDroplets) is refused
// with ErrTooLarge as the mapping passes the bound, whichever part of the
// mapping multiplies its input: dependencies on an asset manifest of many
// assets, a Docker image's properties copied to each destination, an
// artifact's messages copied to each of its droplets, the executables of
// one folder listed by many assets, and plain droplet count. Before, each
// was mapped in full (gigabytes for the first) and refused only when the
// manifest was written, or not at all.
func TestMapManifestBound(t *testing.T) {
	bigArgs := `{"A": "` + strings.Repeat("x", 1<<20) + `"}`
	var dests []string
	for i := 0; i < 40; i++ {
		dests = append(dests, fmt.Sprintf(`"d%d": {"repositoryName": "r", "imageTag": "t"}`, i))
	}
	image := `{"version": "55.0.0", "dockerImages": {"i": {"source": {"directory": "ctx", "dockerBuildArgs": ` + bigArgs + `}, "destinations": {` + strings.Join(dests, ",") + `}}}}`

	execs := map[string]string{}
	for i := 0; i < 3000; i++ {
		execs[fmt.Sprintf("asset.d/%s-%04d.sh", strings.Repeat("x", 60), i)] = "#!/bin/sh\n"
	}
	var dirAssets []string
	for i := 0; i < 200; i++ {
		dirAssets = append(dirAssets, fmt.Sprintf(`"a%d": {"source": {"path": "asset.d", "packaging": "zip"}, "destinations": {"d": {"bucketName": "b", "objectKey": "k%d"}}}`, i, i))
	}

	tests := []struct {
		name   string
		dir    func(t *testing.T) string
		chmodX bool
	}{
		{"dependsOn", func(t *testing.T) string {
			return hostileCDKOut(t, fileAssets(20000, "t.json"), 200, nil)
		}, false},
		{"image destinations", func(t *testing.T) string {
			return hostileCDKOut(t, image, 0, map[string]string{"ctx/Dockerfile": "FROM scratch\n"})
		}, false},
		{"messages", func(t *testing.T) string {
			return hostileCDKOut(t, fileAssets(2000, "t.json"), 0, map[string]string{
				"assetArtifact": `, "metadata": {"/S": [{"type": "aws:cdk:warning", "data": "` + strings.Repeat("w", 20000) + `"}]}`,
			})
		}, false},
		{"executables", func(t *testing.T) string {
			return hostileCDKOut(t, `{"version": "55.0.0", "files": {`+strings.Join(dirAssets, ",")+`}}`, 0, execs)
		}, true},
		{"droplets", func(t *testing.T) string {
			return hostileCDKOut(t, fileAssets(assembly.MaxDroplets+1, "t.json"), 0, nil)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.dir(t)
			if tt.chmodX {
				for name := range execs {
					if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			_, err := Map(dir)
			if !errors.Is(err, assembly.ErrTooLarge) {
				t.Fatalf("got %v, want ErrTooLarge", err)
			}
			t.Log(err)
		})
	}
}

// TestMapLinear: mapping takes time in proportion to the cdk.out, where
// artifact IDs that clean up to one logical ID, or many asset manifests
// each with its stack, took time in the square of their number (30 s for
// 40000 such IDs, 21 s for 20000 asset manifests). scaling.Linear compares
// n and 4n items (the fastest of interleaved runs, measured again before
// it fails, so that a loaded machine does not fail it): linear work takes
// about 4 times as long, quadratic work 16 times; more than 9 fails.
func TestMapLinear(t *testing.T) {
	scales := scaling.Linear
	t.Run("colliding IDs", func(t *testing.T) {
		scales(t, "colliding IDs", 40000, func(n int) {
			s := newIDSet()
			for i := 0; i < n; i++ {
				s.add("a." + strings.Repeat(":", i%7))
			}
		})
	})
	t.Run("asset manifests", func(t *testing.T) {
		dirs := map[int]string{}
		for _, n := range []int{2500, 10000} {
			dir := filepath.Join(t.TempDir(), "cdk.out")
			var arts []string
			for i := 0; i < n; i++ {
				arts = append(arts, fmt.Sprintf(`"m%d": {"type": "cdk:asset-manifest", "properties": {"file": "A.assets.json"}}, "s%d": {"type": "aws:cloudformation:stack", "environment": "aws://unknown-account/unknown-region", "properties": {"templateFile": "t.json"}, "dependencies": ["m%d"]}`, i, i, i))
			}
			writeFiles(t, dir, map[string]string{
				"manifest.json": `{"version": "55.0.0", "artifacts": {` + strings.Join(arts, ",") + `}}`,
				"A.assets.json": fileAssets(1, "t.json"),
				"t.json":        "{}",
			})
			dirs[n] = dir
		}
		scales(t, "asset manifests", 2500, func(n int) {
			if _, err := Map(dirs[n]); err != nil {
				t.Fatal(err)
			}
		})
	})
}
