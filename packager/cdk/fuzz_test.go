package cdk

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/assembly"
)

// FuzzMap maps fuzzed CDK manifests (the cloud assembly, an asset
// manifest, a nested assembly) over a fixed folder of files. Every failure
// wraps one of the package's sentinels; every success meets the rules of
// every mapping (checkMapping): the manifest validates, its paths name
// shipped files, its executables are executable.
func FuzzMap(f *testing.F) {
	f.Add(`{"version":"55.0.0","artifacts":{"S.assets":{"type":"cdk:asset-manifest","properties":{"file":"S.assets.json"}},"S":{"type":"aws:cloudformation:stack","environment":"aws://unknown-account/unknown-region","properties":{"templateFile":"t.json"},"dependencies":["S.assets"],"metadata":{"/S":[{"type":"aws:cdk:warning","data":"w"}]}},"inner":{"type":"cdk:cloud-assembly","properties":{"directoryName":"inner","displayName":"Inner"}}}}`,
		`{"version":"55.0.0","files":{"a":{"displayName":"Fn/Code","source":{"path":"asset.d","packaging":"zip"},"destinations":{"d":{"bucketName":"b-${AWS::AccountId}","objectKey":"a.zip"}}},"b":{"source":{"path":"asset.f"},"destinations":{"x":{"bucketName":"b","objectKey":"k","region":"eu-west-1"},"y":{"bucketName":"b","objectKey":"k"}}}},"dockerImages":{"c":{"source":{"directory":"asset.d","dockerBuildArgs":{"A":"\\"}},"destinations":{"d":{"repositoryName":"r","imageTag":"t"}}}}}`,
		`{"version":"55.0.0","artifacts":{"S":{"type":"aws:cloudformation:stack","environment":"aws://37736633/us-region-1","properties":{"templateFile":"../t.json","stackName":"x.y"}}},"missing":[{"key":"k","provider":"p","props":{"a":1}}]}`)
	files, _ := filepath.Glob(filepath.Join("testdata", "map", "*.txtar"))
	if len(files) == 0 {
		f.Fatal("no seeds in testdata/map")
	}
	for _, file := range files {
		c := loadCase(f, file)
		if m := c.section("manifest.json"); m != nil {
			f.Add(string(m), string(c.section("S.assets.json")), string(c.section("inner/manifest.json")))
		}
	}
	f.Fuzz(func(t *testing.T, manifest, assets, inner string) {
		dir := filepath.Join(t.TempDir(), "cdk.out")
		writeFiles(t, dir, map[string]string{
			"manifest.json":       manifest,
			"S.assets.json":       assets,
			"inner/manifest.json": inner,
			"t.json":              "{}",
			"inner/t.json":        "{}",
			"asset.d/run.sh":      "#!/bin/sh\n",
			"asset.d/lib/x.js":    "x",
			"asset.d/Dockerfile":  "FROM scratch\n",
			"asset.f":             "file",
		})
		if err := os.Chmod(filepath.Join(dir, "asset.d", "run.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		mp, err := Map(dir)
		if err != nil {
			for _, s := range []error{ErrCloudAssembly, ErrNotCopied, ErrOutside, assembly.ErrTooLarge} {
				if errors.Is(err, s) {
					if strings.Contains(err.Error(), "%!") {
						t.Fatalf("badly formatted error: %v", err)
					}
					return
				}
			}
			t.Fatalf("error wraps no sentinel: %v", err)
		}
		checkMapping(t, dir, mp)
	})
}
