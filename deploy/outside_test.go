package deploy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// A reference never deploys a placeholder: a droplet that Only leaves out
// is read from the account as it is now, and when it is not deployed (a
// stack absent, an object absent or holding other bytes, a dependsOn
// target absent) the deploy is refused before any change, naming the
// droplet and the fix.
func TestOnlyNeverDeploysAPlaceholder(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	bucket := "outside-" + u
	makeBucket(t, cfg, bucket)
	fileDroplet := func(bucketName string) map[string]any {
		return map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": env,
			"properties": map[string]any{"file": "logo.txt", "bucketName": bucketName, "objectKey": "logo.txt"}}
	}
	fs := files{"net.yaml": netTemplate, "app.yaml": appTemplate, "logo.txt": "the signed logo"}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })

	for _, tc := range []struct {
		name     string
		droplets map[string]any
		before   func(t *testing.T) // the account before the deploy
		want     string             // the droplet named, and the fix
	}{
		{"stack output of a stack not deployed", map[string]any{
			"Net": stack("Net", env, "net-a-"+u, "net.yaml", nil),
			"App": stack("App", env, "app-a-"+u, "app.yaml", map[string]string{"Target": "${Net.output.BucketName}"}),
		}, nil, "droplet Net: reference cannot be resolved: App needs it"},
		{"file whose bucket comes from a stack not deployed", map[string]any{
			"Net":  stack("Net", env, "net-b-"+u, "net.yaml", nil),
			"File": fileDroplet("${Net.output.BucketName}"),
			"App":  stack("App", env, "app-b-"+u, "app.yaml", map[string]string{"Target": "${File.bucketName}"}),
		}, nil, "droplet File: reference cannot be resolved: App needs it, Options.Only leaves it out, and it is not deployed (it refers to Net.output.BucketName"},
		{"file not uploaded", map[string]any{
			"File": fileDroplet(bucket),
			"App":  stack("App", env, "app-c-"+u, "app.yaml", map[string]string{"Target": "${File.objectKey}"}),
		}, nil, "s3://" + bucket + "/logo.txt does not exist): deploy it first, or both together (Options.Only App,File)"},
		{"file holding other bytes", map[string]any{
			"File": fileDroplet(bucket),
			"App":  stack("App", env, "app-d-"+u, "app.yaml", map[string]string{"Target": "${File.objectKey}"}),
		}, func(t *testing.T) {
			if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("logo.txt"),
				Body: strings.NewReader("the other logo!"), Metadata: map[string]string{MetaContentSHA256: hexSHA256([]byte("the signed logo"))}}); err != nil {
				t.Fatal(err)
			}
		}, "s3://" + bucket + "/logo.txt holds other bytes"},
		{"dependsOn a stack not deployed", map[string]any{
			"Net": stack("Net", env, "net-e-"+u, "net.yaml", nil),
			"App": stack("App", env, "app-e-"+u, "app.yaml", map[string]string{"Target": "fixed"}, "Net"),
		}, nil, "droplet Net: reference cannot be resolved: App needs it, Options.Only leaves it out, and it is not deployed (no complete stack net-e-" + u + "): deploy it first, or both together (Options.Only App,Net)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				tc.before(t)
			}
			src := signedSource(t, manifest(tc.droplets), fs)
			keys := strings.Join(objects(t, cfg, bucket), ",")
			for _, plan := range []bool{false, true} {
				o := opts(cfg, nil)
				o.Method, o.Only, o.Plan = Direct, []string{"App"}, plan
				res, err := Deploy(context.Background(), src, o)
				if !errors.Is(err, ErrUnresolved) || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("plan %v: %v, want ErrUnresolved saying %q", plan, err, tc.want)
				}
				if d := res.Droplet("App"); d.Outcome != NotStarted {
					t.Errorf("App: %s", d.Outcome)
				}
			}
			if got := stacksNamed(t, cfg, u); len(got) != 0 {
				t.Errorf("stacks made: %v", got)
			}
			if got := strings.Join(objects(t, cfg, bucket), ","); got != keys {
				t.Errorf("objects %s, before %s", got, keys)
			}
		})
	}

	// Once the file holds the signed bytes, App deploys with its real
	// attribute, read from the account.
	src := signedSource(t, manifest(map[string]any{
		"File": fileDroplet(bucket),
		"App":  stack("App", env, "app-f-"+u, "app.yaml", map[string]string{"Target": "${File.bucketName}/${File.objectKey}"}),
	}), fs)
	o := opts(cfg, nil)
	o.Method, o.Only = Direct, []string{"File"}
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	o.Only = []string{"App"}
	res, err := Deploy(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Droplet("App").Attributes["output.Seen"]; got != bucket+"/logo.txt" {
		t.Errorf("App's parameter %q, want %s/logo.txt", got, bucket)
	}
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(context.Background(), &cloudformation.DescribeStacksInput{StackName: aws.String("app-f-" + u)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range out.Stacks[0].Parameters {
		if strings.Contains(aws.ToString(p.ParameterValue), KnownAfterDeploy) {
			t.Errorf("parameter %s = %q", aws.ToString(p.ParameterKey), aws.ToString(p.ParameterValue))
		}
	}
}
