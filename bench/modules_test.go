// Package bench holds benchmarks that make their own data.
package bench

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/packager"
)

// genScript writes module-heavy templates (see its doc string).
var genScript = filepath.Join("..", "..", "shared", "bench", "gen_modules.py")

// generate runs gen_modules.py for the sizes into dir; it skips the
// benchmark when the script or python3 is missing.
func generate(b *testing.B, dir string, k int, sizes ...int) {
	b.Helper()
	if _, err := os.Stat(genScript); err != nil {
		b.Skip("gen_modules.py not present:", err)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("python3 not found")
	}
	s := make([]string, len(sizes))
	for i, n := range sizes {
		s[i] = fmt.Sprint(n)
	}
	cmd := exec.Command(python, genScript, "--out", dir, "--sizes", strings.Join(s, ","), "--k", fmt.Sprint(k))
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("gen_modules.py: %v\n%s", err, out)
	}
}

// wantResources reads the resource count from the generator's expect.txt.
func wantResources(b *testing.B, dir string) int {
	f, err := os.Open(filepath.Join(dir, "expect.txt"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var n int
		if _, err := fmt.Sscanf(sc.Text(), "resources %d", &n); err == nil {
			return n
		}
	}
	b.Fatal("expect.txt has no resources line")
	return 0
}

// BenchmarkPackageModules packages templates with N module instances (plus
// a nested chain and, with K > 0, a ForEach of K items). Time per
// operation must grow linearly with N.
func BenchmarkPackageModules(b *testing.B) {
	dir := b.TempDir()
	sizes := []int{10, 100, 1000, 5000}
	k := 0
	if v := os.Getenv("BENCH_K"); v != "" {
		fmt.Sscan(v, &k)
	}
	generate(b, dir, k, sizes...)
	for _, n := range sizes {
		d := filepath.Join(dir, fmt.Sprintf("n%d", n))
		want := wantResources(b, d)
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				out, err := packager.PackageTemplate(filepath.Join(d, "template.yaml"), packager.PackageOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if i == 0 {
					if got := strings.Count(string(out), "\n    Type: AWS::"); got != want {
						b.Fatalf("packaged %d resources, want %d", got, want)
					}
				}
			}
		})
	}
}
