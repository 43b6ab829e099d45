package blueprint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureWant is what a fixture's header comments ask for: "# want: valid"
// with "# packaged: TEXT" lines the packaged blueprint must hold (\n for a
// line break), or one "# want: CODE LINE:COL MESSAGE" line per error.
type fixtureWant struct {
	valid    bool
	packaged []string
	errs     []string // "code line:col message"
}

func readFixtureWant(t *testing.T, path string) fixtureWant {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var w fixtureWant
	for _, line := range strings.Split(string(src), "\n") {
		if v, ok := strings.CutPrefix(line, "# want: "); ok {
			if v == "valid" {
				w.valid = true
			} else {
				w.errs = append(w.errs, v)
			}
		}
		if v, ok := strings.CutPrefix(line, "# packaged: "); ok {
			w.packaged = append(w.packaged, strings.ReplaceAll(v, `\n`, "\n"))
		}
	}
	if w.valid == (len(w.errs) > 0) {
		t.Fatalf("%s: want either \"# want: valid\" or error lines", path)
	}
	return w
}

// TestFixtures checks the blueprints in fixtures/blueprints: validation and
// packaging give one verdict, the errors come at their places, and valid
// ones package to what their header says and validate again.
func TestFixtures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "fixtures", "blueprints", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no fixtures in fixtures/blueprints")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := readFixtureWant(t, path)
			opts := Options{Cwd: filepath.Dir(path)}
			_, err := Load(path, opts)
			p, perr := Package(path, opts)
			if !want.valid {
				var list ErrorList
				if !errors.As(err, &list) {
					t.Fatalf("want errors %q, got %v", want.errs, err)
				}
				var got []string
				for _, e := range list {
					got = append(got, fmt.Sprintf("%s %d:%d %s", Code(e), e.Line, e.Column, e.Msg))
				}
				if len(got) != len(want.errs) {
					t.Fatalf("got %d errors, want %d:\n%s", len(got), len(want.errs), strings.Join(got, "\n"))
				}
				for i, e := range list {
					code, rest, _ := strings.Cut(want.errs[i], " ")
					place, msg, _ := strings.Cut(rest, " ")
					if Code(e) != code || fmt.Sprintf("%d:%d", e.Line, e.Column) != place || !strings.Contains(e.Msg, msg) {
						t.Errorf("error %d:\n got  %s\n want %s", i, got[i], want.errs[i])
					}
				}
				if perr == nil || perr.Error() != err.Error() {
					t.Fatalf("Package gave %v, want the error Load gave", perr)
				}
				return
			}
			if err != nil || perr != nil {
				t.Fatalf("want valid; Load: %v; Package: %v", err, perr)
			}
			out := string(p.Files[p.Main])
			for _, s := range want.packaged {
				if !strings.Contains(out, s) {
					t.Errorf("packaged blueprint lacks %q:\n%s", s, out)
				}
			}
			if _, err := Load(writePackaged(t, p), Options{}); err != nil {
				t.Fatalf("packaged form does not validate: %v", err)
			}
		})
	}
}
