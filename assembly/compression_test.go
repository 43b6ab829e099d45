package assembly

import (
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zip"
)

// compressionInputs are the kinds of data issue 23 names, 3 MiB or so each
// (several chunks): text (Go's own sources), JSON, base64 of random bytes,
// and random bytes.
func compressionInputs(t testing.TB) map[string][]byte {
	t.Helper()
	const size = 3 << 20
	rng := rand.New(rand.NewSource(23))
	var text bytes.Buffer
	filepath.WalkDir(filepath.Join(runtime.GOROOT(), "src", "net", "http"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && text.Len() < size && strings.HasSuffix(p, ".go") {
			b, _ := os.ReadFile(p)
			text.Write(b)
		}
		return nil
	})
	if text.Len() < 1<<20 {
		t.Skipf("GOROOT sources not found (%d bytes of text)", text.Len())
	}
	type record struct {
		ID    int      `json:"id"`
		Name  string   `json:"name"`
		Value float64  `json:"value"`
		Tags  []string `json:"tags"`
		UUID  string   `json:"uuid"`
	}
	var recs []record
	words := strings.Fields("app api web queue bucket table role policy key topic")
	for i := 0; len(recs)*120 < size; i++ {
		recs = append(recs, record{i, words[rng.Intn(len(words))] + "-" + words[rng.Intn(len(words))], rng.Float64(),
			[]string{words[rng.Intn(len(words))], words[rng.Intn(len(words))]}, base64.RawURLEncoding.EncodeToString(randBytes(rng, 16))})
	}
	js, _ := json.MarshalIndent(recs, "", " ")
	raw := randBytes(rng, size*3/4)
	b64 := []byte(base64.StdEncoding.EncodeToString(raw))
	var wrapped bytes.Buffer
	for len(b64) > 76 {
		wrapped.Write(b64[:76])
		wrapped.WriteByte('\n')
		b64 = b64[76:]
	}
	wrapped.Write(b64)
	return map[string][]byte{
		"text.go":    text.Bytes(),
		"data.json":  js,
		"base64.txt": wrapped.Bytes(),
		"random.bin": randBytes(rng, size),
	}
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	rng.Read(b)
	return b
}

// zlib6 is the size Go's compress/flate gives at level 6: zlib's algorithm
// (lazy matching, the same chain lengths), which Info-ZIP's zip -6 uses,
// though not its hash (Go's finds matches of 4 bytes and more).
func zlib6(b []byte) int {
	var buf bytes.Buffer
	fw, _ := flate.NewWriter(&buf, 6)
	fw.Write(b)
	fw.Close()
	return buf.Len()
}

// Issue 23: text, JSON and base64 compress within 2% of Info-ZIP's zip -6
// (.ci/run installs it; without it, within 6% of compress/flate -6), and
// random data no worse. Before, base64 of random bytes came out 1% smaller
// (zip -6: 24%), text 3% larger than zip -6's.
func TestCompressionMatchesZip6(t *testing.T) {
	inputs := compressionInputs(t)
	w := NewWriter(WriterOptions{})
	for name, b := range inputs {
		if err := w.AddBytes(name, b); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	zipSizes := infoZip6(t, inputs)
	for _, f := range r.Files() {
		in := inputs[f.Name()]
		got := int(f.zf.FileHeader.CompressedSize64)
		flate6 := zlib6(in)
		t.Logf("%-10s %9d bytes: ours %9d, zip -6 %9d, Go's flate -6 %9d", f.Name(), len(in), got, zipSizes[f.Name()], flate6)
		if z, ok := zipSizes[f.Name()]; ok {
			if float64(got) > 1.02*float64(z) {
				t.Errorf("%s: %d bytes compressed, more than 2%% over zip -6's %d", f.Name(), got, z)
			}
		} else if float64(got) > 1.06*float64(flate6) {
			// Go's flate finds more matches than zlib in some data
			// (JSON: 3% fewer bytes than zip -6).
			t.Errorf("%s: %d bytes compressed, more than 6%% over compress/flate -6's %d", f.Name(), got, flate6)
		}
	}
}

// infoZip6 returns the compressed size of each input in zip -6's archive,
// or nothing when zip is not installed.
func infoZip6(t *testing.T, inputs map[string][]byte) map[string]int {
	zipCmd, err := exec.LookPath("zip")
	if err != nil {
		t.Log("zip is not installed: comparing with compress/flate level 6 only")
		return nil
	}
	dir := t.TempDir()
	var names []string
	for name, b := range inputs {
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
		names = append(names, name)
	}
	cmd := exec.Command(zipCmd, append([]string{"-q", "-6", "out.zip"}, names...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("zip: %v\n%s", err, out)
	}
	zr, err := zip.OpenReader(filepath.Join(dir, "out.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	sizes := map[string]int{}
	for _, f := range zr.File {
		sizes[f.Name] = int(f.CompressedSize64)
	}
	return sizes
}

func TestEntropy(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, c := range []struct {
		name     string
		data     []byte
		min, max float64
	}{
		{"empty", nil, 0, 0},
		{"one byte repeated", bytes.Repeat([]byte{'a'}, 1000), 0, 0},
		{"two bytes alternating", bytes.Repeat([]byte("ab"), 1000), 1, 1},
		{"random", randBytes(rng, 1<<20), highEntropy, 8},
		{"base64", []byte(base64.StdEncoding.EncodeToString(randBytes(rng, 1<<20))), 5.9, 6.01},
	} {
		if e := entropy(c.data); e < c.min-1e-9 || e > c.max+1e-9 {
			t.Errorf("%s: entropy %.4f, want %.2f..%.2f", c.name, e, c.min, c.max)
		}
	}
}

// BenchmarkCompression is each kind of data through the writer: speed
// (MB/s) and out/in.
func BenchmarkCompression(b *testing.B) {
	for name, data := range compressionInputs(b) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			var n int64
			for i := 0; i < b.N; i++ {
				w := NewWriter(WriterOptions{})
				w.AddBytes(name, data)
				var buf bytes.Buffer
				w.WriteTo(context.Background(), &buf)
				n = int64(buf.Len())
			}
			b.ReportMetric(float64(n)/float64(len(data)), "out/in")
		})
	}
}
