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
			// tags, terminationProtection and notificationArns are set on
			// the stack when it is deployed (as an AWS CDK stack artifact
			// gives them).
			{Name: "tags", Type: "map"},
			{Name: "terminationProtection"},
			{Name: "notificationArns", Type: "list"},
		},
		Attributes:        []string{"stackArn"},
		AttributePrefixes: []string{"output."},
	})
}
