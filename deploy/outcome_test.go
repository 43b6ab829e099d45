package deploy

import (
	"errors"
	"testing"
)

// A pair's outcome is read off its droplets' and its own error, the one
// rule both the CLI's text and its --json print.
func TestResultOutcome(t *testing.T) {
	boom := errors.New("boom")
	res := func(plan bool, err string, order []string, outs ...Outcome) *Result {
		r := &Result{Plan: plan, Error: err, Order: order}
		for _, o := range outs {
			d := &DropletResult{Outcome: o}
			if o == Failed {
				d.Err = boom
			}
			r.Droplets = append(r.Droplets, d)
		}
		return r
	}
	ab := []string{"A", "B"}
	for _, c := range []struct {
		name string
		r    *Result
		want Outcome
	}{
		{"all deployed", res(false, "", ab, Created, Unchanged), Deployed},
		{"nothing to do", res(false, "", nil), Deployed},
		{"one failed", res(false, "", ab, Created, Failed), Failed},
		{"interrupted", res(false, "", ab, Interrupted, NotStarted), Failed},
		{"refused before start", res(false, "wrong account", ab, NotStarted, NotStarted), NotStarted},
		{"stopped by max-failures", res(false, "", ab, NotStarted, NotStarted), NotStarted},
		{"error after a start", res(false, "staging failed", ab, Uploaded, NotStarted), Failed},
		{"excluded only", res(false, "", ab, Excluded, Excluded), NotStarted},
		{"plan", res(true, "", ab, Planned, Planned), Planned},
	} {
		if got := c.r.Outcome(); got != c.want {
			t.Errorf("%s: Outcome() = %q, want %q", c.name, got, c.want)
		}
	}
	if err := res(false, "x", ab, Created, Failed).Err(); !errors.Is(err, boom) {
		t.Errorf("Err() = %v, want the failed droplet's error", err)
	}
	if err := res(false, "refused", ab, NotStarted).Err(); err == nil || err.Error() != "refused" {
		t.Errorf("Err() = %v, want the pair's error", err)
	}
	if err := res(false, "", ab, Created).Err(); err != nil {
		t.Errorf("Err() of a deployed pair = %v, want nil", err)
	}
}

func TestDiffResultErr(t *testing.T) {
	boom := errors.New("boom")
	if err := (&DiffResult{Error: "x", Droplets: []*DropletDiff{{}, {Err: boom}}}).Err(); !errors.Is(err, boom) {
		t.Errorf("Err() = %v, want the droplet's error", err)
	}
	if err := (&DiffResult{Error: "refused"}).Err(); err == nil || err.Error() != "refused" {
		t.Errorf("Err() = %v, want the pair's error", err)
	}
	if err := (&DiffResult{Droplets: []*DropletDiff{{}}}).Err(); err != nil {
		t.Errorf("Err() of a compared pair = %v, want nil", err)
	}
}
