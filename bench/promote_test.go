package bench

// Issue 30's promotion benchmark, against moto_server (skipped, saying why,
// without it): BenchmarkPromote promotes a signed 20-droplet assembly (12
// stacks, 4 files, 4 directories) to a target of 4 account/region pairs (2
// accounts x 2 regions, reached through the target's deployRole), with
// --concurrency 1 and 4 in alternating order each round, and reports the
// ratio of the medians (target <= 0.35). Then it promotes one of them again,
// unchanged, and counts the calls that change anything (target 0). Run
// through bench/latencyproxy (50 ms a call) by deploy.sh, which names it in
// ASSEMBLE_BENCH_LATENCY_ENDPOINT; without the proxy the "moto" half runs
// alone (moto answers one call at a time, so concurrency shows little).

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go/middleware"

	"github.com/cloud-assembly/assemble/deploy"
)

var promotePairs = []string{
	"aws://111111111111/us-east-1", "aws://111111111111/eu-west-1",
	"aws://222222222222/us-east-1", "aws://222222222222/eu-west-1",
}

func BenchmarkPromote(b *testing.B) {
	b.Run("moto", func(b *testing.B) { benchPromote(b, "") })
	b.Run("proxy=50ms", func(b *testing.B) {
		e := os.Getenv("ASSEMBLE_BENCH_LATENCY_ENDPOINT")
		if e == "" {
			b.Skip("no latency proxy: bench/deploy.sh starts bench/latencyproxy in front of moto_server and names it in ASSEMBLE_BENCH_LATENCY_ENDPOINT")
		}
		benchPromote(b, e)
	})
}

// promoteSource is a signed 20-droplet assembly with target prod over
// promotePairs; every name holds run, so that each run creates anew.
func promoteSource(b *testing.B, bucketPrefix, run string) *deploy.Source {
	agnostic := "aws://unknown-account/unknown-region"
	bucket := bucketPrefix + `-\${AWS::AccountId}-\${AWS::Region}`
	ds := map[string]any{}
	files := map[string]string{"t.yaml": "Parameters:\n  Stage:\n    Type: String\nResources:\n  Topic:\n    Type: AWS::SNS::Topic\n"}
	for i := 0; i < 12; i++ {
		ds[fmt.Sprintf("Stack%02d", i)] = map[string]any{"type": "npm://@aws-cdk/aws-cloudformation.StackDroplet", "environment": agnostic,
			"properties": map[string]any{"stackName": fmt.Sprintf("promote-%s-%02d", run, i), "template": "t.yaml", "parameters": map[string]any{"Stage": "${target.Stage}"}}}
	}
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("files/f%02d.txt", i)
		files[name] = fmt.Sprintf("file %d", i)
		ds[fmt.Sprintf("File%02d", i)] = map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": agnostic,
			"properties": map[string]any{"file": name, "bucketName": bucket, "objectKey": run + "/" + name}}
	}
	for i := 0; i < 4; i++ {
		for j := 0; j < 3; j++ {
			files[fmt.Sprintf("site%d/p%d.html", i, j)] = fmt.Sprintf("<p>%d %d</p>", i, j)
		}
		ds[fmt.Sprintf("Site%d", i)] = map[string]any{"type": "npm://@aws-cdk/assets.DirectoryDroplet", "environment": agnostic,
			"properties": map[string]any{"directory": fmt.Sprintf("site%d", i), "bucketName": bucket, "keyPrefix": fmt.Sprintf("%s/site%d/", run, i)}}
	}
	targets := map[string]any{"prod": map[string]any{"environments": promotePairs, "values": map[string]string{"Stage": "prod"},
		"deployRole": "arn:aws:iam::${AWS::AccountId}:role/release-deployer"}}
	return signedSourceWith(b, ds, files, targets)
}

func benchPromote(b *testing.B, endpoint string) {
	cfg := benchConfig(b)
	if endpoint != "" {
		cfg.BaseEndpoint = aws.String(endpoint)
	}
	prefix := "promote-" + uniqName()
	for _, p := range promotePairs {
		acct, region := p[6:18], p[19:]
		c := cfg.Copy()
		c.Region = region
		c.Credentials = aws.NewCredentialsCache(stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), "arn:aws:iam::"+acct+":role/bench-admin"))
		in := &s3.CreateBucketInput{Bucket: aws.String(prefix + "-" + acct + "-" + region)}
		if region != "us-east-1" {
			in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(region)}
		}
		if _, err := s3.NewFromConfig(c, func(o *s3.Options) { o.UsePathStyle = true }).CreateBucket(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
	var last *deploy.Source
	run := func(concurrency int) time.Duration {
		src := promoteSource(b, prefix, uniqName())
		last = src
		start := time.Now()
		res, err := deploy.Deploy(context.Background(), src, deploy.Options{AWS: &cfg, Target: "prod", Concurrency: concurrency, PollInterval: 20 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Pairs) != len(promotePairs) {
			b.Fatalf("%d pairs", len(res.Pairs))
		}
		return time.Since(start)
	}
	run(4) // warm moto's per-account backends up
	var one, four []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			one = append(one, run(1))
			four = append(four, run(4))
		} else {
			four = append(four, run(4))
			one = append(one, run(1))
		}
	}
	b.StopTimer()
	median := func(ds []time.Duration) time.Duration {
		slices.Sort(ds)
		return ds[len(ds)/2]
	}
	m1, m4 := median(one), median(four)
	b.ReportMetric(m1.Seconds(), "s-concurrency-1")
	b.ReportMetric(m4.Seconds(), "s-concurrency-4")
	b.ReportMetric(m4.Seconds()/m1.Seconds(), "ratio")

	// The last assembly promoted again, unchanged: no call changes anything.
	counter := &deploy.Counter{}
	res, err := deploy.Deploy(context.Background(), last, deploy.Options{AWS: &cfg, Target: "prod", APIOptions: []func(*middleware.Stack) error{counter.Middleware}, PollInterval: 20 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	var changing int64
	for _, op := range []string{"PutObject", "CreateMultipartUpload", "CreateChangeSet", "ExecuteChangeSet", "CreateStack", "UpdateStack", "DeleteStack", "DeleteObject"} {
		changing += counter.Count(op)
	}
	for _, p := range res.Pairs {
		for _, d := range p.Droplets {
			if d.Outcome != deploy.Unchanged {
				b.Errorf("re-promotion %s: %s %s", p.Environment, d.ID, d.Outcome)
			}
		}
	}
	if changing != 0 {
		b.Errorf("an unchanged re-promotion made %d changing calls: %v", changing, counter.Counts())
	}
	b.ReportMetric(float64(changing), "changing-calls-repromote")
	b.Logf("unchanged re-promotion to %d pairs: calls %v", len(promotePairs), counter.Counts())
}
