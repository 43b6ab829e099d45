package blueprint

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusDir is the reference implementation's fixtures (see
// ../shared/corpus/blueprints/PROVENANCE.md).
var corpusDir = filepath.Join("..", "..", "..", "shared", "corpus", "blueprints")

// excluded depend on the reference implementation's provider registry or
// link machinery (issue 7).
var excluded = map[string]bool{
	"missing-transform-blueprint.yml":    true,
	"unsupported-var-type-blueprint.yml": true,
	"expanded-fail-blueprint.yml":        true,
}

// expectedClass maps index.tsv's expected_error to our error classes.
func expectedClass(expected string) error {
	switch {
	case strings.Contains(expected, "blueprint_cycle_detected"):
		return ErrIncludeCycle
	case strings.Contains(expected, "max_blueprint_depth_exceeded"):
		return ErrIncludeDepth
	case strings.Contains(expected, "reference_cycle"), strings.Contains(expected, "circular_links"):
		return ErrReferenceCycle
	case strings.Contains(expected, "each_resource_dependency"), strings.Contains(expected, "each_child_dependency"), strings.Contains(expected, "disallowed_element_type"):
		return ErrEachDependency
	case strings.Contains(expected, "resource_each_invalid_type"):
		return ErrEachType
	case strings.Contains(expected, "YAML parse error"):
		return ErrSyntax
	case strings.Contains(expected, "errMissingValueContent"):
		return ErrSchema
	}
	return nil
}

// cwdFor is the folder holding __testdata: include paths written as
// ${cwd()}/__testdata/... resolve from there.
func cwdFor(path string) string {
	if i := strings.Index(path, string(filepath.Separator)+"__testdata"+string(filepath.Separator)); i >= 0 {
		return path[:i]
	}
	return filepath.Dir(path)
}

type corpusCase struct{ file, validity, expected string }

func readIndex(t *testing.T) []corpusCase {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "index.tsv"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			t.Skipf("corpus not present: %v", err)
		}
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for first := true; sc.Scan(); first = false {
		if first {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 4 {
			continue
		}
		out = append(out, corpusCase{cols[0], cols[1], cols[3]})
	}
	return out
}

func TestCorpusVerdicts(t *testing.T) {
	cases := readIndex(t)
	var checked, skipped int
	for _, tc := range cases {
		switch tc.validity {
		case "valid", "valid (alone)", "invalid", "invalid-at-runtime":
		default:
			continue
		}
		if excluded[filepath.Base(tc.file)] {
			skipped++
			continue
		}
		checked++
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(corpusDir, filepath.FromSlash(tc.file))
			_, err := Load(path, Options{Cwd: cwdFor(path)})
			if strings.HasPrefix(tc.validity, "valid") {
				if err != nil {
					t.Fatalf("want valid, got:\n%v", err)
				}
				return
			}
			want := expectedClass(tc.expected)
			if want == nil {
				t.Fatalf("no error class for expected %q", tc.expected)
			}
			if !errors.Is(err, want) {
				t.Fatalf("want %v, got:\n%v", want, err)
			}
		})
	}
	t.Logf("checked %d verdicts, skipped %d excluded", checked, skipped)
	if checked != 46 {
		t.Errorf("checked %d verdicts, want 46", checked)
	}
}

// fragmentKind maps a fragment's schema/__testdata folder to its kind.
var fragmentKind = map[string]string{
	"conditions":        FragmentCondition,
	"datasourcefields":  FragmentDataSourceExport,
	"datasourcefilters": FragmentDataSourceFilter,
	"exports":           FragmentExport,
	"transform":         FragmentTransform,
	"values":            FragmentValue,
	"variables":         FragmentVariable,
}

func TestCorpusFragments(t *testing.T) {
	checked := 0
	for _, tc := range readIndex(t) {
		if tc.validity != "valid-fragment" && tc.validity != "invalid-fragment" {
			continue
		}
		kind := fragmentKind[filepath.Base(filepath.Dir(tc.file))]
		checked++
		t.Run(tc.file, func(t *testing.T) {
			if kind == "" {
				t.Fatalf("no fragment kind for %s", tc.file)
			}
			err := CheckFragment(kind, filepath.Join(corpusDir, filepath.FromSlash(tc.file)))
			if tc.validity == "valid-fragment" {
				if err != nil {
					t.Fatalf("want valid, got:\n%v", err)
				}
				return
			}
			if !errors.Is(err, ErrSchema) {
				t.Fatalf("want %v, got:\n%v", ErrSchema, err)
			}
		})
	}
	if checked != 28 {
		t.Errorf("checked %d fragments, want 28", checked)
	}
}
