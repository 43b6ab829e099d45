package cfn

import (
	"errors"
	"testing"

	"github.com/cloud-assembly/assemble/packager/cfn/internal/ynodetest"
)

// TestSubstituterText: the loop variables are replaced in one pass, the
// longer variable winning where two start at one place, and what a value
// puts in is not scanned again.
func TestSubstituterText(t *testing.T) {
	value := ynodetest.Parse(t, `{Port: 80, Host: h, Self: "$Identifier", Obj: {a: 1}}`)
	for _, tc := range []struct {
		ident, in, want string
	}{
		{"Identifier", "$Identifier-$Index", "a-b-2"},
		{"Identifier", "${Identifier}/&{Identifier}/${Index}", "a-b/ab/2"},
		{"Identifier", "${Value.Port}/$Value.Host.", "80/h."},
		{"Identifier", "$Indexes $$Value.Port", "2es $80"},
		{"Identifier", "${Value.Self}", "$Identifier"},
		{"Identifier", "$Values", "$Values"},
		{"V", "$V-$Value.Port", "a-b-80"},
		{"Value", "$Value-${Value}", "a-b-a-b"},
		{"Identifier", "no variables", "no variables"},
	} {
		s := &substituter{sc: &scope{e: &engine{}}, ident: tc.ident, id: "a-b", index: "2", value: value}
		got, err := s.text(tc.in, value)
		if err != nil || got != tc.want {
			t.Errorf("text(%q) with identifier %s = %q, %v; want %q", tc.in, tc.ident, got, err, tc.want)
		}
	}
	s := &substituter{sc: &scope{e: &engine{}}, ident: "Identifier", id: "a", index: "0", value: value}
	for _, in := range []string{"x-${Value}", "x-$Value.Obj", "$Value.Missing"} {
		if _, err := s.text(in, value); !errors.Is(err, ErrInvalid) {
			t.Errorf("text(%q): err = %v, want ErrInvalid", in, err)
		}
	}
}
