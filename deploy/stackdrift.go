package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
)

// Everything a stack droplet signs is compared with the live stack, by
// Status and by Deploy before it skips a stack:
//   - the template (GetTemplate, the original as sent);
//   - every parameter the template declares, those the droplet sets and
//     those left at the template's Default (a NoEcho value, which
//     CloudFormation shows as ****, cannot be compared);
//   - the tags, exactly: the signed ones and assemble:droplet, no other
//     (aws: tags are CloudFormation's own; assemble:sha256 names the
//     assembly that last deployed it, not what it runs);
//   - the stack policy, termination protection and notification ARNs,
//     when the droplet signs them;
//   - each nested stack's template, when the parent's TemplateURL names a
//     file droplet of the assembly (its signed bytes), down the tree.
//
// Deploy puts back whatever differs: template, parameters, tags and
// notification ARNs through the change set (or UpdateStack), then the
// settings steps (stack policy, termination protection, nested
// templates); a settings step that fails fails the droplet, and because
// the next deploy compares all of the above, it does not skip the stack.

// maxNesting bounds how deep nested stacks are followed.
const maxNesting = 8

// stackDrift lists, in words, each way the live stack s differs from what
// the droplet signs (none when it matches).
func stackDrift(ctx context.Context, d *droplet, c *cloudformation.Client, s *cfntypes.Stack, in *stackInput) ([]string, error) {
	var diff []string
	out, err := c.GetTemplate(ctx, &cloudformation.GetTemplateInput{StackName: s.StackId, TemplateStage: cfntypes.TemplateStageOriginal})
	if err != nil {
		return nil, fmt.Errorf("%w: cloudformation:GetTemplate: %s", ErrAWS, apiMessage(err))
	}
	sameTemplate := aws.ToString(out.TemplateBody) == string(in.body)
	if !sameTemplate {
		diff = append(diff, fmt.Sprintf("stack %s runs another template than %s", in.name, str(d.props, "template")))
	}
	diff = append(diff, paramDiff(s, in.params)...)
	if sameTemplate {
		for _, p := range s.Parameters {
			if k := aws.ToString(p.ParameterKey); !hasKey(in.params, k) && (in.info == nil || !hasKey(in.info.params, k)) {
				diff = append(diff, fmt.Sprintf("parameter %s is set, which the template does not declare", k))
			}
		}
	}
	diff = append(diff, tagDiff(s.Tags, in.tags)...)
	if _, signed := d.props["notificationArns"]; signed {
		have, want := slices.Clone(s.NotificationARNs), slices.Clone(in.notify)
		slices.Sort(have)
		slices.Sort(want)
		if !slices.Equal(have, want) {
			diff = append(diff, fmt.Sprintf("notification ARNs are [%s], want [%s]", strings.Join(have, ", "), strings.Join(want, ", ")))
		}
	}
	if in.set && aws.ToBool(s.EnableTerminationProtection) != in.protect {
		diff = append(diff, fmt.Sprintf("termination protection is %s, want %s", onOff(aws.ToBool(s.EnableTerminationProtection)), onOff(in.protect)))
	}
	if in.policy != nil {
		same, err := samePolicy(ctx, c, aws.ToString(s.StackId), in.policy)
		if err != nil {
			return nil, err
		}
		if !same {
			diff = append(diff, fmt.Sprintf("the stack policy is not %s", str(d.props, "stackPolicy")))
		}
	}
	nd, _, err := nestedDrift(ctx, d, c, aws.ToString(s.StackId), in.body, 0)
	if err != nil {
		return nil, err
	}
	return append(diff, nd...), nil
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// tagDiff compares the live tags with want, exactly, leaving out aws:
// tags and TagSHA256.
func tagDiff(tags []cfntypes.Tag, want map[string]string) []string {
	have := map[string]string{}
	for _, t := range tags {
		k := aws.ToString(t.Key)
		if strings.HasPrefix(k, "aws:") || k == TagSHA256 {
			continue
		}
		have[k] = aws.ToString(t.Value)
	}
	var diff []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if k == TagSHA256 {
			continue
		}
		v, ok := have[k]
		switch {
		case !ok:
			diff = append(diff, fmt.Sprintf("tag %s is not set (want %q)", k, want[k]))
		case v != want[k]:
			diff = append(diff, fmt.Sprintf("tag %s is %q, want %q", k, v, want[k]))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(have)) {
		if _, ok := want[k]; !ok {
			diff = append(diff, fmt.Sprintf("tag %s is set (%q), which the droplet does not sign", k, have[k]))
		}
	}
	return diff
}

// samePolicy reports whether the stack's policy is policy (as JSON values:
// CloudFormation may give back other whitespace).
func samePolicy(ctx context.Context, c *cloudformation.Client, stack string, policy []byte) (bool, error) {
	out, err := c.GetStackPolicy(ctx, &cloudformation.GetStackPolicyInput{StackName: aws.String(stack)})
	if err != nil {
		return false, fmt.Errorf("%w: cloudformation:GetStackPolicy: %s", ErrAWS, apiMessage(err))
	}
	have := aws.ToString(out.StackPolicyBody)
	if have == string(policy) {
		return true, nil
	}
	var a, b any
	if json.Unmarshal([]byte(have), &a) != nil || json.Unmarshal(policy, &b) != nil {
		return false, nil
	}
	return reflect.DeepEqual(a, b), nil
}

// A nestedFix is a nested stack whose template is not the signed one.
type nestedFix struct {
	logicalID, stack string
	body             []byte
}

// nestedDrift compares the templates of the nested stacks of the stack
// whose signed template is body with the signed files their TemplateURLs
// name, down the tree.
func nestedDrift(ctx context.Context, d *droplet, c *cloudformation.Client, stack string, body []byte, depth int) ([]string, []nestedFix, error) {
	if depth >= maxNesting {
		return nil, nil, nil
	}
	info, err := parseTemplate(body)
	if err != nil || len(info.nested) == 0 {
		return nil, nil, nil
	}
	var diff []string
	var fixes []nestedFix
	p := cloudformation.NewListStackResourcesPaginator(c, &cloudformation.ListStackResourcesInput{StackName: aws.String(stack)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: cloudformation:ListStackResources: %s", ErrAWS, apiMessage(err))
		}
		for _, r := range page.StackResourceSummaries {
			id := aws.ToString(r.LogicalResourceId)
			url, ok := info.nested[id]
			if aws.ToString(r.ResourceType) != "AWS::CloudFormation::Stack" || !ok || aws.ToString(r.PhysicalResourceId) == "" {
				continue
			}
			name, ok := d.run.src.nestedTemplate(url)
			if !ok {
				continue // not a template of the assembly: nothing signed to compare
			}
			want, err := d.run.src.ReadFile(name)
			if err != nil {
				return nil, nil, err
			}
			nested := aws.ToString(r.PhysicalResourceId)
			out, err := c.GetTemplate(ctx, &cloudformation.GetTemplateInput{StackName: aws.String(nested), TemplateStage: cfntypes.TemplateStageOriginal})
			if err != nil {
				return nil, nil, fmt.Errorf("%w: cloudformation:GetTemplate %s: %s", ErrAWS, nested, apiMessage(err))
			}
			if aws.ToString(out.TemplateBody) != string(want) {
				diff = append(diff, fmt.Sprintf("nested stack %s (%s) runs another template than %s", id, nested, name))
				fixes = append(fixes, nestedFix{logicalID: id, stack: nested, body: want})
				continue
			}
			nd, nf, err := nestedDrift(ctx, d, c, nested, want, depth+1)
			if err != nil {
				return nil, nil, err
			}
			diff, fixes = append(diff, nd...), append(fixes, nf...)
		}
	}
	return diff, fixes, nil
}

// nestedTemplate is the file of the assembly a nested stack's TemplateURL
// names: the file droplet whose objectKey the URL ends with.
func (s *Source) nestedTemplate(url string) (string, bool) {
	for _, id := range s.manifest.IDs() {
		spec := s.manifest.Droplets[id]
		if k, _ := kindOf(spec.Type); k != dropletKind(objectKind{fileKind{}}) {
			continue
		}
		key, file := str(spec.Properties, "objectKey"), str(spec.Properties, "file")
		if key == "" || file == "" || !strings.HasSuffix(url, "/"+key) {
			continue
		}
		if size, ok := s.sizes[file]; ok && size <= MaxTemplateSize {
			return file, true
		}
	}
	return "", false
}

// settle applies the settings steps after the stack's change (or when it
// needed none): the stack policy, termination protection and nested
// templates, where they differ from the signed ones. It reports whether
// it changed anything; a step that fails is the droplet's failure.
func settle(ctx context.Context, d *droplet, c *cloudformation.Client, stackID string, in *stackInput) (bool, error) {
	s, err := describeStack(ctx, c, stackID)
	if err != nil {
		return false, err
	}
	if s == nil {
		return false, fmt.Errorf("%w: stack %s is gone", ErrStackFailed, in.name)
	}
	changed := false
	if in.policy != nil {
		same, err := samePolicy(ctx, c, stackID, in.policy)
		if err != nil {
			return false, err
		}
		if !same {
			if _, err := c.SetStackPolicy(ctx, &cloudformation.SetStackPolicyInput{StackName: aws.String(stackID), StackPolicyBody: aws.String(string(in.policy))}); err != nil {
				return false, settingsError("SetStackPolicy", in.name, err)
			}
			d.res.action("set the stack policy of %s", in.name)
			changed = true
		}
	}
	if in.set && aws.ToBool(s.EnableTerminationProtection) != in.protect {
		if _, err := c.UpdateTerminationProtection(ctx, &cloudformation.UpdateTerminationProtectionInput{StackName: aws.String(stackID), EnableTerminationProtection: aws.Bool(in.protect)}); err != nil {
			return false, settingsError("UpdateTerminationProtection", in.name, err)
		}
		d.res.action("turned termination protection of %s %s", in.name, onOff(in.protect))
		changed = true
	}
	_, fixes, err := nestedDrift(ctx, d, c, stackID, in.body, 0)
	if err != nil {
		return false, err
	}
	for _, f := range fixes {
		if err := restoreNested(ctx, d, c, f, in); err != nil {
			return false, err
		}
		d.res.action("put back the signed template of nested stack %s (%s)", f.logicalID, f.stack)
		changed = true
	}
	return changed, nil
}

// restoreNested updates a nested stack changed by hand back to its signed
// template, its parameters as they are (its parent sets them).
func restoreNested(ctx context.Context, d *droplet, c *cloudformation.Client, f nestedFix, in *stackInput) error {
	s, err := describeStack(ctx, c, f.stack)
	if err != nil {
		return err
	}
	if s == nil {
		return fmt.Errorf("%w: nested stack %s of %s is gone", ErrStackFailed, f.stack, in.name)
	}
	var params []cfntypes.Parameter
	for _, p := range s.Parameters {
		params = append(params, cfntypes.Parameter{ParameterKey: p.ParameterKey, UsePreviousValue: aws.Bool(true)})
	}
	d.progress("putting back the signed template of nested stack %s", f.stack)
	out, err := c.UpdateStack(ctx, &cloudformation.UpdateStackInput{StackName: s.StackId, TemplateBody: aws.String(string(f.body)),
		Parameters: params, Capabilities: in.caps, Tags: s.Tags})
	if err != nil {
		return settingsError("UpdateStack (nested "+f.stack+")", in.name, err)
	}
	_, err = waitStack(ctx, d, c, aws.ToString(out.StackId), time.Now().Add(-2*time.Second))
	return err
}

func settingsError(op, name string, err error) error {
	return fmt.Errorf("%w: stack %s: settings step cloudformation:%s failed (the stack is not as signed; deploy again): %s", ErrStackFailed, name, op, apiMessage(err))
}

// settled is the outcome of a stack whose change set (or update) held no
// changes: its settings steps may still have had something to put back.
func settled(ctx context.Context, d *droplet, c *cloudformation.Client, s *cfntypes.Stack, in *stackInput) (Outcome, map[string]string, error) {
	changed, err := settle(ctx, d, c, aws.ToString(s.StackId), in)
	if err != nil {
		return "", nil, err
	}
	// CloudFormation made no update: what the change set (or update) was
	// to put back (tags, notification ARNs) must then be as signed, or
	// the droplet is not deployed, whatever the outcome would say.
	now, err := describeStack(ctx, c, aws.ToString(s.StackId))
	if err != nil {
		return "", nil, err
	}
	if now != nil {
		drift, err := stackDrift(ctx, d, c, now, in)
		if err != nil {
			return "", nil, err
		}
		if len(drift) > 0 {
			return "", nil, fmt.Errorf("%w: stack %s: CloudFormation made no update, and it still differs from the droplet: %s", ErrStackFailed, in.name, strings.Join(drift, "; "))
		}
	}
	if changed {
		return Updated, stackAttrs(s), nil
	}
	return Unchanged, stackAttrs(s), nil
}
