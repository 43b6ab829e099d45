package merge_test

import (
	"fmt"

	"github.com/cloud-assembly/assemble/packager/cfn/merge"
	"go.yaml.in/yaml/v3"
)

func ExampleMerge() {
	var args yaml.Node
	if err := yaml.Unmarshal([]byte(`[{Name: web, Ports: [80]}, {Name: api, Ports: [443], Team: a}]`), &args); err != nil {
		panic(err)
	}
	out, err := merge.Merge(&args)
	if err != nil {
		panic(err)
	}
	b, _ := yaml.Marshal(out)
	fmt.Print(string(b))
	// Output:
	// Name: api
	// Ports: [80, 443]
	// Team: a
}
