package droplets

// StackType is the type specifier of the CloudFormation stack droplet.
const StackType = "npm://@aws-cdk/aws-cloudformation.StackDroplet"

func init() {
	Register(&Kind{
		Alias: "stack",
		Doc:   "A CloudFormation stack.",
		Type:  StackType,
		Properties: []Property{
			{Name: "stackName", Required: true, Type: "string", Doc: "The name of the CloudFormation stack once deployed."},
			{Name: "template", Required: true, Type: "string", Path: PathFile, Template: true, Doc: "The CloudFormation template (YAML or JSON); `assemble build` packages its local modules."},
			{Name: "parameters", Type: "map", Doc: "Parameters passed to the stack upon deployment; one the template declares with no value and no default is listed under `missing`."},
			{Name: "stackPolicy", Type: "string", Path: PathFile, Doc: "The stack policy."},
			{Name: "tags", Type: "map", Doc: "Tags set on the stack when it is deployed (as an AWS CDK stack artifact gives them)."},
			{Name: "terminationProtection", Doc: "Whether the stack is protected from deletion (a boolean)."},
			{Name: "notificationArns", Type: "list", Doc: "SNS topics notified of the stack's events."},
		},
		Attributes:        []string{"stackArn"},
		AttributePrefixes: []string{"output."},
		AttributeDocs: map[string]string{
			"output.":  "The value of the stack's Output `<name>` (the template must declare it).",
			"stackArn": "The ARN of the stack.",
		},
	})
}
