// Package sam runs the AWS SAM transform (aws-sam-translator, the library
// CloudFormation runs for AWS::Serverless-2016-10-31) on templates, for
// tests that check that what assemble writes deploys as SAM reads it.
//
// It runs in the first python3 on PATH that imports samtranslator (pip's
// cfn-lint brings it; this machine image's Python has aws-sam-translator
// 1.110.0). Where there is none, the tests that need it skip, saying why.
//
// The transform's limits that tests must know: it runs with the parameter
// values given (as CloudFormation passes the stack's), with no managed
// policy lookups (templates under test name none), and it does not read
// S3: a Location or CodeUri is checked for its form, not fetched.
package sam

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	once   sync.Once
	python string
	why    string
)

// find looks for a python3 that imports samtranslator, in PATH order.
func find() {
	seen := map[string]bool{}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		p := filepath.Join(dir, "python3")
		if seen[p] {
			continue
		}
		seen[p] = true
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			continue
		}
		if exec.Command(p, "-c", "import samtranslator").Run() == nil {
			python = p
			return
		}
	}
	why = "no python3 on PATH imports samtranslator (aws-sam-translator; pip install cfn-lint brings it)"
}

// Python returns the python3 that runs the transform, or skips the test.
func Python(t testing.TB) string {
	t.Helper()
	once.Do(find)
	if python == "" {
		if os.Getenv("ASSEMBLE_REQUIRE_SAM") != "" {
			t.Fatalf("sam: %s (ASSEMBLE_REQUIRE_SAM is set)", why)
		}
		t.Skipf("sam: %s", why)
	}
	return python
}

// driver transforms each template of a JSON list [{template, parameters}]
// and prints a list of {template} or {error}.
const driver = `
import json, os, sys
# The transform asks boto for the region (AWS::Region); CloudFormation
# runs it in the stack's.
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
from samtranslator.translator.transform import transform
from samtranslator.model.exceptions import InvalidDocumentException

class NoPolicies:
    def load(self):
        return {}

out = []
for job in json.load(sys.stdin):
    try:
        out.append({"template": transform(job["template"], job.get("parameters") or {}, NoPolicies())})
    except InvalidDocumentException as e:
        out.append({"error": "; ".join(c.message for c in e.causes)})
    except Exception as e:
        out.append({"error": "%s: %s" % (type(e).__name__, e)})
json.dump(out, sys.stdout)
`

// A Job is one template to transform (JSON) with its parameter values.
type Job struct {
	Template   json.RawMessage   `json:"template"`
	Parameters map[string]string `json:"parameters,omitempty"`
}

// A Result is the transformed template, or the transform's error (the
// causes it lists, as CloudFormation reports them).
type Result struct {
	Template map[string]any `json:"template"`
	Error    string         `json:"error"`
}

// Transform runs the SAM transform on every job in one python3 process and
// returns one result each, in order. It skips the test where the
// transform is not installed.
func Transform(t testing.TB, jobs ...Job) []Result {
	t.Helper()
	py := Python(t)
	in, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", driver)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sam transform: %v\n%s", err, stderr.Bytes())
	}
	var res []Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("sam transform: %v", err)
	}
	if len(res) != len(jobs) {
		t.Fatalf("sam transform: %d results for %d templates", len(res), len(jobs))
	}
	return res
}
