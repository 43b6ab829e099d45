package blueprint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/internal/testenv/scaling"
	"github.com/cloud-assembly/assemble/packager/blueprint/subst"
)

// BenchmarkLoad loads and validates the fuzz seed blueprint (every section,
// 20 substitutions).
func BenchmarkLoad(b *testing.B) {
	path := filepath.Join("testdata", "fuzz-seeds", "orders.yaml")
	for b.Loop() {
		if _, err := Load(path, Options{Cwd: "testdata"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPackage loads, validates and packages the same blueprint.
func BenchmarkPackage(b *testing.B) {
	path := filepath.Join("testdata", "fuzz-seeds", "orders.yaml")
	for b.Loop() {
		if _, err := Package(path, Options{Cwd: "testdata"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseString parses a string with three substitutions.
func BenchmarkParseString(b *testing.B) {
	s := `https://${resources.cache.state.hosts[0].endpoint}:${variables.port}/${map(values.hosts, compose(to_upper, trimprefix_g("http://")))[0]}`
	for b.Loop() {
		if _, err := subst.ParseString(s); err != nil {
			b.Fatal(err)
		}
	}
}

// chainBlueprint writes a blueprint whose n values each double the one
// before: v{i} = list(values.v{i-1}, values.v{i-1}). n = 4096 gives the
// 279 KB blueprint of issue 15, whose packaging took 181 s.
func chainBlueprint(tb testing.TB, n int) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString("version: 2023-04-20\nvalues:\n  v0: {type: array, value: '${list(1, 2)}'}\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  v%d: {type: array, value: '${list(values.v%d, values.v%d)}'}\n", i, i-1, i-1)
	}
	fmt.Fprintf(&b, "resources:\n  r: {type: aws/sns/topic, spec: {a: '${values.v%d}'}}\n", n)
	path := filepath.Join(tb.TempDir(), "chain.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkPathologicalChain packages the doubling chain of 4,096 values:
// 181 s (it packaged, leaving the huge values for deploy time) before issue
// 15; now it fails with ErrEvalLimit at v19.
func BenchmarkPathologicalChain(b *testing.B) {
	path := chainBlueprint(b, 4096)
	for b.Loop() {
		if _, err := Package(path, Options{Cwd: filepath.Dir(path)}); !errors.Is(err, ErrEvalLimit) {
			b.Fatalf("got %v, want ErrEvalLimit", err)
		}
	}
}

// TestPathologicalChain: issue 15's 4,096-value chain fails validation and
// packaging with one ErrEvalLimit error, at the value where the list first
// passes MaxEvalSize, in time linear in the chain's length (a chain of 4n
// values against one of n: the 181 s packaging took grew with the values'
// sizes; BenchmarkPathologicalChain measures).
func TestPathologicalChain(t *testing.T) {
	paths := map[int]string{}
	for _, n := range []int{1024, 4096} {
		paths[n] = chainBlueprint(t, n)
	}
	scaling.Linear(t, "a chain of values", 1024, func(n int) {
		path := paths[n]
		_, err := Load(path, Options{Cwd: filepath.Dir(path)})
		wantOneError(t, err, ErrEvalLimit, 22, "list(): evaluates to more than")
		if _, perr := Package(path, Options{Cwd: filepath.Dir(path)}); perr == nil || perr.Error() != err.Error() {
			t.Fatalf("Package: %v, want the error Load gave", perr)
		}
	})
}
