package deploy

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
)

// A stack that rolls back fails naming each resource that failed and
// CloudFormation's reason, from the stack's events; progress shows the
// events oldest first. moto creates resources synchronously (a failure is
// CreateStack's own error), so CloudFormation's answers are played here.
func TestStackFailureNamesResources(t *testing.T) {
	const ns = `xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"`
	event := func(id, logical, typ, status, reason string) string {
		return "<member><EventId>" + id + "</EventId><StackName>app</StackName><LogicalResourceId>" + logical + "</LogicalResourceId><ResourceType>" + typ +
			"</ResourceType><ResourceStatus>" + status + "</ResourceStatus><ResourceStatusReason>" + reason + "</ResourceStatusReason><Timestamp>2099-01-01T00:00:0" + id + "Z</Timestamp></member>"
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "text/xml")
		switch r.Form.Get("Action") {
		case "DescribeStacks":
			w.Write([]byte(`<DescribeStacksResponse ` + ns + `><DescribeStacksResult><Stacks><member><StackId>arn:aws:cloudformation:us-east-1:123456789012:stack/app/1</StackId><StackName>app</StackName><StackStatus>ROLLBACK_COMPLETE</StackStatus><CreationTime>2099-01-01T00:00:00Z</CreationTime></member></Stacks></DescribeStacksResult></DescribeStacksResponse>`))
		case "DescribeStackEvents":
			// Newest first, as CloudFormation lists them.
			w.Write([]byte(`<DescribeStackEventsResponse ` + ns + `><DescribeStackEventsResult><StackEvents>` +
				event("3", "app", "AWS::CloudFormation::Stack", "ROLLBACK_COMPLETE", "") +
				event("2", "Queue", "AWS::SQS::Queue", "CREATE_FAILED", "Resource handler returned message: queue name taken") +
				event("1", "Topic", "AWS::SNS::Topic", "CREATE_IN_PROGRESS", "") +
				`</StackEvents></DescribeStackEventsResult></DescribeStackEventsResponse>`))
		default:
			http.Error(w, "unexpected "+r.Form.Get("Action"), 400)
		}
	}))
	defer srv.Close()
	c := cloudformation.New(cloudformation.Options{BaseEndpoint: aws.String(srv.URL), Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")})
	var lines []string
	d := &droplet{id: "App", run: &runner{opts: Options{PollInterval: time.Millisecond, Progress: func(e Event) { lines = append(lines, e.Message) }}}}
	_, err := waitStack(context.Background(), d, c, "app", time.Now())
	if !errors.Is(err, ErrStackFailed) {
		t.Fatalf("got %v", err)
	}
	if want := "stack app is ROLLBACK_COMPLETE: Queue (AWS::SQS::Queue): Resource handler returned message: queue name taken"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want %q", err, want)
	}
	if got := strings.Join(lines, "\n"); !strings.HasPrefix(got, "CREATE_IN_PROGRESS AWS::SNS::Topic Topic\nCREATE_FAILED AWS::SQS::Queue Queue: Resource handler") {
		t.Errorf("progress:\n%s", got)
	}
}
