package packager

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/cloud-assembly/assemble/internal/output"
)

// swapProject writes a project with a file droplet (data.txt) and a
// folder droplet (site/) and a secret beside it, outside the project.
func swapProject(t *testing.T) (proj, secret string) {
	t.Helper()
	dir := t.TempDir()
	proj = filepath.Join(dir, "p")
	files := map[string]string{
		"assembly.yaml": `environment: aws://123456789012/eu-west-1
droplets:
  A:
    type: file
    properties:
      file: data.txt
      bucketName: b
      objectKey: k
  B:
    type: directory
    properties:
      directory: site
      bucketName: b
`,
		"data.txt":        "public data",
		"other.txt":       "another project file",
		"site/index.html": "<h1>hi</h1>",
	}
	for name, body := range files {
		p := filepath.Join(proj, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	secret = filepath.Join(dir, "secret.txt")
	os.WriteFile(secret, []byte("SECRET"), 0o600)
	return proj, secret
}

// A file swapped for a symbolic link between the check (Load) and the
// write is never followed: outside the project the root refuses it, inside
// it is another file than the one checked. Either way nothing is written
// (issue #11, defect 5: the writer reopened files by path).
func TestBuildRefusesSwappedFile(t *testing.T) {
	for _, tt := range []struct {
		name, file string
		target     func(proj, secret string) string
	}{
		{"file to outside", "data.txt", func(_, secret string) string { return secret }},
		{"folder file to outside", "site/index.html", func(_, secret string) string { return secret }},
		{"file to another project file", "data.txt", func(proj, _ string) string { return filepath.Join(proj, "other.txt") }},
		{"folder file to another project file", "site/index.html", func(proj, _ string) string { return filepath.Join(proj, "other.txt") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			proj, secret := swapProject(t)
			plan, err := Load(proj, BuildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			victim := filepath.Join(proj, filepath.FromSlash(tt.file))
			os.Remove(victim)
			if err := os.Symlink(tt.target(proj, secret), victim); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "app.cloud")
			_, err = plan.Write(context.Background(), out, nil)
			if !errors.Is(err, ErrChanged) {
				t.Fatalf("got %v, want ErrChanged", err)
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("an output was written: %v", err)
			}
		})
	}
}

// Without a swap the same plan writes, and its Inputs hold every file the
// build read, so no output lands on one of them.
func TestBuildInputs(t *testing.T) {
	proj, _ := swapProject(t)
	plan, err := Load(proj, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"assembly.yaml", "data.txt"} {
		_, err := plan.Write(context.Background(), filepath.Join(proj, in), nil)
		if !errors.Is(err, output.ErrInput) {
			t.Errorf("-o %s: got %v, want output.ErrInput", in, err)
		}
	}
	if _, err := plan.Write(context.Background(), filepath.Join(t.TempDir(), "app.cloud"), nil); err != nil {
		t.Fatal(err)
	}
}
