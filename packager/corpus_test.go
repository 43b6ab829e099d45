package packager

import (
	"bufio"
	"bytes"
	"encoding/json"
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
// (--strip-tool-metadata), all in one python3 process.
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
	outDir := t.TempDir()
	var jobs []compareJob
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
			got := filepath.Join(outDir, name+".yaml")
			if err := os.WriteFile(got, out, 0o644); err != nil {
				t.Fatal(err)
			}
			args := append([]string{"--strip-tool-metadata"}, c.flags...)
			args = append(args, filepath.Join(corpusDir, expect), got)
			jobs = append(jobs, compareJob{Name: name, Args: args})
		})
	}
	if seen == 0 {
		t.Fatal("cases.tsv lists no cases")
	}
	// One python3 process compares every output (compare.py's main per job).
	in, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, "-c", compareDriver, corpusDir)
	cmd.Stdin = bytes.NewReader(in)
	res, err := cmd.Output()
	if err != nil {
		t.Fatalf("compare driver: %v", err)
	}
	var results []struct {
		Name, Output string
		Code         int
	}
	if err := json.Unmarshal(res, &results); err != nil || len(results) != len(jobs) {
		t.Fatalf("compare driver output (%d results for %d jobs): %v\n%s", len(results), len(jobs), err, res)
	}
	for _, r := range results {
		if r.Code != 0 {
			t.Errorf("corpus case %s differs from its expectation (compare.py exit %d):\n%s", r.Name, r.Code, r.Output)
		}
	}
}

type compareJob struct {
	Name string
	Args []string
}

// compareDriver runs compare.py's main on each job read from standard input
// and prints the exit codes and outputs as JSON.
const compareDriver = `
import contextlib, io, json, sys
sys.path.insert(0, sys.argv[1])
import compare
out = []
for job in json.load(sys.stdin):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        code = compare.main(job["Args"])
    out.append({"Name": job["Name"], "Code": code, "Output": buf.getvalue()})
json.dump(out, sys.stdout)
`
