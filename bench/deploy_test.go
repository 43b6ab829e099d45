package bench

// Issue 20's deploy benchmarks, against moto_server (skipped, saying why,
// without it): go test -run '^$' -bench Deploy ./bench, or deploy.sh.
//
//   - BenchmarkDeployUnchanged: a second deploy of an unchanged assembly of
//     20 droplets (10 stacks, 6 files, 4 directories) makes no upload and
//     executes no change set: the AWS calls are counted (per operation,
//     an SDK middleware) and reported per deploy.
//   - BenchmarkDeployConcurrency: 16 independent stacks created with
//     --concurrency 1 and with 4, in alternating order each round; the
//     ratio of the medians is reported (target <= 0.35).

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/deploy"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/testenv/moto"
	"github.com/cloud-assembly/assemble/signing"
)

func TestMain(m *testing.M) { moto.Main(m) }

const benchEnv = "aws://123456789012/us-east-1"

func uniqName() string {
	b := make([]byte, 4)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// signedSource writes, signs and verifies an assembly of the manifest's
// droplets and the files.
func signedSource(b *testing.B, droplets map[string]any, files map[string]string) *deploy.Source {
	return signedSourceWith(b, droplets, files, nil)
}

// signedSourceWith is signedSource with the manifest's targets.
func signedSourceWith(b *testing.B, droplets map[string]any, files map[string]string, targets map[string]any) *deploy.Source {
	b.Helper()
	w := assembly.NewWriter(assembly.WriterOptions{})
	doc := map[string]any{"schema": "cloud-assembly/1.0", "droplets": droplets}
	if targets != nil {
		doc["targets"] = targets
	}
	m, _ := json.Marshal(doc)
	w.AddBytes("manifest.json", m)
	for n, body := range files {
		w.AddBytes(n, []byte(body))
	}
	dir := b.TempDir()
	in, out := filepath.Join(dir, "u.cloud"), filepath.Join(dir, "s.cloud")
	if err := w.WriteFile(context.Background(), in); err != nil {
		b.Fatal(err)
	}
	keys := func(name string) openpgp.EntityList { return readKeys(b, name) }
	signers, err := signing.LoadSigners(&signing.SignerOptions{KeyFile: filepath.Join("..", "fixtures", "keys", "ed25519.sec.asc")})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := signing.SealFile(context.Background(), in, out, signers, nil); err != nil {
		b.Fatal(err)
	}
	rc, err := assembly.Open(out)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { rc.Close() })
	v, err := signing.Verify(context.Background(), &rc.Reader, keys("ed25519.pub.asc"), nil)
	if err != nil {
		b.Fatal(err)
	}
	raw, _ := os.ReadFile(out)
	return deploy.FromVerified(v, digest.Of(raw))
}

func readKeys(b *testing.B, name string) openpgp.EntityList {
	f, err := os.Open(filepath.Join("..", "fixtures", "keys", name))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	el, err := signing.ReadKeys(f)
	if err != nil {
		b.Fatal(err)
	}
	return el
}

func benchConfig(b *testing.B) aws.Config {
	moto.Env(b)
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return cfg
}

func stackDroplet(name string) map[string]any {
	return map[string]any{"type": "npm://@aws-cdk/aws-cloudformation.StackDroplet", "environment": benchEnv,
		"properties": map[string]any{"stackName": name, "template": "t.yaml"}}
}

const topicTemplate = "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n"

func BenchmarkDeployUnchanged(b *testing.B) {
	cfg := benchConfig(b)
	u := uniqName()
	bucket := "bench-" + u
	if _, err := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true }).CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		b.Fatal(err)
	}
	ds := map[string]any{}
	files := map[string]string{"t.yaml": topicTemplate}
	for i := 0; i < 10; i++ {
		ds[fmt.Sprintf("Stack%02d", i)] = stackDroplet(fmt.Sprintf("unchanged-%s-%02d", u, i))
	}
	for i := 0; i < 6; i++ {
		name := fmt.Sprintf("files/f%02d.txt", i)
		files[name] = fmt.Sprintf("file %d", i)
		ds[fmt.Sprintf("File%02d", i)] = map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": benchEnv,
			"properties": map[string]any{"file": name, "bucketName": bucket, "objectKey": name}}
	}
	for i := 0; i < 4; i++ {
		for j := 0; j < 5; j++ {
			files[fmt.Sprintf("site%d/p%d.html", i, j)] = fmt.Sprintf("<p>%d %d</p>", i, j)
		}
		ds[fmt.Sprintf("Site%d", i)] = map[string]any{"type": "npm://@aws-cdk/assets.DirectoryDroplet", "environment": benchEnv,
			"properties": map[string]any{"directory": fmt.Sprintf("site%d", i), "bucketName": bucket, "keyPrefix": fmt.Sprintf("site%d/", i)}}
	}
	src := signedSource(b, ds, files)
	opts := deploy.Options{AWS: &cfg, PollInterval: 20 * time.Millisecond}
	if _, err := deploy.Deploy(context.Background(), src, opts); err != nil {
		b.Fatal(err)
	}
	counter := &deploy.Counter{}
	opts.APIOptions = []func(*middleware.Stack) error{counter.Middleware}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := deploy.Deploy(context.Background(), src, opts)
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range res.Droplets {
			if d.Outcome != deploy.Unchanged {
				b.Fatalf("%s: %s", d.ID, d.Outcome)
			}
		}
	}
	b.StopTimer()
	var calls int64
	for _, n := range counter.Counts() {
		calls += n
	}
	for _, op := range []string{"PutObject", "ExecuteChangeSet", "CreateChangeSet", "CreateStack", "UpdateStack"} {
		if n := counter.Count(op); n != 0 {
			b.Errorf("an unchanged deploy called %s %d times", op, n)
		}
	}
	b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
	b.ReportMetric(float64(counter.Count("PutObject"))/float64(b.N), "uploads/op")
	b.ReportMetric(float64(counter.Count("ExecuteChangeSet"))/float64(b.N), "executed-change-sets/op")
	b.Logf("calls of %d deploys: %v", b.N, counter.Counts())
}

