package deploy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Independent droplets deploy up to Concurrency at a time, never more.
func TestConcurrencyLimit(t *testing.T) {
	cfg := awsConfig(t)
	for _, n := range []int{1, 4} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			u := uniq()
			ds := map[string]any{}
			for i := 0; i < 12; i++ {
				id := fmt.Sprintf("S%02d", i)
				ds[id] = stack(id, env, fmt.Sprintf("conc-%s-%02d", u, i), "t.yaml", nil)
			}
			src := signedSource(t, manifest(ds), files{"t.yaml": topics(1)})
			var mu sync.Mutex
			inFlight, most := 0, 0
			o := opts(cfg, nil)
			o.Concurrency = n
			o.Method = Direct
			o.Progress = func(e Event) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case strings.HasPrefix(e.Message, "deploying"):
					inFlight++
					most = max(most, inFlight)
				case e.Message == string(Created):
					inFlight--
				}
			}
			if _, err := Deploy(context.Background(), src, o); err != nil {
				t.Fatal(err)
			}
			if most > n || (n > 1 && most < 2) {
				t.Errorf("at most %d in flight with concurrency %d", most, n)
			}
		})
	}
}

// A canceled context starts no new step; what was in flight is named.
func TestInterruptStopsNewSteps(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	src := signedSource(t, manifest(map[string]any{
		"A": stack("A", env, "inta-"+u, "t.yaml", nil),
		"B": stack("B", env, "intb-"+u, "t.yaml", nil, "A"),
	}), files{"t.yaml": topics(1)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := opts(cfg, nil)
	o.Progress = func(e Event) {
		if e.Droplet == "A" && strings.HasPrefix(e.Message, "created change set") {
			cancel() // Ctrl-C while A's change set is being made
		}
	}
	res, err := Deploy(ctx, src, o)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("got %v", err)
	}
	if res.Droplet("A").Outcome != Interrupted || res.Droplet("B").Outcome != NotStarted {
		t.Errorf("outcomes %s %s", res.Droplet("A").Outcome, res.Droplet("B").Outcome)
	}
	if strings.Join(res.InFlight, ",") != "A" || !strings.Contains(err.Error(), "in flight: A") {
		t.Errorf("in flight %v: %v", res.InFlight, err)
	}
	if s := stacksNamed(t, cfg, "intb-"+u); len(s) != 0 {
		t.Errorf("B deployed after the interrupt: %v", s)
	}
}
