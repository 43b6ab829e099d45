package flatten_test

import (
	"fmt"

	"github.com/cloud-assembly/assemble/packager/cfn/flatten"
	"go.yaml.in/yaml/v3"
)

func ExampleFlatten() {
	src := `
Source:
  - name: app
    regions: [us-east-1, us-west-2]
    envs: [dev, prod]
Transform:
  Template: $item.name-$env-$region
  Variables:
    region: $item.regions[*]
    env: $item.envs[*]
`
	var arg yaml.Node
	if err := yaml.Unmarshal([]byte(src), &arg); err != nil {
		panic(err)
	}
	out, err := flatten.Flatten(&arg)
	if err != nil {
		panic(err)
	}
	b, _ := yaml.Marshal(out)
	fmt.Print(string(b))
	// Output:
	// - app-dev-us-east-1
	// - app-prod-us-east-1
	// - app-dev-us-west-2
	// - app-prod-us-west-2
}
