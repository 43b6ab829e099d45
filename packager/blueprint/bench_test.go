package blueprint

import (
	"path/filepath"
	"testing"

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
