package packager

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/packager/cdk"
)

// writeCDKOut writes the cdk.out of packager/cdk's richest mapping case to
// dir, with its executable files.
func writeCDKOut(t *testing.T, dir string) {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("cdk", "testdata", "map", "app.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var files []txtar.File
	for _, f := range ar.Files {
		if f.Name != "want" && f.Name != "warnings" {
			files = append(files, f)
		}
	}
	writeArchive(t, dir, &txtar.Archive{Files: files})
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		if p, ok := strings.CutPrefix(line, "exec: "); ok {
			if err := os.Chmod(filepath.Join(dir, p), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestBuildCDKOut builds a cdk.out: the archive holds every file of the
// folder byte for byte below cdk.out/, its manifest's paths name files of
// the archive, and the same folder elsewhere, with other file times, or
// named through its CDK app folder or its manifest.json, builds the same
// bytes.
func TestBuildCDKOut(t *testing.T) {
	base := t.TempDir()
	first := filepath.Join(base, "one", "cdk.out")
	writeCDKOut(t, first)
	out := filepath.Join(base, "first.cloud")
	plan, err := Build(context.Background(), first, out, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := assembly.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := rc.Check(assembly.CheckOptions{Writing: true}); err != nil {
		t.Fatalf("the assembly is invalid: %v", err)
	}
	n := 0
	err = filepath.WalkDir(first, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(first, p)
		name := cdk.ArchiveDir + "/" + filepath.ToSlash(rel)
		f := rc.File(name)
		if f == nil {
			t.Errorf("%s is not in the archive", name)
			return nil
		}
		r, err := f.Open()
		if err != nil {
			return err
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return err
		}
		disk, _ := os.ReadFile(p)
		if !bytes.Equal(got, disk) {
			t.Errorf("%s differs from %s", name, p)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rc.Files()) != n+2 || len(plan.Files()) != n+2 {
		t.Errorf("archive holds %d files, plan %d, the folder %d (+ manifest.json and provenance.intoto.json)", len(rc.Files()), len(plan.Files()), n)
	}

	// The same folder at another path, touched, built through the app
	// folder (cdk.json) and through its manifest.json.
	app := filepath.Join(base, "elsewhere", "app")
	second := filepath.Join(app, "cdk.out")
	writeCDKOut(t, second)
	later := time.Now().Add(time.Hour)
	filepath.WalkDir(second, func(p string, d os.DirEntry, err error) error {
		return os.Chtimes(p, later, later)
	})
	if err := os.WriteFile(filepath.Join(app, "cdk.json"), []byte(`{"app": "node app.js"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, target := range []string{first, second, app, filepath.Join(second, "manifest.json")} {
		again := filepath.Join(base, "again.cloud")
		if _, err := Build(context.Background(), target, again, BuildOptions{}); err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		got, _ := os.ReadFile(again)
		if !bytes.Equal(got, want) {
			t.Errorf("build %d of %s differs from the first", i, target)
		}
	}
}

// TestBuildCDKOutChoices: --strict refuses CDK's missing context; an
// assembly.yaml beside a cdk.out wins; the output may not land in the
// cdk.out it ships.
func TestBuildCDKOutChoices(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "cdk.out")
	writeCDKOut(t, dir)
	_, err := Build(context.Background(), dir, filepath.Join(base, "x.cloud"), BuildOptions{Strict: true})
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), `"ssm:param" (ssm)`) {
		t.Errorf("strict: got %v, want ErrMissing naming the context keys", err)
	}
	_, err = Build(context.Background(), dir, filepath.Join(dir, "x.cloud"), BuildOptions{})
	if !errors.Is(err, ErrProject) {
		t.Errorf("output inside the cdk.out: got %v, want ErrProject", err)
	}
	writeArchive(t, base, &txtar.Archive{Files: []txtar.File{
		{Name: "assembly.yaml", Data: []byte("environment: aws://123456789012/eu-west-1\ndroplets:\n  F:\n    type: file\n    properties: {file: f.txt, bucketName: b, objectKey: k}\n")},
		{Name: "f.txt", Data: []byte("x")},
	}})
	plan, err := Load(base, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Manifest.Droplets) != 1 || plan.Manifest.Droplets["F"] == nil {
		t.Errorf("assembly.yaml beside cdk.out: got droplets %v", plan.Manifest.IDs())
	}
}

// TestBuildCDKOutCycles: CDK artifacts whose dependencies form a cycle,
// an artifact depending on itself included, build no assembly: the
// droplets made from them would depend on each other, which the spec
// forbids (assembly.ErrCycle).
func TestBuildCDKOutCycles(t *testing.T) {
	stack := func(id string, deps ...string) string {
		d, _ := json.Marshal(deps)
		return fmt.Sprintf(`%q: {"type": "aws:cloudformation:stack", "environment": "aws://unknown-account/unknown-region", "properties": {"templateFile": "t.json"}, "dependencies": %s}`, id, d)
	}
	tests := map[string][]string{
		"self":          {stack("A", "A")},
		"two":           {stack("A", "B"), stack("B", "A")},
		"three":         {stack("A", "B"), stack("B", "C"), stack("C", "A")},
		"through asset": {stack("A", "A.assets"), `"A.assets": {"type": "cdk:asset-manifest", "properties": {"file": "A.assets.json"}, "dependencies": ["A"]}`},
	}
	for name, arts := range tests {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			writeArchive(t, filepath.Join(base, "cdk.out"), &txtar.Archive{Files: []txtar.File{
				{Name: "manifest.json", Data: []byte(`{"version": "55.0.0", "artifacts": {` + strings.Join(arts, ", ") + `}}`)},
				{Name: "A.assets.json", Data: []byte(`{"version": "55.0.0", "files": {"f": {"source": {"path": "t.json"}, "destinations": {"d": {"bucketName": "b", "objectKey": "k"}}}}}`)},
				{Name: "t.json", Data: []byte("{}")},
			}})
			out := filepath.Join(base, "x.cloud")
			_, err := Build(context.Background(), filepath.Join(base, "cdk.out"), out, BuildOptions{})
			if !errors.Is(err, assembly.ErrCycle) {
				t.Fatalf("got %v, want ErrCycle", err)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s written", out)
			}
		})
	}
}

// TestBuildCDKOutTooLarge: a CDK manifest.json too large to read, named by
// its folder, itself or the CDK app folder, is refused as too large, not
// read as another kind of project.
func TestBuildCDKOutTooLarge(t *testing.T) {
	base := t.TempDir()
	app := filepath.Join(base, "app")
	manifest := filepath.Join(app, "cdk.out", "manifest.json")
	writeArchive(t, app, &txtar.Archive{Files: []txtar.File{
		{Name: "cdk.json", Data: []byte(`{"app": "node app.js"}`)},
		{Name: "cdk.out/manifest.json", Data: []byte(`{"version": "55.0.0", "artifacts": {}}`)},
	}})
	if err := os.Truncate(manifest, assembly.MaxManifestSize+1); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{app, filepath.Dir(manifest), manifest} {
		if _, err := Load(target, BuildOptions{}); !errors.Is(err, assembly.ErrTooLarge) {
			t.Errorf("%s: got %v, want ErrTooLarge", target, err)
		}
	}
}

// TestBuildCDKCorpus builds every cloud assembly of the peer corpus's CDK
// examples, as `assemble build` does: each builds, twice to the same bytes,
// into an assembly that passes Check; or, where the corpus did not copy its
// asset folders or templates, fails with cdk.ErrNotCopied (TestCorpus in
// package cdk checks the message names a path that is indeed absent).
func TestBuildCDKCorpus(t *testing.T) {
	corpus := filepath.Join("..", "..", "shared", "corpus", "cdk", "examples")
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("no CDK corpus at %s (../shared is absent): %v", corpus, err)
	}
	var dirs []string
	filepath.WalkDir(corpus, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && cdk.IsCloudAssembly(p) {
			dirs = append(dirs, p)
			return filepath.SkipDir
		}
		return err
	})
	built := 0
	for _, dir := range dirs {
		rel, _ := filepath.Rel(corpus, dir)
		t.Run(rel, func(t *testing.T) {
			var first []byte
			for i := 0; i < 2; i++ {
				out := filepath.Join(t.TempDir(), "c.cloud")
				_, err := Build(context.Background(), dir, out, BuildOptions{})
				if errors.Is(err, cdk.ErrNotCopied) {
					t.Logf("not copied, as the corpus says: %v", err)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if i == 1 && !bytes.Equal(b, first) {
					t.Fatal("two builds differ")
				}
				first = b
				rc, err := assembly.Open(out)
				if err != nil {
					t.Fatal(err)
				}
				_, err = rc.Check(assembly.CheckOptions{})
				rc.Close()
				if err != nil {
					t.Fatalf("the assembly is invalid: %v", err)
				}
			}
			built++
		})
	}
	if len(dirs) < 6 || built < 4 {
		t.Errorf("%d corpus assemblies, %d built; want at least 6 and 4", len(dirs), built)
	}
}
