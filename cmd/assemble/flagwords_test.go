package main

import (
	"reflect"
	"strings"
	"testing"
)

// Each option the table translates is a field of its options struct, and
// each flag is one of this command's (a command's flag set has it).
func TestOptionFlags(t *testing.T) {
	app := newApp(nil, nil, nil)
	var flags []string
	for _, path := range leafCommands() {
		c := app.Command(path[0])
		for _, name := range path[1:] {
			c = c.Command(name)
		}
		for _, f := range c.Flags {
			for _, n := range f.Names() {
				flags = append(flags, "--"+n)
			}
		}
	}
	for _, o := range optionFlags {
		if _, ok := reflect.TypeOf(o.options).FieldByName(o.field); !ok {
			t.Errorf("%s: no such field", o.optionName())
		}
		found := false
		for _, f := range flags {
			found = found || f == o.flag
		}
		if !found {
			t.Errorf("%s: no command has the flag %s", o.optionName(), o.flag)
		}
	}
	if got := flagWords("a bad BuildOptions.AssetBucket: x; with BuildOptions.Strict"); got != "a bad --asset-bucket: x; with --strict" {
		t.Errorf("flagWords: %q", got)
	}
	if got := flagWords("no option here"); !strings.Contains(got, "no option here") {
		t.Errorf("flagWords changed %q", got)
	}
}