// BenchmarkDeployConcurrency: "moto" is moto as it is (every call CPU in
// one Python process, which concurrency cannot speed up on a loaded 2-core
// machine); "proxy=50ms" goes through bench/latencyproxy, which holds
// every call 50 ms before moto sees it: the round trip to a real region,
// where CloudFormation's own time would add far more waiting that
// concurrency overlaps. deploy.sh starts the proxy and names it in
// ASSEMBLE_BENCH_LATENCY_ENDPOINT; without it that half is skipped.
func BenchmarkDeployConcurrency(b *testing.B) {
	b.Run("moto", func(b *testing.B) { benchConcurrency(b, "") })
	b.Run("proxy=50ms", func(b *testing.B) {
		e := os.Getenv("ASSEMBLE_BENCH_LATENCY_ENDPOINT")
		if e == "" {
			b.Skip("no latency proxy: bench/deploy.sh starts bench/latencyproxy in front of moto_server and names it in ASSEMBLE_BENCH_LATENCY_ENDPOINT")
		}
		benchConcurrency(b, e)
	})
}

func benchConcurrency(b *testing.B, endpoint string) {
	cfg := benchConfig(b)
	if endpoint != "" {
		cfg.BaseEndpoint = aws.String(endpoint)
	}
	var apiOptions []func(*middleware.Stack) error
	// Where the time goes: per run, the calls, the time spent in them as
	// the client sees it (summed over calls), this process's CPU and
	// moto_server's (the child process's, from /proc).
	type account struct {
		wall, inCalls, goCPU, motoCPU time.Duration
		calls                         int64
		ops                           map[string]int64 // the last run's calls
	}
	var acct [5]account
	run := func(concurrency int) time.Duration {
		u := uniqName()
		ds := map[string]any{}
		for i := 0; i < 16; i++ {
			ds[fmt.Sprintf("Stack%02d", i)] = stackDroplet(fmt.Sprintf("conc-%s-%02d", u, i))
		}
		src := signedSource(b, ds, map[string]string{"t.yaml": topicTemplate})
		var inCalls, calls atomic.Int64
		timing := func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("benchTiming", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				t := time.Now()
				out, md, err := next.HandleInitialize(ctx, in)
				inCalls.Add(int64(time.Since(t)))
				calls.Add(1)
				return out, md, err
			}), middleware.Before)
		}
		counter := &deploy.Counter{}
		goCPU0, motoCPU0 := selfCPU(), childrenCPU()
		start := time.Now()
		if _, err := deploy.Deploy(context.Background(), src, deploy.Options{AWS: &cfg, APIOptions: append(slices.Clone(apiOptions), timing, counter.Middleware), Concurrency: concurrency, PollInterval: 20 * time.Millisecond}); err != nil {
			b.Fatal(err)
		}
		wall := time.Since(start)
		a := &acct[concurrency]
		a.wall += wall
		a.inCalls += time.Duration(inCalls.Load())
		a.goCPU += selfCPU() - goCPU0
		a.motoCPU += childrenCPU() - motoCPU0
		a.calls += calls.Load()
		a.ops = counter.Counts()
		return wall
	}
	run(4) // warm moto up
	acct[4] = account{}
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
	for _, c := range []int{1, 4} {
		a, n := acct[c], time.Duration(b.N)
		b.Logf("--concurrency %d, per deploy of 16 stacks: wall %v, %d calls, in calls %v (summed), this process's CPU %v, moto_server's CPU %v; calls %v",
			c, (a.wall / n).Round(time.Millisecond), a.calls/int64(b.N), (a.inCalls / n).Round(time.Millisecond), (a.goCPU / n).Round(time.Millisecond), (a.motoCPU / n).Round(time.Millisecond), a.ops)
	}
	m1, m4 := median(one), median(four)
	b.ReportMetric(m1.Seconds(), "s-concurrency-1")
	b.ReportMetric(m4.Seconds(), "s-concurrency-4")
	b.ReportMetric(m4.Seconds()/m1.Seconds(), "ratio")
}

// selfCPU is this process's CPU time, user and system.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// childrenCPU is the CPU time, user and system, of this process's running
// children (moto_server) and of the process $ASSEMBLE_BENCH_MOTO_PID
// (the moto_server deploy.sh started), read from /proc (0 where there is
// none).
func childrenCPU() time.Duration {
	entries, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	var ticks int64
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... utime(14) stime(15): after the ")".
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		// deploy.sh starts moto_server itself and names it.
		if len(f) < 13 || (f[1] != self && e.Name() != os.Getenv("ASSEMBLE_BENCH_MOTO_PID")) {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + st
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}
