package cdk

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusDir holds the CDK examples of the shared peer corpus (schemas and
// manifests copied from the AWS CDK repositories; see its SOURCES.md).
var corpusDir = filepath.Join("..", "..", "..", "shared", "corpus", "cdk", "examples")

// TestCorpus maps every cloud assembly of the corpus: each maps and meets
// the rules of every mapping (checkMapping), or, where the corpus did not
// copy an asset folder or template, fails with ErrNotCopied naming a path
// that is indeed absent.
func TestCorpus(t *testing.T) {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("no CDK corpus at %s (../shared is absent): %v", corpusDir, err)
	}
	var dirs []string
	err := filepath.WalkDir(corpusDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && IsCloudAssembly(p) {
			dirs = append(dirs, p)
			return fs.SkipDir // nested assemblies are mapped with their parent
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 6 {
		t.Fatalf("found %d cloud assemblies in the corpus, want at least 6", len(dirs))
	}
	mapped := 0
	for _, dir := range dirs {
		rel, _ := filepath.Rel(corpusDir, dir)
		t.Run(rel, func(t *testing.T) {
			mp, err := Map(dir)
			if errors.Is(err, ErrNotCopied) {
				// Every path it names is indeed absent.
				names := absentNames(err)
				if len(names) == 0 {
					t.Fatalf("%v: names no path", err)
				}
				for _, missing := range names {
					if !strings.HasPrefix(missing, dir+string(filepath.Separator)) {
						t.Errorf("%s is not below %s", missing, dir)
					}
					if _, serr := os.Stat(missing); !errors.Is(serr, fs.ErrNotExist) {
						t.Errorf("%v: but %s is there", err, missing)
					}
				}
				t.Logf("not copied, as the corpus says: %v", err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkMapping(t, dir, mp)
			mapped++
		})
	}
	if mapped < 4 {
		t.Errorf("%d corpus assemblies mapped, want at least 4 (the hand-written fixtures and the stage with missing context)", mapped)
	}
}

// absentNames lists the files and folders a Map error says are not there.
func absentNames(err error) []string {
	errs := []error{err}
	var pe *partialCopyError
	if errors.As(err, &pe) {
		errs = pe.errs
	}
	var names []string
	for _, e := range errs {
		var ae *absentError
		if errors.As(e, &ae) {
			names = append(names, ae.name)
		}
	}
	return names
}
