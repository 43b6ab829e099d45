package cfn

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// memSources serves the files of a txtar archive.
type memSources map[string][]byte

func (m memSources) Load(from, src, hash string) (string, []byte, error) {
	name := src
	if from != "" {
		name = path.Clean(path.Join(path.Dir(from), src))
	}
	b, ok := m[name]
	if !ok {
		return "", nil, fmt.Errorf("%w: %s does not exist", ErrInvalid, name)
	}
	return name, b, nil
}

func (m memSources) AddPackage(from, alias, src, hash string) error {
	return fmt.Errorf("%w: packages are not served here", ErrInvalid)
}

// FuzzPackage expands fuzzed templates against the modules of the golden
// cases: it never panics, every error is an *Error wrapping one of our
// sentinels, and every result can be written and read back.
func FuzzPackage(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "expand", "*.txtar"))
	mods := memSources{}
	seeds := 0
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, x := range ar.Files {
			if x.Name == "want" || strings.HasPrefix(x.Name, "outside/") {
				continue
			}
			if x.Name == "template.yaml" {
				f.Add(x.Data)
				seeds++
				continue
			}
			mods[x.Name] = x.Data // later archives win; any module will do
		}
	}
	if seeds == 0 {
		f.Fatal("no seeds: packager/testdata/expand is empty")
	}
	sentinels := []error{ErrSyntax, ErrInvalid, ErrMissingParameter, ErrUnknownParameter, ErrCycle, ErrNameClash, ErrOutsideRoot, ErrTooLarge, ErrDangling, ErrNoArtifacts}
	f.Fuzz(func(t *testing.T, data []byte) {
		srcs := memSources{"template.yaml": data}
		for k, v := range mods {
			srcs[k] = v
		}
		out, err := Package("template.yaml", Options{Sources: srcs})
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error is not an *Error: %#v", err)
			}
			for _, s := range sentinels {
				if errors.Is(err, s) {
					return
				}
			}
			t.Fatalf("error wraps no sentinel: %v", err)
		}
		y, err := EncodeYAML(out.Root)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse("again.yaml", y)
		if err != nil {
			t.Fatalf("packaged output does not read back: %v\n%s", err, y)
		}
		if !equal(out.Root, again.Root) {
			t.Fatalf("packaged output changed when read back:\n%s", y)
		}
	})
}
