package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"

	"github.com/cloud-assembly/assemble/deploy"
)

// BenchmarkDiff20 (issue 31): `assemble diff` of a 20-stack assembly,
// each stack deployed and one property changed, --concurrency 4, through
// bench/latencyproxy (every AWS call held 50 ms, a real region's round
// trip; deploy.sh starts it and names it in
// ASSEMBLE_BENCH_LATENCY_ENDPOINT), and on moto as it is. Target: under
// 2 s, and no write call (anything but Get*, Describe*, List*, Head*
// fails the benchmark).
func BenchmarkDiff20(b *testing.B) {
	b.Run("moto", func(b *testing.B) { benchDiff(b, "") })
	b.Run("proxy=50ms", func(b *testing.B) {
		e := os.Getenv("ASSEMBLE_BENCH_LATENCY_ENDPOINT")
		if e == "" {
			b.Skip("no latency proxy: bench/deploy.sh starts bench/latencyproxy in front of moto_server and names it in ASSEMBLE_BENCH_LATENCY_ENDPOINT")
		}
		benchDiff(b, e)
	})
}

func benchDiff(b *testing.B, endpoint string) {
	cfg := benchConfig(b)
	u := uniqName()
	ds := map[string]any{}
	for i := 0; i < 20; i++ {
		ds[fmt.Sprintf("Stack%02d", i)] = stackDroplet(fmt.Sprintf("diff-%s-%02d", u, i))
	}
	deployed := signedSource(b, ds, map[string]string{"t.yaml": topicTemplate})
	if _, err := deploy.Deploy(context.Background(), deployed, deploy.Options{AWS: &cfg, PollInterval: 20 * time.Millisecond, Method: deploy.Direct, RequireApproval: deploy.ApproveNever}); err != nil {
		b.Fatal(err)
	}
	changed := signedSource(b, ds, map[string]string{"t.yaml": topicTemplate + "    Properties:\n      DisplayName: changed\n"})
	if endpoint != "" {
		cfg.BaseEndpoint = aws.String(endpoint)
	}
	counter := &deploy.Counter{}
	opts := deploy.DiffOptions{Options: deploy.Options{AWS: &cfg, Concurrency: 4, APIOptions: []func(*middleware.Stack) error{counter.Middleware}}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := deploy.Diff(context.Background(), changed, opts)
		if err != nil {
			b.Fatal(err)
		}
		if res.Changed != 20 || res.Total != 20 {
			b.Fatalf("%d of %d change, want 20 of 20", res.Changed, res.Total)
		}
	}
	b.StopTimer()
	var calls int64
	for op, n := range counter.Counts() {
		calls += n
		if !strings.HasPrefix(op, "Get") && !strings.HasPrefix(op, "Describe") && !strings.HasPrefix(op, "List") && !strings.HasPrefix(op, "Head") {
			b.Errorf("diff made a write call: %s (%d)", op, n)
		}
	}
	b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
	b.Logf("calls of %d diffs: %v", b.N, counter.Counts())
}
