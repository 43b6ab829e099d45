package scaling

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// spin does n units of work that take time in proportion to n.
func spin(n int) {
	x := 0
	for i := 0; i < n*1000; i++ {
		x += i ^ (x >> 3)
	}
	sink = x
}

var sink int

// TestRatio: linear work measures about 4 times as long at 4n, quadratic
// work far more; AtMost passes the first and Linear would fail the second.
func TestRatio(t *testing.T) {
	Linear(t, "linear spin", 2000, spin)
	_, _, r := Ratio(func() { spin(200 * 200 / 50) }, func() { spin(800 * 800 / 50) })
	if r < 9 {
		t.Errorf("quadratic work measured %.1fx, want more than 9", r)
	}
	Bounded(t, "constant sleep", 1, func(n int) { time.Sleep(20 * time.Millisecond) })
}

// TestBytesRead: reading a file counts its bytes; work that reads nothing
// counts (almost) none.
func TestBytesRead(t *testing.T) {
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	n, ok := BytesRead(func() { os.ReadFile(name) })
	if !ok {
		t.Skip("no /proc/self/io here")
	}
	if n < 1<<20 {
		t.Errorf("reading 1 MiB counted %d bytes", n)
	}
	if n, _ := BytesRead(func() { spin(10) }); n > 64<<10 {
		t.Errorf("reading nothing counted %d bytes", n)
	}
}
