package flatten

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cloud-assembly/assemble/packager/cfn/internal/ynode"
	"go.yaml.in/yaml/v3"
)

// FuzzFlatten checks that Flatten classifies every error and is
// deterministic: two runs on the same argument give byte-identical YAML, and
// the result is a list (an object with GroupBy) that never aliases the input.
func FuzzFlatten(f *testing.F) {
	for _, s := range []string{
		`[[1, 2], [3, [4]]]`,
		`{Source: {users: [{roles: [a, b]}, {roles: [c]}]}, Pattern: "$.users[*].roles[*]"}`,
		`{Source: {G1: {items: [{id: 1}]}, G2: {items: [{id: 2}]}}, Pattern: "$.*.items[*]"}`,
		`{Source: [{name: app, regions: [e1, w2], envs: [dev, prod]}], Transform: {Template: {N: "$item.name-$env-$region"}, Variables: {region: "$item.regions[*]", env: "$item.envs[*]"}}}`,
		`{Source: {a: {ids: ["1", "2"]}}, Transform: {Template: {A: "$id"}, Variables: {id: "$item.ids[*]"}}, GroupBy: A}`,
		`{Source: !Ref X}`,
		`{Source: [&a {k: v}, *a], Transform: {Template: "${item.k}$$"}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var d1, d2 yaml.Node
		if yaml.Unmarshal([]byte(src), &d1) != nil || yaml.Unmarshal([]byte(src), &d2) != nil {
			return
		}
		r1, err1 := Flatten(ynode.Resolve(&d1))
		r2, err2 := Flatten(ynode.Resolve(&d2))
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("runs disagree: %v / %v", err1, err2)
		}
		if err1 != nil {
			if !errors.Is(err1, ErrArgs) && !errors.Is(err1, ErrUnresolved) && !errors.Is(err1, ErrTooLarge) {
				t.Fatalf("unclassified error: %v", err1)
			}
			if err1.Error() != err2.Error() {
				t.Fatalf("runs give different errors: %v / %v", err1, err2)
			}
			return
		}
		if r1.Kind != yaml.SequenceNode && r1.Kind != yaml.MappingNode {
			t.Fatalf("result kind %v", r1.Kind)
		}
		b1, e1 := yaml.Marshal(r1)
		b2, e2 := yaml.Marshal(r2)
		if (e1 == nil) != (e2 == nil) || !bytes.Equal(b1, b2) {
			t.Fatalf("runs differ:\n%s\n---\n%s", b1, b2)
		}
		// Mutating the result must not touch the input.
		before, _ := yaml.Marshal(&d1)
		scribble(r1, 0)
		if after, _ := yaml.Marshal(&d1); !bytes.Equal(before, after) {
			t.Fatalf("the result shares nodes with the argument")
		}
	})
}

func scribble(n *yaml.Node, depth int) {
	if n == nil || depth > 100 {
		return
	}
	if n.Kind == yaml.ScalarNode {
		n.Value += "~"
	}
	for _, c := range n.Content {
		scribble(c, depth+1)
	}
}
