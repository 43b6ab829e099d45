package deploy

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// A directory droplet is the whole of its keyPrefix: an object added by
// hand under it is drift that status names; a plain deploy leaves it (and
// says so), a plan with Prune says it would go, and Prune deletes it.
// Objects other droplets of the assembly deploy under the prefix are not
// extra, nor anything outside the prefix.
func TestDirectoryExtraObjectsAndPrune(t *testing.T) {
	cfg := awsConfig(t)
	bucket := "prune-" + uniq()
	makeBucket(t, cfg, bucket)
	src := signedSource(t, manifest(map[string]any{
		"Site": map[string]any{"type": "npm://@aws-cdk/assets.DirectoryDroplet", "environment": env,
			"properties": map[string]any{"directory": "site", "bucketName": bucket, "keyPrefix": "www/"}},
		"Logo": map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": env,
			"properties": map[string]any{"file": "logo.txt", "bucketName": bucket, "objectKey": "www/img/logo.txt"}},
	}), files{"site/index.html": "<h1>hi</h1>", "site/css/a.css": "h1{}", "logo.txt": "logo"})
	if _, err := Deploy(context.Background(), src, opts(cfg, nil)); err != nil {
		t.Fatal(err)
	}
	statusMatches(t, src, cfg)

	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	for _, k := range []string{"www/evil.html", "www/css/old.css", "other/keep.txt"} {
		if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k), Body: strings.NewReader("hand")}); err != nil {
			t.Fatal(err)
		}
	}
	statusSays(t, src, cfg, "Site", "2 extra objects under s3://"+bucket+"/www/ not in the assembly: s3://"+bucket+"/www/css/old.css, s3://"+bucket+"/www/evil.html")
	all := "other/keep.txt,www/css/a.css,www/css/old.css,www/evil.html,www/img/logo.txt,www/index.html"

	// Never by default; a plan says what Prune would delete and deletes nothing.
	for _, o := range []Options{opts(cfg, nil), func() Options { o := opts(cfg, nil); o.Plan, o.Prune = true, true; return o }()} {
		cnt := &Counter{}
		o.APIOptions = append(o.APIOptions, cnt.Middleware)
		res, err := Deploy(context.Background(), src, o)
		if err != nil {
			t.Fatal(err)
		}
		want := "left 2 extra objects"
		if o.Plan {
			want = "would delete 2 extra objects"
		}
		if acts := strings.Join(res.Droplet("Site").Actions, "\n"); !strings.Contains(acts, want) {
			t.Errorf("plan %v: actions %q, want %q", o.Plan, acts, want)
		}
		if n := cnt.Count("DeleteObjects") + cnt.Count("DeleteObject"); n != 0 {
			t.Errorf("plan %v: %d deletes", o.Plan, n)
		}
		if got := strings.Join(objects(t, cfg, bucket), ","); got != all {
			t.Errorf("plan %v: objects %s", o.Plan, got)
		}
	}

	o := opts(cfg, nil)
	o.Prune = true
	res, err := Deploy(context.Background(), src, o)
	if err != nil || res.Droplet("Site").Outcome != Updated {
		t.Fatalf("prune: %v %+v", err, res.Droplet("Site"))
	}
	if got := strings.Join(objects(t, cfg, bucket), ","); got != "other/keep.txt,www/css/a.css,www/img/logo.txt,www/index.html" {
		t.Errorf("after prune: %s", got)
	}
	statusMatches(t, src, cfg)
}
