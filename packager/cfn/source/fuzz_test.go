package source

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var sentinels = []error{ErrBadSource, ErrNotFound, ErrOutsideRoot, ErrOutsidePackage, ErrUnknownPackage,
	ErrBadPackage, ErrTooLarge, ErrBadHash, ErrHashMismatch, ErrNoCredentials, ErrUnsupportedScheme, ErrFetch}

func classified(err error) bool {
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

type noNetwork struct{}

func (noNetwork) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("no network in fuzzing")
}

// FuzzResolve checks the containment property for any Source string, from
// a project file and from a package entry: either a classified error, or a
// file inside the project folder or inside the package.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"./modules/a.yaml", "../outside.yaml", "../../outside.yaml", "$abc/mods/a.yaml",
		"$abc/../x", "link.yaml", "/etc/passwd", "s3://b/k", "https://example.com/a", "sub/b.yaml", "..", "$abc/b.yaml", "./../modules/./a.yaml"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, source string, fromPackage bool) {
		r, top, root := project(t, &Options{Client: &http.Client{Transport: noNetwork{}}})
		writeZip(t, filepath.Join(root, "pkg.zip"), []entry{{name: "mods/a.yaml", content: "PA"}, {name: "b.yaml", content: "PB"}})
		if err := r.AddPackage(top, "abc", "pkg.zip", ""); err != nil {
			t.Fatal(err)
		}
		from := top
		if fromPackage {
			from = Location{Kind: PackageEntry, Package: "abc", Path: "mods/a.yaml"}
		}
		_, loc, err := r.Resolve(ctx, from, source, "")
		if err != nil {
			if !classified(err) {
				t.Fatalf("unclassified error for %q: %v", source, err)
			}
			return
		}
		switch loc.Kind {
		case File:
			real, err := filepath.EvalSymlinks(loc.Path)
			if err != nil {
				t.Fatal(err)
			}
			realRoot, _ := filepath.EvalSymlinks(root)
			rel, err := filepath.Rel(realRoot, real)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
				t.Fatalf("%q read %s, outside the project", source, real)
			}
			if _, err := os.Stat(real); err != nil {
				t.Fatal(err)
			}
		case PackageEntry:
			if loc.Path != "mods/a.yaml" && loc.Path != "b.yaml" && loc.Path != "pkg.zip" {
				t.Fatalf("%q read package entry %q", source, loc.Path)
			}
		default:
			t.Fatalf("%q gave location %+v without network", source, loc)
		}
	})
}

// FuzzPackage feeds arbitrary bytes as a package zip: a classified error,
// or only safe entry names.
func FuzzPackage(f *testing.F) {
	f.Add(writeZip(f, "", []entry{{name: "a.yaml", content: "x"}}))
	f.Add(writeZip(f, "", []entry{{name: "../a.yaml", content: "x"}}))
	f.Add(writeZip(f, "", []entry{{name: "d/", dir: true}, {name: "d/a.yaml", content: "x"}}))
	if b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "shared", "corpus", "modules", "aws-cli", "package.zip")); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := New(t.TempDir(), &Options{MaxPackageFiles: 64})
		if err != nil {
			t.Fatal(err)
		}
		files, err := r.openZip(b, "p", "p.zip")
		if err != nil {
			if !classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		for name := range files {
			if strings.HasPrefix(name, "/") || strings.Contains(name, "..") || strings.Contains(name, `\`) || strings.HasSuffix(name, "/") {
				t.Fatalf("unsafe entry %q accepted", name)
			}
		}
	})
}
