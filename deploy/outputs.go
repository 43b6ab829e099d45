package deploy

import (
	"bytes"
	"encoding/json"
	"strings"
)

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

// StackOutputsJSON is StackOutputs in the bytes `cdk deploy
// --outputs-file` writes (aws-cdk's lib/cli/cdk-toolkit.js, writeOutputs:
// fs-extra's writeJson with spaces 2, which is JSON.stringify(v, null, 2)
// and a newline): two-space indent, '<', '>' and '&' as they are (Go's
// encoder would escape them, JSON.stringify does not), a final newline.
// Stacks and keys are in sorted order; the CDK CLI writes them in deploy
// order, so the files are equal as JSON, and byte for byte where the two
// orders agree.
func (r *Result) StackOutputsJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r.StackOutputs()); err != nil { // Encode ends with "\n"
		return nil, err
	}
	return b.Bytes(), nil
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
