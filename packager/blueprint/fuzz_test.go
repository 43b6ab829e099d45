package blueprint

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad checks that any input either loads, packages (validation and
// packaging agree), and packages to a blueprint that loads again, or fails with an ErrorList whose every entry
// wraps one of the package's error classes. It never panics.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "fuzz-seeds", "*"))
	if len(seeds) == 0 {
		f.Fatal("no seeds in testdata/fuzz-seeds")
	}
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, filepath.Ext(s) == ".json")
	}
	f.Fuzz(func(t *testing.T, src []byte, isJSON bool) {
		dir := t.TempDir()
		name := "bp.yaml"
		if isJSON {
			name = "bp.json"
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, src, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, Options{Cwd: dir, Root: dir})
		if err != nil {
			checkClasses(t, err)
			return
		}
		p, err := Package(path, Options{Cwd: dir, Root: dir})
		if err != nil {
			// Validation evaluates what packaging evaluates (issue 15).
			t.Fatalf("loads but does not package: %v", err)
		}
		out := filepath.Join(t.TempDir(), p.Main)
		if err := os.WriteFile(out, p.Files[p.Main], 0o644); err != nil {
			t.Fatal(err)
		}
		if len(p.Names) == 1 {
			if _, err := Load(out, Options{Cwd: filepath.Dir(out)}); err != nil {
				t.Fatalf("packaged form does not load:\n%v\n%s", err, p.Files[p.Main])
			}
		}
	})
}

func checkClasses(t *testing.T, err error) {
	t.Helper()
	var list ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		t.Fatalf("error %v is not an ErrorList", err)
	}
	for _, e := range list {
		if Code(e) == "" {
			t.Fatalf("error %v wraps no class", e)
		}
	}
}
