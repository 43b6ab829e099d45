package deploy

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
)

// madeChangeSet is what one CreateChangeSet of this run made: the change
// set's id and its stack's.
type madeChangeSet struct{ id, stackID string }

// remove deletes what a plan made, by id, and nothing else: the change
// set, then, when reviewStack (the change set created the stack), the
// stack, if it is still in REVIEW_IN_PROGRESS and holds no change set of
// anyone else. A deploy that created the stack in the meantime (executed
// a change set on it, or deleted it and created another of the name)
// keeps it. A failure to delete is told in the droplet's actions.
func (m madeChangeSet) remove(ctx context.Context, d *droplet, c *cloudformation.Client, reviewStack bool) {
	if m.id == "" {
		return
	}
	if _, err := c.DeleteChangeSet(ctx, &cloudformation.DeleteChangeSetInput{ChangeSetName: aws.String(m.id)}); err != nil && apiCode(err) != "ChangeSetNotFound" && apiCode(err) != "ChangeSetNotFoundException" {
		d.res.action("could not delete change set %s: %s", m.id, apiMessage(err))
	}
	if !reviewStack || m.stackID == "" {
		return
	}
	s, err := describeStack(ctx, c, m.stackID)
	if err != nil || s == nil || s.StackStatus != cfntypes.StackStatusReviewInProgress || aws.ToString(s.StackId) != m.stackID {
		return
	}
	others, err := c.ListChangeSets(ctx, &cloudformation.ListChangeSetsInput{StackName: aws.String(m.stackID)})
	if err != nil {
		d.res.action("left review stack %s: cloudformation:ListChangeSets: %s", m.stackID, apiMessage(err))
		return
	}
	for _, cs := range others.Summaries {
		// (moto 5.2.1 lists every stack's change sets, whatever StackName)
		if aws.ToString(cs.StackId) == m.stackID && aws.ToString(cs.ChangeSetId) != m.id {
			d.res.action("left review stack %s: it holds change set %s, not this plan's", aws.ToString(s.StackName), aws.ToString(cs.ChangeSetName))
			return
		}
	}
	if _, err := c.DeleteStack(ctx, &cloudformation.DeleteStackInput{StackName: aws.String(m.stackID)}); err != nil {
		d.res.action("could not delete review stack %s: %s", m.stackID, apiMessage(err))
	}
}
