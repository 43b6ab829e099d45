package registry

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusDir is ../shared/corpus/registry-modules relative to this package.
var corpusDir = filepath.Join("..", "..", "..", "shared", "corpus", "registry-modules")

func needCorpus(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skip("corpus not available: ", corpusDir)
	}
}

const testType = "AWS::ORG::MYTYPE::MODULE" // the upstream tests' type name

// TestIndexVerdicts reproduces every fragment verdict in index.tsv and
// compares each generated schema with its golden.
func TestIndexVerdicts(t *testing.T) {
	needCorpus(t)
	f, err := os.Open(filepath.Join(corpusDir, "index.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	sc.Scan()
	var valid, invalid, pair, goldens int
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		file, verdict, exercises, expected := cols[0], cols[1], cols[2], cols[3]
		path := filepath.Join(corpusDir, filepath.FromSlash(file))
		switch {
		case strings.HasPrefix(verdict, "valid"):
			valid++
			fr, err := ReadFragment(path, DefaultLimits())
			if err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			if err := fr.Validate(DefaultLimits()); err != nil {
				t.Errorf("%s: index says %s, got %v", file, verdict, err)
			}
			const marker = "generated schema: "
			if i := strings.Index(exercises, marker); i >= 0 {
				g := exercises[i+len(marker):]
				goldens++
				want, err := os.ReadFile(filepath.Join(corpusDir, filepath.FromSlash(g)))
				if err != nil {
					t.Fatal(err)
				}
				got, err := fr.Schema(testType, DefaultLimits())
				if err != nil {
					t.Errorf("%s: schema: %v", file, err)
				} else if !bytes.Equal(got, want) {
					t.Errorf("%s: generated schema differs from %s:\n%s", file, g, got)
				}
			}
			if verdict == "valid (invalid with lowered limit)" {
				checkLoweredLimit(t, fr, file, expected)
			}
		case verdict == "invalid":
			invalid++
			_, err := Load(path, DefaultLimits())
			if err == nil {
				var fr *Fragment
				fr, err = ReadFragment(path, DefaultLimits())
				if err == nil {
					err = fr.Validate(DefaultLimits())
				}
			}
			if !errors.Is(err, ErrInvalidFragment) {
				t.Errorf("%s: index says invalid (%s), got %v", file, expected, err)
				continue
			}
			// The upstream test's substring, case-insensitively, must be in our message.
			sub, _, _ := strings.Cut(strings.TrimPrefix(expected, "upstream test asserts substring: "), " | ")
			if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(sub)) {
				t.Errorf("%s: error %q does not contain %q", file, err, sub)
			}
		case verdict == "invalid (as a pair)":
			pair++
			dir := filepath.Dir(filepath.Dir(path)) // the folder holding fragments/
			_, err := Load(dir, DefaultLimits())
			if !errors.Is(err, ErrProject) || !strings.Contains(err.Error(), "a module can only consist of a single template file, but there are 2") {
				t.Errorf("%s: got %v", dir, err)
			}
		}
	}
	t.Logf("%d valid, %d invalid, %d pair verdicts; %d goldens", valid, invalid, pair, goldens)
	if valid != 25 || invalid != 14 || pair != 2 || goldens != 19 {
		t.Errorf("index.tsv rows recognised: %d valid, %d invalid, %d pair, %d goldens; want 25, 14, 2, 19", valid, invalid, pair, goldens)
	}
}

// checkLoweredLimit re-runs the upstream tests that lower one limit to 2
// (or the file size to 300 bytes) and expect a failure.
func checkLoweredLimit(t *testing.T, fr *Fragment, file, expected string) {
	t.Helper()
	l := DefaultLimits()
	var want string
	switch {
	case strings.Contains(expected, "mapping_attribute_limit=2"):
		l.MappingAttributes, want = 2, "has 3 attributes but must not exceed the limit of 2"
	case strings.Contains(expected, "mapping_limit=2"):
		l.Mappings, want = 2, "has 3 mappings but must not exceed the limit of 2"
	case strings.Contains(expected, "output_limit=2"):
		l.Outputs, want = 2, "has 3 outputs but must not exceed the limit of 2 outputs"
	case strings.Contains(expected, "resource_limit=2"):
		l.Resources, want = 2, "has 3 resources but must not exceed the limit of 2 resources"
	case strings.Contains(expected, "template_file_size_in_bytes_limit=300"):
		l.FileSize, want = 300, "exceeds the CloudFormation template size limit"
	default:
		t.Errorf("%s: unrecognised lowered-limit row %q", file, expected)
		return
	}
	err := fr.Validate(l)
	if !errors.Is(err, ErrInvalidFragment) || !strings.Contains(err.Error(), want) {
		t.Errorf("%s with lowered limit: got %v, want %q", file, err, want)
	}
}

// TestCommunityModules loads the four published module projects, validates
// them (with their neighbours visible) and regenerates their schema.json.
func TestCommunityModules(t *testing.T) {
	needCorpus(t)
	dirs, err := filepath.Glob(filepath.Join(corpusDir, "community-registry-extensions", "modules", "*"))
	if err != nil || len(dirs) != 4 {
		t.Fatalf("found %d module projects (%v), want 4", len(dirs), err)
	}
	for _, dir := range dirs {
		m, err := Load(dir, DefaultLimits())
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		if err := m.Validate(DefaultLimits()); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
		want, err := os.ReadFile(filepath.Join(dir, "schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Fragment.Schema(m.TypeName, DefaultLimits())
		if err != nil {
			t.Errorf("%s: %v", dir, err)
		} else if !bytes.Equal(got, want) {
			t.Errorf("%s: schema differs from schema.json:\n%s", dir, got)
		}
	}
}

// TestUpstreamOpsWorksGolden: the upstream golden OpsWorksSchema.json.
func TestUpstreamOpsWorksGolden(t *testing.T) {
	needCorpus(t)
	dir := filepath.Join(corpusDir, "cloudformation-cli", "tests", "data", "sample_fragments")
	fr, err := ReadFragment(filepath.Join(dir, "OpsWorks.json"), DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	got, err := fr.Schema(testType, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, "OpsWorksSchema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimRight(got, "\n"), bytes.TrimRight(want, "\n")) {
		t.Errorf("OpsWorks schema differs from upstream golden:\n%s", got)
	}
}
