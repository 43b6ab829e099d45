package packager

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/packager/cfn"
)

// corpusDir is the peer suite of the local-modules design (see its README).
var corpusDir = filepath.Join("..", "..", "shared", "corpus", "modules")

// corpusCases says how each peer case is run. A case missing here fails the
// test, so new corpus rows are noticed; pending cases are skipped with the
// reason.
var corpusCases = map[string]struct {
	pending string   // non-empty: not implemented yet, skipped
	flags   []string // extra compare.py flags (per-case quirks, cases.tsv)
	errWant string   // for error cases: a word the message must hold
	atLine  bool     // the upstream check also wants "at line" in the message
}{
	"badref":          {errWant: "NotSet"},
	"basic":           {},
	"cond-conflict":   {errWant: "FooIsRegionUsEast1"}, // the clash the case was written for
	"cond-intrinsics": {},
	"cond-ref":        {},
	"conditional":     {},
	"constant":        {},
	"depends":         {},
	"example":         {},
	"getatt":          {},
	"mappings":        {},
	"modinmod":        {},
	"output":          {},
	"outsublist":      {},
	"policy":          {},
	"select":          {},
	"sub":             {},
	// Our Transform order is the parent's first, which is also the
	// expectation's order: no --ignore-list-order needed.
	"transform":    {},
	"type":         {},
	"rain-default": {},

	"flatten":         {},
	"flatten-basic":   {},
	"flatten-foreach": {},
	// Quoted account ids come out as integers in the expectation (cases.tsv):
	// we keep strings as strings, so compare scalars as text.
	"flatten-transform":        {flags: []string{"--loose-scalars"}},
	"fnforeach":                {},
	"foreach":                  {},
	"getatt-map":               {},
	"getatt-map-sub":           {},
	"getatt-notation":          {},
	"insertfile":               {},
	"invalid-parameter-schema": {errWant: "Username", atLine: true},
	"invalid-parameter-type":   {errWant: "Number", atLine: true},
	"invoke":                   {},
	"merge":                    {},
	"module-resource-foreach":  {},
	"parameter-schema":         {},
	"parameter-schema-invalid": {errWant: "Subnets[0].Type"},
	"resource-foreach":         {},
	"zip":                      {},
}

// TestCorpus runs the peer cases of ../shared/corpus/modules and compares
// the output with the expectation as data, with the suite's compare.py
// (--strip-tool-metadata).
func TestCorpus(t *testing.T) {
	if _, err := os.Stat(filepath.Join(corpusDir, "cases.tsv")); err != nil {
		t.Skip("peer corpus not present:", err)
	}
	python, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(python, "-c", "import yaml").Run()
	}
	if err != nil {
		t.Skip("python3 with PyYAML is needed to run compare.py:", err)
	}
	f, err := os.Open(filepath.Join(corpusDir, "cases.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	seen := 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 3 {
			continue
		}
		name, tmpl, expect := cols[0], cols[1], cols[2]
		seen++
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, ok := corpusCases[name]
			if !ok {
				t.Fatalf("corpus case %s is not in corpusCases", name)
			}
			if c.pending != "" {
				t.Skip(c.pending)
			}
			out, err := PackageTemplate(filepath.Join(corpusDir, tmpl), PackageOptions{NoSourceMap: true})
			if strings.HasPrefix(expect, "ERROR") {
				if err == nil {
					t.Fatalf("packaged without error; the case expects %s", expect)
				}
				var ce *cfn.Error
				if !errors.As(err, &ce) || ce.Line == 0 {
					t.Errorf("error %v carries no line", err)
				}
				if !strings.Contains(err.Error(), c.errWant) || (c.atLine && !strings.Contains(err.Error(), "at line")) {
					t.Errorf("error %q does not mention %q", err, c.errWant)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := filepath.Join(t.TempDir(), "got.yaml")
			if err := os.WriteFile(got, out, 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{filepath.Join(corpusDir, "compare.py"), "--strip-tool-metadata"}, c.flags...)
			args = append(args, filepath.Join(corpusDir, expect), got)
			if diff, err := exec.Command(python, args...).CombinedOutput(); err != nil {
				t.Errorf("compare.py: %v\n%s\noutput:\n%s", err, diff, out)
			}
		})
	}
	if seen == 0 {
		t.Fatal("cases.tsv lists no cases")
	}
}
