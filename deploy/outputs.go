package deploy

import "strings"

// StackOutputs are the stacks' outputs as `cdk deploy --outputs-file`
// writes them: by stack name, each output's key to its value; a stack
// with no outputs (or not deployed) is left out, as the CDK CLI leaves it.
func (r *Result) StackOutputs() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, d := range r.Droplets {
		name := stackNameOf(d.Attributes["stackArn"])
		if name == "" {
			continue
		}
		for k, v := range d.Attributes {
			key, ok := strings.CutPrefix(k, "output.")
			if !ok {
				continue
			}
			if out[name] == nil {
				out[name] = map[string]string{}
			}
			out[name][key] = v
		}
	}
	return out
}

// stackNameOf is the stack name of a stack ARN
// (arn:aws:cloudformation:REGION:ACCOUNT:stack/NAME/ID), or "".
func stackNameOf(arn string) string {
	_, rest, ok := strings.Cut(arn, ":stack/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}
