package paramschema_test

import (
	"fmt"

	"github.com/cloud-assembly/assemble/packager/cfn/paramschema"
	"go.yaml.in/yaml/v3"
)

func ExampleSection_Validate() {
	var schema, value yaml.Node
	yaml.Unmarshal([]byte(`
Subnets:
  Type: Array
  Items:
    Type: Object
    Required: [Cidr]
    Properties:
      Type: {Type: String, Enum: [Public, Private], Default: Private}
`), &schema)
	yaml.Unmarshal([]byte("- Cidr: 10.0.0.0/24\n- Type: Public\n"), &value)
	sec, err := paramschema.CompileSection(schema.Content[0])
	if err != nil {
		panic(err)
	}
	_, err = sec.Validate("Subnets", value.Content[0])
	fmt.Println(err)
	// Output:
	// Subnets[1].Cidr: required property is missing (Required) at line 2, column 3
}
