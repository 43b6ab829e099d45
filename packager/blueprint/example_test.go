package blueprint_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cloud-assembly/assemble/packager/blueprint"
)

func writeTemp(name, src string) (dir, path string) {
	dir, _ = os.MkdirTemp("", "blueprint-example")
	path = filepath.Join(dir, name)
	os.WriteFile(path, []byte(src), 0o644)
	return dir, path
}

func ExampleLoad() {
	dir, path := writeTemp("app.yaml", `version: 2023-04-20
resources:
  fn:
    type: aws/lambda/function
    spec:
      handler: ${variables.handler}
`)
	defer os.RemoveAll(dir)
	_, err := blueprint.Load(path, blueprint.Options{Cwd: dir})
	var list blueprint.ErrorList
	if errors.As(err, &list) {
		for _, e := range list {
			fmt.Printf("%d:%d %s: %s\n", e.Line, e.Column, blueprint.Code(e), e.Msg)
		}
	}
	// Output:
	// 6:18 unresolved_reference: variables.handler is not defined; add it to variables
}

func ExamplePackage() {
	dir, path := writeTemp("app.yaml", `version: 2023-04-20
variables:
  env: {type: string, default: dev}
values:
  table: {type: string, value: "orders-${variables.env}"}
resources:
  table:
    type: aws/dynamodb/table
    spec:
      name: ${to_upper(values.table)}
      stream: ${resources.fn.state.arn}
  fn:
    type: aws/lambda/function
    spec: {}
`)
	defer os.RemoveAll(dir)
	p, err := blueprint.Package(path, blueprint.Options{Cwd: dir, Variables: map[string]any{"env": "prod"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(p.Files[p.Main]))
	// Output:
	// version: "2023-04-20"
	// variables:
	//   env: {type: string, default: prod}
	// values:
	//   table: {type: string, value: "orders-prod"}
	// resources:
	//   table:
	//     type: aws/dynamodb/table
	//     spec:
	//       name: ORDERS-PROD
	//       stream: ${resources.fn.state.arn}
	//   fn:
	//     type: aws/lambda/function
	//     spec: {}
}
