package deploy

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
)

// A StackDrift is CloudFormation's drift detection of a deployed stack:
// whether its resources still are as the template made them.
type StackDrift struct {
	// Status is IN_SYNC, DRIFTED or UNKNOWN (CloudFormation's), or
	// "unavailable" when detection could not run (Error says why).
	Status    string          `json:"status"`
	Resources []ResourceDrift `json:"resources"`
	Error     string          `json:"error,omitempty"`
}

// A ResourceDrift is one resource that drifted (MODIFIED or DELETED), with
// the properties that differ.
type ResourceDrift struct {
	LogicalID  string          `json:"logicalId"`
	Type       string          `json:"type"`
	Status     string          `json:"status"`
	Properties []PropertyDrift `json:"properties"`
}

// A PropertyDrift is one property whose actual value is not the expected.
type PropertyDrift struct {
	Path     string `json:"path"`
	Expected string `json:"expected"`
	Actual   string `json:"actual"`
	Change   string `json:"change"` // ADD, REMOVE, NOT_EQUAL
}

// maxDriftWait bounds the wait for one stack's drift detection.
const maxDriftWait = 10 * time.Minute

// detectDrift runs CloudFormation's drift detection on the droplet's stack
// (DetectStackDrift, then DescribeStackDriftDetectionStatus until it ends,
// then DescribeStackResourceDrifts for the resources that drifted).
// Detection changes nothing in the stack.
func (r *runner) detectDrift(ctx context.Context, d *droplet) *StackDrift {
	c := d.aws().cfn
	name := str(d.props, "stackName")
	out := &StackDrift{Resources: []ResourceDrift{}}
	unavailable := func(format string, args ...any) *StackDrift {
		out.Status, out.Error = "unavailable", fmt.Sprintf(format, args...)
		return out
	}
	det, err := c.DetectStackDrift(ctx, &cloudformation.DetectStackDriftInput{StackName: aws.String(name)})
	if err != nil {
		return unavailable("cloudformation:DetectStackDrift %s: %s", name, apiMessage(err))
	}
	id := aws.ToString(det.StackDriftDetectionId)
	deadline := time.Now().Add(maxDriftWait)
	for wait := time.Duration(0); ; wait = r.opts.PollInterval {
		if err := sleep(ctx, wait); err != nil {
			return unavailable("interrupted")
		}
		st, err := c.DescribeStackDriftDetectionStatus(ctx, &cloudformation.DescribeStackDriftDetectionStatusInput{StackDriftDetectionId: aws.String(id)})
		if err != nil {
			return unavailable("cloudformation:DescribeStackDriftDetectionStatus: %s", apiMessage(err))
		}
		switch st.DetectionStatus {
		case cfntypes.StackDriftDetectionStatusDetectionInProgress:
			if time.Now().After(deadline) {
				return unavailable("drift detection of stack %s took over %v", name, maxDriftWait)
			}
			continue
		case cfntypes.StackDriftDetectionStatusDetectionFailed:
			// Some resources could not be checked: what was found stands.
			out.Error = aws.ToString(st.DetectionStatusReason)
		}
		out.Status = string(st.StackDriftStatus)
		break
	}
	if out.Status != string(cfntypes.StackDriftStatusDrifted) {
		return out
	}
	p := cloudformation.NewDescribeStackResourceDriftsPaginator(c, &cloudformation.DescribeStackResourceDriftsInput{StackName: aws.String(name),
		StackResourceDriftStatusFilters: []cfntypes.StackResourceDriftStatus{cfntypes.StackResourceDriftStatusModified, cfntypes.StackResourceDriftStatusDeleted}})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			out.Error = "cloudformation:DescribeStackResourceDrifts: " + apiMessage(err)
			return out
		}
		for _, rd := range page.StackResourceDrifts {
			res := ResourceDrift{LogicalID: aws.ToString(rd.LogicalResourceId), Type: aws.ToString(rd.ResourceType), Status: string(rd.StackResourceDriftStatus), Properties: []PropertyDrift{}}
			for _, pd := range rd.PropertyDifferences {
				res.Properties = append(res.Properties, PropertyDrift{Path: aws.ToString(pd.PropertyPath), Expected: aws.ToString(pd.ExpectedValue),
					Actual: aws.ToString(pd.ActualValue), Change: string(pd.DifferenceType)})
			}
			out.Resources = append(out.Resources, res)
		}
	}
	return out
}
