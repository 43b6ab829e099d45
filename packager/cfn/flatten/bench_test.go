package flatten

import (
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// BenchmarkFlatten measures a Transform over n services with two
// environments and two regions each (4n results): time should grow
// linearly with n.
func BenchmarkFlatten(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		var sb strings.Builder
		sb.WriteString("Source:\n")
		for i := range n {
			fmt.Fprintf(&sb, "  - {name: svc%d, envs: [dev, prod], regions: [us-east-1, eu-west-1]}\n", i)
		}
		sb.WriteString("Transform:\n  Template: {Identifier: $item.name-$env-$region, Env: $env}\n  Variables: {env: \"$item.envs[*]\", region: \"$item.regions[*]\"}\n")
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(sb.String()), &doc); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				out, err := Flatten(&doc)
				if err != nil || len(out.Content) != 4*n {
					b.Fatalf("%v, %d items", err, len(out.Content))
				}
			}
		})
	}
}
