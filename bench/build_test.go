package bench

import (
	stdzip "archive/zip"
	"compress/flate"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/packager"
)

// makeTree writes a project of n small templates and one incompressible
// blob of blobMiB, and returns its folder and total size.
func makeTree(b *testing.B, n, blobMiB int) (string, int64) {
	b.Helper()
	dir := b.TempDir()
	rng := rand.New(rand.NewSource(1))
	words := strings.Fields("app api web queue bucket table role policy key topic rule alarm log group cluster service")
	var total int64
	for i := 0; i < n; i++ {
		var sb strings.Builder
		sb.WriteString("Resources:\n")
		for r := 0; r < 20+rng.Intn(80); r++ {
			fmt.Fprintf(&sb, "  %s%s%d:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName: %s-%016x\n",
				words[rng.Intn(len(words))], words[rng.Intn(len(words))], rng.Intn(1000), words[rng.Intn(len(words))], rng.Uint64())
		}
		p := filepath.Join(dir, "templates", fmt.Sprintf("d%03d", i/100), fmt.Sprintf("t%05d.yaml", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		total += int64(sb.Len())
	}
	blob := make([]byte, blobMiB<<20)
	rng.Read(blob)
	os.MkdirAll(filepath.Join(dir, "images"), 0o755)
	os.WriteFile(filepath.Join(dir, "images", "app-image.tar"), blob, 0o644)
	total += int64(len(blob))
	os.WriteFile(filepath.Join(dir, "assembly.yaml"), []byte(`environment: aws://123456789012/eu-west-1
droplets:
  Templates:
    type: directory
    properties: {directory: templates, bucketName: bench-bucket}
  Image:
    type: file
    properties: {file: images/app-image.tar, bucketName: bench-bucket, objectKey: app-image.tar}
`), 0o644)
	return dir, total
}

// BenchmarkBuild runs the whole build (load, validate, package, parallel
// compression, temp file + rename) on 2,000 templates and a 32 MiB blob.
func BenchmarkBuild(b *testing.B) {
	dir, total := makeTree(b, 2000, 32)
	out := filepath.Join(b.TempDir(), "bench.cloud")
	b.SetBytes(total)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := packager.Build(context.Background(), dir, out, packager.BuildOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	st, _ := os.Stat(out)
	b.ReportMetric(float64(st.Size())/float64(total), "out/in")
}

// BenchmarkStdlibZip is the baseline: the same tree through archive/zip
// with compress/flate level 6 on one core, as zip -r -6 would.
func BenchmarkStdlibZip(b *testing.B) {
	dir, total := makeTree(b, 2000, 32)
	out := filepath.Join(b.TempDir(), "bench.zip")
	b.SetBytes(total)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := os.Create(out)
		if err != nil {
			b.Fatal(err)
		}
		zw := stdzip.NewWriter(f)
		zw.RegisterCompressor(stdzip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, 6) })
		err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(dir, p)
			w, err := zw.Create(filepath.ToSlash(rel))
			if err != nil {
				return err
			}
			src, err := os.Open(p)
			if err != nil {
				return err
			}
			defer src.Close()
			_, err = io.Copy(w, src)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		zw.Close()
		f.Close()
	}
	b.StopTimer()
	st, _ := os.Stat(out)
	b.ReportMetric(float64(st.Size())/float64(total), "out/in")
}
