package provenance

import (
	"context"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
	"time"
)

// statementFor is a statement about files, from a GitHub Actions run of
// o/r at refs/heads/main that finished at finished.
func statementFor(t testing.TB, files map[string]string, finished time.Time) ([]byte, map[string][sha256.Size]byte) {
	t.Helper()
	sums := map[string][sha256.Size]byte{}
	for name, body := range files {
		sums[name] = sha256.Sum256([]byte(body))
	}
	st := New(context.Background(), Inputs{Project: "assembly.yaml"}, Options{NoGit: true, FinishedOn: finished, LookupEnv: env(map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "o/r", "GITHUB_WORKFLOW_REF": "o/r/.github/workflows/release.yml@refs/heads/main",
		"GITHUB_RUN_ID": "1", "GITHUB_REF": "refs/heads/main", "GITHUB_SHA": strings.Repeat("a", 40)})})
	d, err := ContentDigest(sums)
	if err != nil {
		t.Fatal(err)
	}
	st.Seal(d)
	body, err := st.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return body, sums
}

// TestEvaluateRules: each rule accepts and refuses, and the refusal names
// the rule (errors.Is ErrPolicy, RuleError.Rule).
func TestEvaluateRules(t *testing.T) {
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	body, sums := statementFor(t, map[string]string{"manifest.json": "{}", "a/b.txt": "b"}, now.Add(-48*time.Hour))
	// signature.asc and the entry itself are not content: they may be in
	// the sums the caller gives.
	sums["signature.asc"] = sha256.Sum256([]byte("sig"))
	sums[EntryName] = sha256.Sum256(body)
	tampered := map[string][sha256.Size]byte{"manifest.json": sums["manifest.json"], "a/b.txt": sha256.Sum256([]byte("c"))}
	cases := []struct {
		name string
		body []byte
		sums map[string][sha256.Size]byte
		pol  Policy
		rule string // "" passes
	}{
		{"empty policy", body, sums, Policy{}, ""},
		{"absent", nil, sums, Policy{}, RulePresent},
		{"malformed", []byte(`{"_type": 1}`), sums, Policy{}, RuleWellFormed},
		{"trailing data", append(append([]byte(nil), body...), "{}"...), sums, Policy{}, RuleWellFormed},
		{"other content", body, tampered, Policy{}, RuleSubject},
		{"predicate type ok", body, sums, Policy{PredicateType: PredicateType}, ""},
		{"predicate type refused", body, sums, Policy{PredicateType: "https://slsa.dev/provenance/v0.2"}, RulePredicateType},
		{"builder ok", body, sums, Policy{Builders: []string{"https://github.com/o/*/.github/workflows/release.yml@refs/heads/main"}}, ""},
		{"builder refused", body, sums, Policy{Builders: []string{"https://github.com/other/*", LocalBuilder}}, RuleBuilder},
		{"repository ok", body, sums, Policy{Repositories: []string{"https://github.com/o/*"}}, ""},
		{"repository refused", body, sums, Policy{Repositories: []string{"https://github.com/x/*"}}, RuleRepository},
		{"ref ok", body, sums, Policy{Refs: []string{"refs/heads/main", "refs/tags/v*"}}, ""},
		{"ref refused", body, sums, Policy{Refs: []string{"refs/tags/*"}}, RuleRef},
		{"age ok", body, sums, Policy{MaxAge: 72 * time.Hour}, ""},
		{"age refused", body, sums, Policy{MaxAge: 24 * time.Hour}, RuleMaxAge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := Evaluate(c.body, c.sums, &c.pol, now)
			if c.rule == "" {
				if err != nil || v.Failed != nil {
					t.Fatalf("refused: %v", err)
				}
				for _, ch := range v.Checks {
					if !ch.Passed {
						t.Errorf("check %+v failed in a passing verdict", ch)
					}
				}
				return
			}
			var re *RuleError
			if !errors.Is(err, ErrPolicy) || !errors.As(err, &re) || re.Rule != c.rule {
				t.Fatalf("got %v, want rule %s", err, c.rule)
			}
			if v.Failed == nil || v.Failed.Rule != c.rule {
				t.Errorf("verdict's failed rule %+v, want %s", v.Failed, c.rule)
			}
		})
	}
	// A local build has no time, so an age limit refuses it.
	local := New(context.Background(), Inputs{Project: "p"}, Options{NoGit: true})
	local.Seal(mustDigest(t, map[string][sha256.Size]byte{"manifest.json": sums["manifest.json"]}))
	lb, _ := local.Marshal()
	if _, err := Evaluate(lb, map[string][sha256.Size]byte{"manifest.json": sums["manifest.json"]}, &Policy{MaxAge: time.Hour}, now); !isRule(err, RuleMaxAge) {
		t.Errorf("local build with max-age: %v", err)
	}
	if _, err := Evaluate(lb, map[string][sha256.Size]byte{"manifest.json": sums["manifest.json"]}, &Policy{Repositories: []string{"*"}}, now); !isRule(err, RuleRepository) {
		t.Errorf("no source with a repository rule: %v", err)
	}
}

func mustDigest(t testing.TB, sums map[string][sha256.Size]byte) string {
	d, err := ContentDigest(sums)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func isRule(err error, rule string) bool {
	var re *RuleError
	return errors.As(err, &re) && re.Rule == rule
}
