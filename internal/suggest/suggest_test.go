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

func TestNearest(t *testing.T) {
	tests := []struct {
		name  string
		cands []string
		want  string
	}{
		{"Sizee", []string{"Name", "Size", "Sizes"}, "Size"},
		{"Tabel9x", []string{"Bucket", "Tables"}, "Tables"}, // 4 edits: not Closest, still the nearest
		{"same", []string{"same"}, ""},
		{"x", nil, ""},
	}
	for _, tt := range tests {
		if got := Nearest(tt.name, tt.cands); got != tt.want {
			t.Errorf("Nearest(%q, %v) = %q, want %q", tt.name, tt.cands, got, tt.want)
		}
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
