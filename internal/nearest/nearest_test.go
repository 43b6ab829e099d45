package nearest

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"Size", "Size", 0}, {"Sizee", "Size", 1}, {"size", "SIZE", 0},
		{"Bucket", "Bukcet", 2}, {"", "abc", 3}, {"kitten", "sitting", 3},
	} {
		if got := Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	long := strings.Repeat("x", maxLen+1)
	if got := Distance(long, "x"); got != len(long)+1 {
		t.Errorf("Distance of an over-long name = %d, want %d", got, len(long)+1)
	}
}

func TestName(t *testing.T) {
	if got, d := Name("Sizee", []string{"Name", "Size", "Sizes"}); got != "Size" || d != 1 {
		t.Errorf("Name = %q, %d; want Size, 1", got, d)
	}
	if got, d := Name("X", nil); got != "" || d != -1 {
		t.Errorf("Name over nothing = %q, %d", got, d)
	}
	if got := Close("Propertes", []string{"Source", "Properties", "Overrides"}); got != "Properties" {
		t.Errorf("Close = %q, want Properties", got)
	}
	if got := Close("Zzz", []string{"Source", "Properties"}); got != "" {
		t.Errorf("Close = %q, want nothing", got)
	}
}

// FuzzDistance checks the metric's laws: symmetry, identity, the length
// bounds and the triangle inequality.
func FuzzDistance(f *testing.F) {
	f.Add("Sizee", "Size", "Sizes")
	f.Add("", "a", "ab")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if len(a) > maxLen || len(b) > maxLen || len(c) > maxLen {
			return
		}
		la, lb := strings.ToLower(a), strings.ToLower(b)
		dab := Distance(a, b)
		if dab != Distance(b, a) {
			t.Fatal("not symmetric")
		}
		if (dab == 0) != (la == lb) {
			t.Fatalf("Distance(%q, %q) = %d", a, b, dab)
		}
		if dab > max(len(la), len(lb)) || dab < abs(len(la)-len(lb)) {
			t.Fatalf("Distance(%q, %q) = %d out of bounds", a, b, dab)
		}
		if dab > Distance(a, c)+Distance(c, b) {
			t.Fatal("triangle inequality broken")
		}
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
