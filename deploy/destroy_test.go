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

// destroy deletes what the droplets deployed, in reverse dependency
// order, in each droplet's own account (the target's, through its role);
// --plan deletes nothing; a stack of a droplet's name that another tool
// made refuses the whole destroy before anything is deleted; the buckets'
// contents are touched only with --purge.
func TestDestroy(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	dev := accountConfig(t, cfg, devAccount)
	assets := "destroy-" + u
	makeBucket(t, dev, assets)
	m := manifest(map[string]any{
		"Net": stack("Net", "aws://unknown-account/unknown-region", "dnet-"+u, "net.yaml", nil),
		"Conf": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": "aws://unknown-account/unknown-region",
			"properties": map[string]any{"file": "conf.txt", "bucketName": assets, "objectKey": "conf-${target.Stage}.txt"}},
		"Other": stack("Other", "aws://unknown-account/unknown-region", "dother-"+u, "net.yaml", nil),
	})
	m["targets"] = map[string]any{"dev": map[string]any{"environments": []string{"aws://" + devAccount + "/us-east-1"}, "values": map[string]string{"Stage": "dev"}, "deployRole": deployRole}}
	src := signedSource(t, m, files{"net.yaml": netTemplate, "conf.txt": "x"})
	o := opts(cfg, nil)
	o.Method, o.Target = Direct, "dev"
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	// Something in Net's bucket, which only --purge empties.
	netBucket := outputs(t, dev, "dnet-"+u)["BucketName"]
	s3c := s3.NewFromConfig(dev, func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := s3c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(netBucket), Key: aws.String("data"), Body: strings.NewReader("keep me")}); err != nil {
		t.Fatal(err)
	}

	c := &Counter{}
	do := DestroyOptions{Options: opts(cfg, c)}
	do.Target, do.Plan = "dev", true
	res, err := Destroy(context.Background(), src, do)
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Count("DeleteStack") + c.Count("DeleteObject") + c.Count("DeleteObjects"); n != 0 {
		t.Fatalf("--plan deleted: %v", c.Counts())
	}
	if d := res.Droplet("Net"); d.Outcome != Planned || !strings.Contains(strings.Join(d.Actions, "\n"), "delete stack dnet-"+u) {
		t.Fatalf("plan of Net: %+v", d)
	}

	// Another tool's stack under Other's name: refused, nothing deleted.
	cfnDev := cloudformation.NewFromConfig(dev)
	if _, err := cfnDev.DeleteStack(context.Background(), &cloudformation.DeleteStackInput{StackName: aws.String("dother-" + u)}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, dev, "dother-"+u)
	if _, err := cfnDev.CreateStack(context.Background(), &cloudformation.CreateStackInput{StackName: aws.String("dother-" + u), TemplateBody: aws.String(netTemplate)}); err != nil {
		t.Fatal(err)
	}
	do.Plan = false
	_, err = Destroy(context.Background(), src, do)
	if !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), "Other") {
		t.Fatalf("want ErrNotOwned for Other, got %v", err)
	}
	if got := stacksNamed(t, dev, u); len(got) != 2 || len(objects(t, dev, assets)) != 1 {
		t.Fatalf("a refused destroy deleted something: %v", got)
	}

	// Leave Other out: Net and Conf go; Net's bucket's contents are not
	// touched without --purge.
	do.Only = []string{"Net", "Conf"}
	c2 := &Counter{}
	do.APIOptions = []func(*middlewareStack) error{c2.Middleware}
	res, err = Destroy(context.Background(), src, do)
	if err != nil {
		t.Fatal(err)
	}
	if res.Droplet("Net").Outcome != Deleted || res.Droplet("Conf").Outcome != Deleted {
		t.Fatalf("outcomes %s %s", res.Droplet("Net").Outcome, res.Droplet("Conf").Outcome)
	}
	if got := stacksNamed(t, dev, "dnet-"+u); len(got) != 0 {
		t.Fatalf("Net's stack is still there: %v", got)
	}
	if got := objects(t, dev, assets); len(got) != 0 {
		t.Fatalf("Conf's object is still there: %v", got)
	}
	if c2.Count("DeleteObjects") != 0 {
		t.Fatalf("a bucket was emptied without --purge: %v", c2.Counts())
	}
	// Again: nothing there, nothing deleted.
	res, err = Destroy(context.Background(), src, do)
	if err != nil || res.Droplet("Net").Outcome != Absent || res.Droplet("Conf").Outcome != Absent {
		t.Fatalf("second destroy: %v %+v", err, res.Droplets)
	}
}

// --purge empties the stack's buckets before deleting it.
func TestDestroyPurge(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	src := signedSource(t, manifest(map[string]any{"Net": stack("Net", env, "pnet-"+u, "net.yaml", nil)}), files{"net.yaml": netTemplate})
	o := opts(cfg, nil)
	o.Method = Direct
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	bucket := outputs(t, cfg, "pnet-"+u)["BucketName"]
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := s3c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("data"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	res, err := Destroy(context.Background(), src, DestroyOptions{Options: o, Purge: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Droplet("Net").Actions, "\n"), "empty bucket "+bucket) {
		t.Fatalf("actions %v", res.Droplet("Net").Actions)
	}
	out, err := s3c.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err == nil && len(out.Contents) != 0 {
		t.Fatalf("bucket %s still holds %d objects", bucket, len(out.Contents))
	}
}

// waitGone checks that a deleted stack is gone (moto deletes at once).
func waitGone(t *testing.T, cfg aws.Config, name string) {
	t.Helper()
	if got := stacksNamed(t, cfg, name); len(got) > 0 {
		t.Fatalf("stack %s not deleted: %v", name, got)
	}
}
