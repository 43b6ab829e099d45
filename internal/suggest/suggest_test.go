package suggest

import (
	"strings"
	"testing"
)

func TestClosest(t *testing.T) {
	tests := []struct {
		name  string
		cands []string
		want  string
	}{
		{"keyprefix", []string{"directory", "bucketName", "keyPrefix"}, "keyPrefix"},
		{"Netwrk", []string{"Network", "Service"}, "Network"},
		{"bucket", []string{"bucketName", "objectKey"}, ""},
		{"VpcID", []string{"SubnetId", "VpcId"}, "VpcId"},
		{"same", []string{"same"}, ""},
		{"x", nil, ""},
		{strings.Repeat("a", 65), []string{strings.Repeat("a", 65) + "b"}, ""},
	}
	for _, tt := range tests {
		if got := Closest(tt.name, tt.cands); got != tt.want {
			t.Errorf("Closest(%q, %v) = %q, want %q", tt.name, tt.cands, got, tt.want)
		}
	}
	if got := Hint("keyprefix", []string{"keyPrefix"}); got != ` (did you mean "keyPrefix"?)` {
		t.Errorf("Hint = %q", got)
	}
}

// TestNearest: Nearest agrees with Closest where Closest finds a name, and
// also names a farther one.
func TestNearest(t *testing.T) {
	for _, tt := range []struct{ name, want string }{{"Sizee", "Size"}, {"Tabel9x", "Tables"}, {"Size", "Sizes"}} {
		cands := []string{"Bucket", "Size", "Sizes", "Tables"}
		if got := Nearest(tt.name, cands); got != tt.want {
			t.Errorf("Nearest(%q) = %q, want %q", tt.name, got, tt.want)
		}
		if c := Closest(tt.name, cands); c != "" && c != Nearest(tt.name, cands) {
			t.Errorf("Closest(%q) = %q but Nearest differs", tt.name, c)
		}
	}
	if got := Nearest("x", nil); got != "" {
		t.Errorf("Nearest over nothing = %q", got)
	}
}

// The distance is a metric on the names it measures: symmetric, zero only
// between equal strings, and within the triangle inequality.
func FuzzDistance(f *testing.F) {
	f.Add("keyprefix", "keyPrefix", "kp")
	f.Add("", "abc", "ab")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		if len(a) > 64 || len(b) > 64 || len(c) > 64 {
			return
		}
		ab, ba := distance(a, b), distance(b, a)
		if ab != ba {
			t.Fatalf("d(%q,%q)=%d but d(%q,%q)=%d", a, b, ab, b, a, ba)
		}
		if (ab == 0) != (a == b) {
			t.Fatalf("d(%q,%q)=%d", a, b, ab)
		}
		if ac, cb := distance(a, c), distance(c, b); ab > ac+cb {
			t.Fatalf("triangle: d(a,b)=%d > d(a,c)+d(c,b)=%d+%d", ab, ac, cb)
		}
	})
}
