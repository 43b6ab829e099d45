package deploy

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// fakeDrift answers CloudFormation's three drift calls (the query
// protocol's XML) for one stack whose Topic drifted: moto 5.2.1 implements
// none of them (see TestStatusDriftOnMoto).
func fakeDrift(t *testing.T, polls int) *httptest.Server {
	var n atomic.Int32
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		act := r.Form.Get("Action")
		w.Header().Set("Content-Type", "text/xml")
		switch act {
		case "DetectStackDrift":
			fmt.Fprint(w, `<DetectStackDriftResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DetectStackDriftResult><StackDriftDetectionId>det-1</StackDriftDetectionId></DetectStackDriftResult></DetectStackDriftResponse>`)
		case "DescribeStackDriftDetectionStatus":
			status, drift := "DETECTION_IN_PROGRESS", ""
			if int(n.Add(1)) > polls {
				status, drift = "DETECTION_COMPLETE", "<StackDriftStatus>DRIFTED</StackDriftStatus>"
			}
			fmt.Fprintf(w, `<DescribeStackDriftDetectionStatusResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStackDriftDetectionStatusResult><StackId>arn:aws:cloudformation:us-east-1:123456789012:stack/s/1</StackId><StackDriftDetectionId>det-1</StackDriftDetectionId><DetectionStatus>%s</DetectionStatus>%s<Timestamp>2026-11-27T00:00:00Z</Timestamp></DescribeStackDriftDetectionStatusResult></DescribeStackDriftDetectionStatusResponse>`, status, drift)
		case "DescribeStackResourceDrifts":
			if got := r.Form.Get("StackResourceDriftStatusFilters.member.1"); got != "MODIFIED" {
				t.Errorf("filters %v", r.Form)
			}
			fmt.Fprint(w, `<DescribeStackResourceDriftsResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStackResourceDriftsResult><StackResourceDrifts><member>`+
				`<StackId>arn:aws:cloudformation:us-east-1:123456789012:stack/s/1</StackId><LogicalResourceId>Topic</LogicalResourceId><ResourceType>AWS::SNS::Topic</ResourceType>`+
				`<StackResourceDriftStatus>MODIFIED</StackResourceDriftStatus><Timestamp>2026-11-27T00:00:00Z</Timestamp>`+
				`<PropertyDifferences><member><PropertyPath>/DisplayName</PropertyPath><ExpectedValue>ops</ExpectedValue><ActualValue>changed by hand</ActualValue><DifferenceType>NOT_EQUAL</DifferenceType></member></PropertyDifferences>`+
				`</member></StackResourceDrifts></DescribeStackResourceDriftsResult></DescribeStackResourceDriftsResponse>`)
		default:
			t.Errorf("unexpected call %s", act)
			w.WriteHeader(400)
		}
	}))
}

func TestDetectDrift(t *testing.T) {
	srv := fakeDrift(t, 2)
	defer srv.Close()
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}
	r := &runner{opts: Options{PollInterval: time.Millisecond}}
	sess := &awsSession{cfg: cfg, regions: map[string]*clients{}}
	d := &droplet{id: "S", region: "us-east-1", props: map[string]any{"stackName": "s"}, run: r, cl: sess.in("us-east-1")}
	got := r.detectDrift(context.Background(), d)
	if got.Status != "DRIFTED" || got.Error != "" || len(got.Resources) != 1 {
		t.Fatalf("%+v", got)
	}
	rd := got.Resources[0]
	if rd.LogicalID != "Topic" || rd.Status != "MODIFIED" || len(rd.Properties) != 1 || rd.Properties[0] != (PropertyDrift{Path: "/DisplayName", Expected: "ops", Actual: "changed by hand", Change: "NOT_EQUAL"}) {
		t.Errorf("%+v", rd)
	}
}

// moto 5.2.1 implements no drift call: status --drift says that drift
// detection is unavailable, beside the template's verdict, which stands.
func TestStatusDriftOnMoto(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	src := signedSource(t, manifest(map[string]any{"S": stack("S", env, "drift-"+u, "t.yaml", nil)}), files{"t.yaml": topics(1)})
	o := opts(cfg, nil)
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	o.Drift = true
	st, err := Status(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	d := st.Droplet("S")
	if d.State != "match" || d.Drift == nil || d.Drift.Status != "unavailable" || !strings.Contains(d.Drift.Error, "DetectStackDrift") {
		t.Errorf("state %s, drift %+v", d.State, d.Drift)
	}
}
