package schema

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/internal/testenv/scaling"
)

// slowSchema has a patternProperties pattern with nested repetition: a key
// of a's ending in "!" takes exponential time to refuse.
const slowSchema = `{
  "typeName": "Demo::Slow::Thing",
  "description": "a pattern that backtracks",
  "properties": {
    "Name": {"type": "string"},
    "Labels": {"type": "object", "additionalProperties": false, "patternProperties": {"^(a+)+$": {"type": "string"}}}
  },
  "primaryIdentifier": ["/properties/Name"],
  "additionalProperties": false
}`

// evilKey takes regexp2 far more than a second against ^(a+)+$.
var evilKey = strings.Repeat("a", 40) + "!"

func slowCatalog(t *testing.T) *Catalog {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "slow.json"), []byte(slowSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCatalog(dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func slowTemplate(keys int) []byte {
	var b strings.Builder
	b.WriteString("Resources:\n  T:\n    Type: Demo::Slow::Thing\n    Properties:\n      Name: t\n      Labels:\n")
	for i := 0; i < keys; i++ {
		fmt.Fprintf(&b, "        %s%d: x\n", evilKey, i)
	}
	return []byte(b.String())
}

// Issue 19 item 10: the regular expressions of one run share one budget:
// ten keys against ^(a+)+$ took a second each; now the check stops with
// ErrRegexBudget, naming the key's place, once the run's budget is spent,
// and a later check with the same catalog (the same command) fails at its
// first match.
func TestRegexBudgetPerRun(t *testing.T) {
	c := slowCatalog(t)
	// The budget bounds the run: 40 keys take as long as 10.
	scaling.Bounded(t, "keys against ^(a+)+$", 10, func(n int) {
		c.SetRegexBudget(NewRegexBudget(200 * time.Millisecond))
		_, err := c.CheckTemplate("t.yaml", slowTemplate(n))
		if !errors.Is(err, ErrRegexBudget) || !strings.HasPrefix(err.Error(), "t.yaml:7:9: resource T: Labels."+evilKey+"0: matching the pattern \"^(a+)+$\"") {
			t.Fatalf("got %v, want ErrRegexBudget at t.yaml:7:9", err)
		}
	})
	if _, err := c.CheckTemplate("u.yaml", slowTemplate(1)); !errors.Is(err, ErrRegexBudget) || !strings.Contains(err.Error(), "for all the matches of this run") {
		t.Fatalf("second check: got %v, want ErrRegexBudget (the run's budget is spent)", err)
	}
	// CheckPackaged passes the error on.
	if _, err := c.CheckPackaged("u.yaml", slowTemplate(1), slowTemplate(1)); !errors.Is(err, ErrRegexBudget) {
		t.Fatalf("CheckPackaged: got %v", err)
	}
}

// Fast patterns are unaffected, and a catalog's default budget is
// DefaultRegexBudget.
func TestRegexBudgetFastPatterns(t *testing.T) {
	c := slowCatalog(t)
	if c.regex.total != DefaultRegexBudget {
		t.Fatalf("default budget %v", c.regex.total)
	}
	c.SetRegexBudget(NewRegexBudget(200 * time.Millisecond))
	var b strings.Builder
	b.WriteString("Resources:\n  T:\n    Type: Demo::Slow::Thing\n    Properties:\n      Name: t\n      Labels:\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&b, "        %s: x\n", strings.Repeat("a", 1+i%50))
	}
	f, err := c.CheckTemplate("t.yaml", []byte(b.String()))
	if err != nil || len(f) != 0 {
		t.Fatalf("findings %v, err %v", f, err)
	}
}

// The validator's pointer walk matches patternProperties too: past the
// budget the pointer is an error that says so, not a "does not resolve"
// warning, and one budget serves every file of a command.
func TestRegexBudgetValidate(t *testing.T) {
	validator := mustValidator(t)
	doc := strings.Replace(slowSchema, `"primaryIdentifier"`, `"readOnlyProperties": ["/properties/Labels/`+evilKey+`"], "primaryIdentifier"`, 1)
	var v *Validator
	first := func() {
		v = validator.WithRegexBudget(NewRegexBudget(200 * time.Millisecond))
		r := v.Validate("slow.json", []byte(doc))
		if r.Valid || !has(r.Errors, "/readOnlyProperties/0", "regular expressions took too long") {
			t.Fatalf("valid=%v errors=%v warnings=%v", r.Valid, r.Errors, r.Warnings)
		}
	}
	second := func() {
		r := v.Validate("slow2.json", []byte(doc))
		if r.Valid || !has(r.Errors, "/readOnlyProperties/0", "for all the matches of this run") {
			t.Fatalf("second file: valid=%v errors=%v", r.Valid, r.Errors)
		}
	}
	// The second file fails at its first match: it does not spend the
	// budget again (scaling runs second right after first, each round).
	scaling.AtMost(t, "the file that spends the budget, then the next", 0.5, first, second)
}
