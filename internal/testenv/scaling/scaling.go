// Package scaling compares how long the same work takes at two sizes, for
// tests that must show work grows linearly (or not at all) with its input
// without asserting a wall-clock limit, which a loaded machine breaks.
//
// Each measurement is the fastest of several runs, the two sizes'
// runs interleaved so that a burst of load slows both alike, and a ratio
// past the bound is measured again (twice) before it fails: load can
// inflate one attempt, a quadratic algorithm fails every one.
package scaling

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Rounds is how many runs of each function Ratio takes the fastest of.
const Rounds = 3

// Attempts is how many times a comparison is measured before it fails.
const Attempts = 3

// Ratio runs small and large Rounds times each, interleaved, and returns
// the fastest run of each and large's over small's.
func Ratio(small, large func()) (time.Duration, time.Duration, float64) {
	s, l := time.Duration(1<<63-1), time.Duration(1<<63-1)
	for i := 0; i < Rounds; i++ {
		s = min(s, timed(small))
		l = min(l, timed(large))
	}
	return s, l, float64(l) / float64(max(s, time.Microsecond))
}

func timed(f func()) time.Duration {
	runtime.GC()
	start := time.Now()
	f()
	return time.Since(start)
}

// AtMost fails t unless large takes at most bound times as long as
// small, in any of Attempts measurements.
func AtMost(t testing.TB, what string, bound float64, small, large func()) {
	t.Helper()
	var s, l time.Duration
	var r float64
	for i := 0; i < Attempts; i++ {
		if s, l, r = Ratio(small, large); r <= bound {
			t.Logf("%s: %v, then %v (%.1fx, at most %.1fx)", what, s, l, r, bound)
			return
		}
	}
	t.Fatalf("%s: %v, then %v: %.1f times as long (at most %.1f)", what, s, l, r, bound)
}

// Linear fails t unless run(4n) takes at most 9 times as long as run(n):
// linear work takes about 4 times as long, quadratic work 16 times.
func Linear(t testing.TB, what string, n int, run func(n int)) {
	t.Helper()
	AtMost(t, what+" (n, then 4n)", 9, func() { run(n) }, func() { run(4 * n) })
}

// Bounded fails t unless run(4n) takes at most twice as long as run(n):
// work a limit stops early does not grow with its input.
func Bounded(t testing.TB, what string, n int, run func(n int)) {
	t.Helper()
	AtMost(t, what+" (n, then 4n)", 2, func() { run(n) }, func() { run(4 * n) })
}

// BytesRead runs f and returns how many bytes the process read meanwhile
// (read and pread system calls, Linux's /proc/self/io rchar): a count,
// not a time, for tests that show work does not read its input. ok is
// false where the count is not available.
func BytesRead(f func()) (n int64, ok bool) {
	before, ok := rchar()
	f()
	after, ok2 := rchar()
	return after - before, ok && ok2
}

func rchar() (int64, bool) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}
