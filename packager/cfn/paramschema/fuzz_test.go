package paramschema

import (
	"errors"
	"testing"

	"github.com/cloud-assembly/assemble/packager/cfn/internal/ynode"
	"go.yaml.in/yaml/v3"
)

// FuzzValidate checks, for any schema and value: no panic; every error is
// classified and carries a line; and validation is idempotent: the value
// with defaults applied validates again to an equal value.
func FuzzValidate(f *testing.F) {
	seeds := [][2]string{
		{`{Type: Object, Required: [Username], Properties: {Username: {Type: String, MinLength: 3}}}`, `{}`},
		{`{Type: Number, Minimum: 1, Maximum: 10}`, `not-a-number`},
		{`{Type: Array, MinItems: 1, Items: {Type: Object, Required: [Type], Properties: {Type: {Enum: [Public, Private]}}}}`, `[{CidrBlock: x}]`},
		{`{Type: Object, Properties: {S: {Type: Object, Default: {}, Properties: {Theme: {Default: Light}}}}}`, `{}`},
		{`{Type: String, Pattern: "^[a-z]+$"}`, `!Ref X`},
		{`{Type: Boolean, Default: true}`, `"false"`},
		{`{Items: {Items: {Default: [1]}}}`, `[[~], []]`},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, schemaSrc, valueSrc string) {
		var sdoc, vdoc yaml.Node
		if yaml.Unmarshal([]byte(schemaSrc), &sdoc) != nil || yaml.Unmarshal([]byte(valueSrc), &vdoc) != nil {
			return
		}
		if ynode.Resolve(&sdoc) == nil {
			return // no schema at all: nothing has a line to report
		}
		s, err := Compile("P", ynode.Resolve(&sdoc))
		if err != nil {
			if !errors.Is(err, ErrTooLarge) {
				checkErr(t, err, ErrSchema)
			}
			return
		}
		got, err := s.Validate("P", ynode.Resolve(&vdoc))
		if err != nil {
			if !errors.Is(err, ErrTooLarge) {
				checkErr(t, err, ErrViolation)
			}
			return
		}
		again, err := s.Validate("P", got)
		if err != nil {
			t.Fatalf("the validated value fails validation: %v", err)
		}
		if !ynode.Equal(got, again) {
			t.Fatalf("validation is not idempotent")
		}
	})
}

func checkErr(t *testing.T, err, want error) {
	t.Helper()
	var e *Error
	if !errors.Is(err, want) || !errors.As(err, &e) {
		t.Fatalf("err = %v, want a *Error wrapping %v", err, want)
	}
	if e.Line <= 0 {
		t.Fatalf("error without a line: %v", err)
	}
}
