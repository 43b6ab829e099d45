package cdk

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/cloud-assembly/assemble/assembly"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/map/*.txtar")

var sentinels = map[string]error{
	"ErrCloudAssembly":     ErrCloudAssembly,
	"ErrNotCopied":         ErrNotCopied,
	"ErrOutside":           ErrOutside,
	"assembly.ErrTooLarge": assembly.ErrTooLarge,
}

// A mapCase is one testdata/map archive: a cdk.out, with in its comment
// "exec: PATH" (made executable), "mkdir: PATH" (an empty folder), and for a
// failing case "class: SENTINEL" and "error: TEXT"; "want" holds the
// manifest and "warnings" the warnings of a case that maps.
type mapCase struct {
	ar            *txtar.Archive
	execs, mkdirs []string
	class         error
	err           string
}

func loadCase(t testing.TB, file string) *mapCase {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	c := &mapCase{ar: ar}
	for _, line := range strings.Split(string(ar.Comment), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "exec":
			c.execs = append(c.execs, v)
		case "mkdir":
			c.mkdirs = append(c.mkdirs, v)
		case "class":
			if c.class = sentinels[v]; c.class == nil {
				t.Fatalf("unknown class %q", v)
			}
		case "error":
			c.err = v
		}
	}
	return c
}

// write makes the cdk.out of the case in dir.
func (c *mapCase) write(t *testing.T, dir string) {
	t.Helper()
	for _, f := range c.ar.Files {
		if f.Name == "want" || f.Name == "warnings" {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range c.execs {
		if err := os.Chmod(filepath.Join(dir, e), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range c.mkdirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func (c *mapCase) section(name string) []byte {
	for _, f := range c.ar.Files {
		if f.Name == name {
			return f.Data
		}
	}
	return nil
}

func cases(t *testing.T) []string {
	files, _ := filepath.Glob(filepath.Join("testdata", "map", "*.txtar"))
	if len(files) == 0 {
		t.Fatal("no testdata/map cases")
	}
	return files
}

// TestMap maps each testdata/map case: a failing one fails with its class
// and message, one that maps gives the manifest and warnings of its want
// sections (go test -update rewrites them) and meets the rules every
// mapping meets (checkMapping).
func TestMap(t *testing.T) {
	for _, file := range cases(t) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			c := loadCase(t, file)
			dir := filepath.Join(t.TempDir(), "cdk.out")
			c.write(t, dir)
			mp, err := Map(dir)
			if c.class != nil {
				if !errors.Is(err, c.class) {
					t.Fatalf("got %v, want %v", err, c.class)
				}
				if msg := strings.ReplaceAll(err.Error(), dir, "$CDK_OUT"); !strings.Contains(msg, c.err) {
					t.Fatalf("got  %s\nwant %s", msg, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkMapping(t, dir, mp)
			got, err := mp.Manifest.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			var warns bytes.Buffer
			for _, w := range mp.Warnings {
				warns.WriteString(strings.ReplaceAll(w.String(), dir, "$CDK_OUT") + "\n")
			}
			if *update {
				var files []txtar.File
				for _, f := range c.ar.Files {
					if f.Name != "want" && f.Name != "warnings" {
						files = append(files, f)
					}
				}
				c.ar.Files = append(files, txtar.File{Name: "want", Data: got}, txtar.File{Name: "warnings", Data: warns.Bytes()})
				if err := os.WriteFile(file, txtar.Format(c.ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if want := c.section("want"); !bytes.Equal(got, want) {
				t.Errorf("manifest:\n%s\nwant:\n%s", got, want)
			}
			if want := c.section("warnings"); !bytes.Equal(warns.Bytes(), want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", warns.Bytes(), want)
			}
		})
	}
}

// checkMapping asserts what every mapping of the cdk.out at dir must meet:
// it ships every file of the folder, once, below ArchiveDir; the assembly
// passes assembly.Check as a build checks what it writes (so every path
// property names a file, or a folder holding files, it ships), and its
// manifest survives manifest.json's parser; the executables recorded are
// executable files; the size Map bounds is at most the manifest's.
func checkMapping(t *testing.T, dir string, mp *Mapping) {
	t.Helper()
	onDisk := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			onDisk[ArchiveDir+"/"+filepath.ToSlash(rel)] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	shipped := map[string]string{}
	for _, f := range mp.Files {
		if shipped[f.Name] != "" {
			t.Errorf("%s shipped twice", f.Name)
		}
		shipped[f.Name] = f.Path
		if !onDisk[f.Name] {
			t.Errorf("ships %s, which the folder does not hold", f.Name)
		}
	}
	if len(shipped) != len(onDisk) {
		t.Errorf("ships %d files, the folder holds %d", len(shipped), len(onDisk))
	}
	body, err := mp.Manifest.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// The bound Map keeps under assembly.MaxManifestSize is a lower bound:
	// it never refuses a manifest that fits.
	if mp.bound > int64(len(body)) {
		t.Errorf("Map counted %d bytes for a manifest.json of %d", mp.bound, len(body))
	}
	// The verdict a build gives on what it writes: among others, every
	// path property names a shipped file, or a folder holding some.
	files := assembly.NewFileSet()
	names := []string{assembly.ManifestName}
	files.Add(assembly.ManifestName, int64(len(body)))
	for n := range shipped {
		files.Add(n, -1)
		names = append(names, n)
	}
	// Dependency cycles (CDK artifacts that depend on each other) are
	// the build's Check to refuse, as for every project.
	if _, err := assembly.Check(body, files, assembly.CheckOptions{Writing: true}); err != nil {
		if errors.Is(err, assembly.ErrCycle) {
			return
		}
		t.Fatalf("the assembly is invalid: %v", err)
	}
	if m, err := assembly.ParseManifest(body); err != nil || len(m.Droplets) != len(mp.Manifest.Droplets) {
		t.Fatalf("manifest.json does not parse back: %v", err)
	}
	out, err := OutFiles(mp.Manifest, names)
	if err != nil {
		t.Fatalf("OutFiles: %v", err)
	}
	if len(out) != len(shipped) {
		t.Errorf("OutFiles lists %d files, %d shipped", len(out), len(shipped))
	}
	for _, f := range out {
		st, err := os.Stat(shipped[f.Name])
		if err != nil {
			t.Fatal(err)
		}
		if exec := st.Mode()&0o111 != 0; f.Executable && !exec {
			t.Errorf("%s: recorded as executable, but it is not", f.Name)
		}
	}
}

// TestMapNamesEveryMissing: a partial copy of a cdk.out fails with
// ErrNotCopied naming every file and folder its manifests name that is not
// there (a template, an asset manifest, a metadata file, a nested
// assembly, a file asset, an image's build context), not only the first.
func TestMapNamesEveryMissing(t *testing.T) {
	const env = `"environment": "aws://unknown-account/unknown-region"`
	dir := filepath.Join(t.TempDir(), "cdk.out")
	writeFiles(t, dir, map[string]string{
		"manifest.json": `{"version": "55.0.0", "artifacts": {
			"A": {"type": "aws:cloudformation:stack", ` + env + `, "properties": {"templateFile": "A.template.json"}},
			"B": {"type": "aws:cloudformation:stack", ` + env + `, "properties": {"templateFile": "t.json"}, "additionalMetadataFile": "B.metadata.json"},
			"C.assets": {"type": "cdk:asset-manifest", "properties": {"file": "C.assets.json"}},
			"S.assets": {"type": "cdk:asset-manifest", "properties": {"file": "S.assets.json"}},
			"Stage": {"type": "cdk:cloud-assembly", "properties": {"directoryName": "assembly-Stage"}}
		}}`,
		"S.assets.json": `{"version": "55.0.0",
			"files": {
				"f": {"source": {"path": "asset.f"}, "destinations": {"d": {"bucketName": "b", "objectKey": "k"}}},
				"here": {"source": {"path": "t.json"}, "destinations": {"d": {"bucketName": "b", "objectKey": "k"}}}
			},
			"dockerImages": {"i": {"source": {"directory": "asset.i"}, "destinations": {"d": {"repositoryName": "r", "imageTag": "t"}}}}}`,
		"t.json":               "{}",
		"assembly-Stage/.keep": "",
	})
	_, err := Map(dir)
	if !errors.Is(err, ErrNotCopied) {
		t.Fatalf("got %v, want ErrNotCopied", err)
	}
	var want []string
	for _, rel := range []string{"A.template.json", "B.metadata.json", "C.assets.json", "asset.f", "asset.i", "assembly-Stage/manifest.json"} {
		want = append(want, filepath.Join(dir, filepath.FromSlash(rel)))
	}
	got := absentNames(err)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("names %q, want %q", got, want)
	}
	for _, name := range want {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the message does not name %s: %v", name, err)
		}
	}
}

// TestMapEmptyFolders: empty folders are reported by their outermost
// folder only (not "x", "x/y" and "x/y/z" for one chain), the first ten by
// name and the rest counted, so a bundle full of empty folders does not
// bury the other warnings.
func TestMapEmptyFolders(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cdk.out")
	writeFiles(t, dir, map[string]string{"manifest.json": `{"version": "55.0.0", "artifacts": {}}`})
	empty := []string{"x/y/z"}
	for i := 0; i < 15; i++ {
		empty = append(empty, fmt.Sprintf("e%02d", i))
	}
	for _, e := range empty {
		if err := os.MkdirAll(filepath.Join(dir, e), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mp, err := Map(dir)
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	more := ""
	for _, w := range mp.Warnings {
		msg := strings.TrimPrefix(w.Message, dir+string(filepath.Separator))
		if name, ok := strings.CutSuffix(msg, ": an empty folder: an assembly holds files only, so extract --cdk-out does not write it"); ok {
			named = append(named, filepath.ToSlash(name))
		} else {
			more = msg
		}
	}
	if want := []string{"e00", "e01", "e02", "e03", "e04", "e05", "e06", "e07", "e08", "e09"}; !slices.Equal(named, want) {
		t.Errorf("named %q, want %q", named, want)
	}
	if !strings.Contains(more, "6 more empty folders") {
		t.Errorf("the last warning: %q, want it to count the 6 others (e10-e14 and x)", more)
	}
}
