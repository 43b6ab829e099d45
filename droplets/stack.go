package droplets

// StackType is the type specifier of the CloudFormation stack droplet.
const StackType = "npm://@aws-cdk/aws-cloudformation.StackDroplet"

func init() {
	Register(&Kind{
		Alias: "stack",
		Type:  StackType,
		Properties: []Property{
			{Name: "stackName", Required: true, Type: "string"},
			{Name: "template", Required: true, Type: "string", Path: PathFile, Template: true},
			{Name: "parameters", Type: "map"},
			{Name: "stackPolicy", Type: "string", Path: PathFile},
		},
		Attributes:        []string{"stackArn"},
		AttributePrefixes: []string{"output."},
	})
}
