package deploy

import (
	"strings"

	"github.com/cloud-assembly/assemble/internal/jsontext"
)

// StackOutputs are the stacks' outputs as `cdk deploy --outputs-file`
// writes them: by stack name, each output's key to its value; a stack
// with no outputs (or not deployed) is left out, as the CDK CLI leaves it.
// For a target over several account/region pairs these are the droplets
// with an environment of their own only; StackOutputsJSON writes every
// pair's.
func (r *Result) StackOutputs() map[string]map[string]string {
	return stackOutputs(r.Droplets)
}

func stackOutputs(ds []*DropletResult) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, d := range ds {
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

// StackOutputsJSON is StackOutputs in the bytes `cdk deploy
// --outputs-file` writes (aws-cdk's lib/cli/cdk-toolkit.js, writeOutputs:
// fs-extra's writeJson with spaces 2, which is JSON.stringify(v, null, 2)
// and a newline): two-space indent, '<', '>' and '&' as they are (Go's
// encoder would escape them, JSON.stringify does not), a final newline.
// Stacks and keys are in sorted order; the CDK CLI writes them in deploy
// order, so the files are equal as JSON, and byte for byte where the two
// orders agree.
//
// A target over several account/region pairs (Pairs) deploys one stack
// name to every pair, so its file has that shape once per environment:
// {"aws://ACCOUNT/REGION": {StackName: {OutputKey: value}}}, the stacks
// with an environment of their own under theirs.
func (r *Result) StackOutputsJSON() ([]byte, error) {
	var v any = r.StackOutputs()
	if len(r.Pairs) > 0 {
		byEnv := map[string][]*DropletResult{}
		for _, res := range append([]*Result{r}, r.Pairs...) {
			for _, d := range res.Droplets {
				byEnv[d.Environment] = append(byEnv[d.Environment], d)
			}
		}
		all := map[string]map[string]map[string]string{}
		for env, ds := range byEnv {
			if o := stackOutputs(ds); len(o) > 0 {
				all[env] = o
			}
		}
		v = all
	}
	return jsontext.MarshalIndent(v) // ends with "\n", as cdk's file
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
