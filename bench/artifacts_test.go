package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/packager"
)

// BenchmarkBuildArtifacts builds a template of 20 Lambda functions, each
// with a 1 MiB folder of 16 source-like files (bench/artifacts.sh runs 200
// of them against aws cloudformation package): folder zips, hashing, the
// file droplets and the .cloud.
func BenchmarkBuildArtifacts(b *testing.B) {
	dir := b.TempDir()
	words := strings.Fields("const let function return async await import export handler event context request response json")
	var tmpl strings.Builder
	tmpl.WriteString("Resources:\n")
	var total int64
	for i := 0; i < 20; i++ {
		rng := rand.New(rand.NewSource(int64(i)))
		for j := 0; j < 16; j++ {
			var sb strings.Builder
			for sb.Len() < 64<<10 {
				fmt.Fprintf(&sb, "  %s %s_%d = %s();\n", words[rng.Intn(len(words))], words[rng.Intn(len(words))], rng.Intn(10000), words[rng.Intn(len(words))])
			}
			p := filepath.Join(dir, fmt.Sprintf("fn%03d", i), fmt.Sprintf("m%02d.js", j))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
				b.Fatal(err)
			}
			total += int64(sb.Len())
		}
		fmt.Fprintf(&tmpl, "  Fn%03d:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: fn%03d\n", i, i)
	}
	file := filepath.Join(dir, "template.yaml")
	os.WriteFile(file, []byte(tmpl.String()), 0o644)
	b.SetBytes(total)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := packager.Load(file, packager.BuildOptions{AssetBucket: "bench-assets", Environment: "aws://123456789012/us-east-1"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.WriteTo(context.Background(), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
