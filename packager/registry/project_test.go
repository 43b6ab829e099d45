package registry

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

func TestNesting(t *testing.T) {
	tests := []struct {
		dir, want string
	}{
		{"deep/a", "modules nest 4 levels deep (Test::Deep::AA::MODULE -> Test::Deep::BB::MODULE -> Test::Deep::CC::MODULE -> Test::Deep::DD::MODULE); at most 3 are allowed"},
		{"deep/b", ""},
		{"cycle/x", "circular module dependency: Test::Cycle::XX::MODULE -> Test::Cycle::YY::MODULE -> Test::Cycle::XX::MODULE"},
		{"cycle/y", "circular module dependency: Test::Cycle::YY::MODULE -> Test::Cycle::XX::MODULE -> Test::Cycle::YY::MODULE"},
		{"ok/p", ""},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			m, err := Load(filepath.Join("testdata", tt.dir), DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			err = m.Validate(DefaultLimits())
			if tt.want == "" {
				if err != nil {
					t.Fatalf("got %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidFragment) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestLayout(t *testing.T) {
	tests := []struct {
		dir  string
		is   error
		want string
	}{
		{"badname", ErrTypeName, `"Bad::Name" must look like Org::Service::Name::MODULE`},
		{"resource", ErrProject, `artifact_type is "RESOURCE", not MODULE`},
		{"nofragments", ErrProject, "fragments does not exist"},
		{"empty", ErrProject, "no module fragment files found"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", "layout", tt.dir), DefaultLimits())
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %v %q", err, tt.is, tt.want)
			}
		})
	}
}

// QA: a missing path says what Load wants, not "stat x: no such file".
func TestLoadMissing(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), DefaultLimits())
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("got %v, want fs.ErrNotExist", err)
	}
	if !strings.Contains(err.Error(), "nope.yaml: file does not exist: name a fragment file or a module project folder") {
		t.Errorf("message lacks the fix: %v", err)
	}
}
