package deploy

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func statesOf(st *StatusResult) map[string]string {
	out := map[string]string{}
	for _, d := range st.Droplets {
		out[d.ID] = d.State
	}
	return out
}

// Issue 27, item 10: status needs only what status reads. A template over
// 51,200 bytes is compared with no staging bucket named (GetTemplate needs
// none), and a docker-build droplet with no Docker engine is judged as far
// as status can, for that droplet alone. Before, both refused the whole
// assembly.
func TestStatusNeedsNoDeployPrerequisites(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	stage := "stage-" + u
	makeBucket(t, cfg, stage)
	src := signedSource(t, manifest(map[string]any{
		"Big": stack("Big", env, "big-"+u, "big.yaml", nil),
		"Build": map[string]any{"type": "npm://@cloud-assembly/docker.DockerBuildDroplet", "environment": env,
			"properties": map[string]any{"directory": "ctx", "repositoryName": "app-" + u, "imageTag": "v1"}},
	}), files{"big.yaml": bigTemplate(), "ctx/Dockerfile": "FROM scratch\n"})
	o := opts(cfg, nil)
	o.Only, o.StagingBucket, o.Method = []string{"Big"}, stage, Direct
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	o = opts(cfg, nil)
	o.DockerAvailable = func(context.Context) bool { return false }
	st, err := Status(context.Background(), src, o)
	if !errors.Is(err, ErrDiffers) || errors.Is(err, ErrStagingBucket) || errors.Is(err, ErrNoDocker) {
		t.Fatalf("status: %v", err)
	}
	states := statesOf(st)
	if states["Big"] != "match" || states["Build"] == "match" || states["Build"] == "" {
		t.Errorf("states %v, want Big match and Build judged on its own", states)
	}
	// A droplet status cannot judge (here: a deployer's own check fails)
	// says so for itself; the others are compared.
	bad := signedSource(t, manifest(map[string]any{
		"Big": stack("Big", env, "big-"+u, "big.yaml", nil),
		"Build": map[string]any{"type": "npm://@cloud-assembly/docker.DockerBuildDroplet", "environment": env,
			"properties": map[string]any{"directory": "ctx", "repositoryName": "app-" + u, "imageTag": "v1", "buildSecrets": map[string]any{"a": "b"}}},
	}), files{"big.yaml": bigTemplate(), "ctx/Dockerfile": "FROM scratch\n"})
	st, err = Status(context.Background(), bad, o)
	if !errors.Is(err, ErrDiffers) {
		t.Fatalf("status: %v", err)
	}
	if states := statesOf(st); states["Big"] != "match" || states["Build"] != "unknown" {
		t.Errorf("states %v, want Big match, Build unknown", states)
	}
}

// Issue 27, item 12: a droplet never deployed is absent, apart from one
// that differs; a stack another assembly's deploy made (its droplet the
// same) matches and names that assembly.
func TestStatusAbsentDiffersDeployedBy(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	bucket := "st-" + u
	makeBucket(t, cfg, bucket)
	m := manifest(map[string]any{
		"S":    stack("S", env, "st-"+u, "t.yaml", nil),
		"File": fileDroplet(bucket),
		"Site": map[string]any{"type": "npm://@aws-cdk/assets.DirectoryDroplet", "environment": env,
			"properties": map[string]any{"directory": "site", "bucketName": bucket, "keyPrefix": "site/"}},
	})
	fs := files{"t.yaml": topics(1), "f.txt": "f", "site/a.html": "a", "site/b.html": "b"}
	first := signedSource(t, m, fs)
	st, err := Status(context.Background(), first, opts(cfg, nil))
	if !errors.Is(err, ErrDiffers) {
		t.Fatal(err)
	}
	for id, s := range statesOf(st) {
		if s != "absent" {
			t.Errorf("before any deploy: %s is %s, want absent", id, s)
		}
	}
	if _, err := Deploy(context.Background(), first, opts(cfg, nil)); err != nil {
		t.Fatal(err)
	}
	// Other bytes in one object of each object droplet.
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	for _, key := range []string{"f.txt", "site/b.html"} {
		if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader([]byte("X"))}); err != nil {
			t.Fatal(err)
		}
	}
	fs["notes.txt"] = "another assembly, the same droplets"
	second := signedSource(t, m, fs)
	st, err = Status(context.Background(), second, opts(cfg, nil))
	if !errors.Is(err, ErrDiffers) {
		t.Fatal(err)
	}
	if states := statesOf(st); states["S"] != "match" || states["File"] != "differs" || states["Site"] != "differs" {
		t.Errorf("states %v, want S match, File and Site differs", states)
	}
	for _, d := range st.Droplets {
		switch {
		case d.ID == "S" && (d.DeployedBy == nil || *d.DeployedBy != first.SHA256):
			t.Errorf("S deployed by %v, want the first assembly, %s", d.DeployedBy, first.SHA256)
		case d.ID != "S" && d.DeployedBy != nil:
			t.Errorf("%s deployed by %v", d.ID, d.DeployedBy)
		}
	}
	st, _ = Status(context.Background(), first, opts(cfg, nil))
	for _, d := range st.Droplets {
		if d.DeployedBy != nil {
			t.Errorf("the deploying assembly: %s deployed by %v", d.ID, d.DeployedBy)
		}
	}
}
