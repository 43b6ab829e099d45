package cdk

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/cloud-assembly/assemble/assembly"
)

// writeFiles writes files (slash path -> content) below dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, body := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(body), Mode: 0o644}
	}
	if err := os.CopyFS(dir, fsys); err != nil {
		t.Fatal(err)
	}
}

const cdkManifest = `{"version": "55.0.0", "artifacts": {}}`

// TestFind: which folder a build of a path reads as a cdk.out.
func TestFind(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"out/manifest.json":                   cdkManifest,
		"app/cdk.json":                        `{"app": "node app.js"}`,
		"app/cdk.out/manifest.json":           cdkManifest,
		"custom/cdk.json":                     `{"app": "node app.js", "output": "build/assembly"}`,
		"custom/build/assembly/manifest.json": cdkManifest,
		"custom/cdk.out/manifest.json":        cdkManifest, // not the one cdk.json names
		"bare/cdk.out/manifest.json":          cdkManifest,
		"unsynthesized/cdk.json":              `{"app": "node app.js"}`,
		"ours/manifest.json":                  `{"schema": "cloud-assembly/1.0", "droplets": {}}`,
		"noartifacts/manifest.json":           `{"version": "55.0.0"}`,
		"broken/manifest.json":                `{"version": `,
		"template/stack.yaml":                 "Resources: {}\n",
		"badcfg/cdk.json":                     `{"output": 7}`,
	})
	p := func(s string) string { return filepath.Join(root, filepath.FromSlash(s)) }
	tests := []struct {
		target, want string
		err          error
	}{
		{"out", "out", nil},
		{"out/manifest.json", "out", nil},
		{"app", "app/cdk.out", nil},
		{"custom", "custom/build/assembly", nil},
		{"bare", "bare/cdk.out", nil},
		{"unsynthesized", "", ErrNotSynthesized},
		{"badcfg", "", ErrCloudAssembly},
		{"ours", "", nil},
		{"ours/manifest.json", "", nil},
		{"noartifacts", "", nil},
		{"broken", "", nil},
		{"template", "", nil},
		{"template/stack.yaml", "", nil},
		{"nowhere", "", nil},
		{"huge", "", assembly.ErrTooLarge},
		{"huge/manifest.json", "", assembly.ErrTooLarge},
		{"hugeapp", "", assembly.ErrTooLarge},
		{"hugebare", "", assembly.ErrTooLarge},
	}
	// Too large to read: a build says so, not that it found no cdk.out.
	for _, huge := range []string{"huge/manifest.json", "hugeapp/cdk.out/manifest.json", "hugebare/cdk.out/manifest.json"} {
		writeFiles(t, root, map[string]string{huge: cdkManifest})
		if err := os.Truncate(p(huge), maxJSONSize+1); err != nil {
			t.Fatal(err)
		}
	}
	writeFiles(t, root, map[string]string{"hugeapp/cdk.json": `{"app": "node app.js"}`})
	for _, tt := range tests {
		got, err := Find(p(tt.target))
		want := ""
		if tt.want != "" {
			want = p(tt.want)
		}
		if got != want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("Find(%s) = %q, %v; want %q, %v", tt.target, got, err, want, tt.err)
		}
	}
}
