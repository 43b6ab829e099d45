// Package ynodetest holds the YAML helpers the packager/cfn packages' tests
// share: parse a snippet into a resolved node, and print a node back.
package ynodetest

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/packager/cfn/internal/ynode"
)

// Parse reads src as one YAML document and returns its resolved root node
// (see ynode.Resolve); a parse error fails the test.
func Parse(t testing.TB, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("parse %q: %v", src, err)
	}
	return ynode.Resolve(&doc)
}

// Dump prints n as YAML, trimmed; a nil node prints as <nil>.
func Dump(t testing.TB, n *yaml.Node) string {
	t.Helper()
	if n == nil {
		return "<nil>"
	}
	b, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
