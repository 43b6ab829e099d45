package trust

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/provenance"
)

// The summary names what passed and the rule that refused; with nothing
// authenticated there is none.
func TestResultSummary(t *testing.T) {
	b := provenanceAssembly(t, provenance.Options{FinishedOn: time.Now().Add(-time.Hour)})
	verify := func(section string) (*Result, error) {
		tr := load(t, Options{PolicyFile: writePolicy(t, section)})
		return Verify(context.Background(), "dir/a.cloud", bytes.NewReader(b), int64(len(b)), tr, VerifyOptions{})
	}
	res, err := verify("provenance: {}\n")
	if err != nil {
		t.Fatal(err)
	}
	s, ok := res.Summary(nil)
	if !ok || s.Name != "a.cloud" || s.ResourceURI != "dir/a.cloud" || s.File != digest.Of(b) || s.Failed != "" {
		t.Fatalf("passed: %+v %v", s, ok)
	}
	if s.Passed[0] != "signatures" || !slices.Contains(s.Passed, provenance.RulePresent) || len(s.Inputs) != 2 ||
		s.Inputs[0].URI != assembly.SignatureName || s.Inputs[1].URI != provenance.EntryName {
		t.Errorf("passed %v, inputs %+v", s.Passed, s.Inputs)
	}
	res, err = verify("provenance:\n  repositories: ['https://github.com/*/*']\n")
	var re *provenance.RuleError
	if !errors.As(err, &re) {
		t.Fatalf("refusal: %v", err)
	}
	if s, ok := res.Summary(err); !ok || s.Failed != re.Rule || slices.Contains(s.Passed, re.Rule) {
		t.Errorf("refused: %+v %v", s, ok)
	}

	u := unsignedAssembly(t)
	res, err = Verify(context.Background(), "u.cloud", bytes.NewReader(u), int64(len(u)), nil, VerifyOptions{AllowUnsigned: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Summary(nil); ok {
		t.Error("an unsigned assembly has a summary")
	}
	if _, ok := (*Result)(nil).Summary(errors.New("unreadable")); ok {
		t.Error("nothing read has a summary")
	}
}
