package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// Issue #12, defect 3: no repeatable flag splits its value on commas. Every
// slice flag of every command is given "a,b" (once, then twice) on the
// real command line, the command's action replaced by one that reads it.
func TestSliceFlagsKeepCommas(t *testing.T) {
	seen := 0
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			p := append(slices.Clone(path), cmd.Name)
			walk(p, cmd.Subcommands)
			for _, f := range cmd.Flags {
				if _, ok := f.(*cli.StringSliceFlag); !ok {
					continue
				}
				seen++
				name := f.Names()[0]
				for _, vals := range [][]string{{"a,b"}, {"a,b", "c,d"}} {
					app := newApp(strings.NewReader(""), &strings.Builder{}, &strings.Builder{})
					leaf := findPath(app.Commands, p)
					var got []string
					leaf.Action = func(c *cli.Context) error { got = c.StringSlice(name); return nil }
					args := append([]string{"assemble"}, p...)
					for _, v := range vals {
						args = append(args, "--"+name, v)
					}
					if err := app.RunContext(context.Background(), reorderArgs(app, args)); err != nil {
						t.Fatalf("%v: %v", args, err)
					}
					if !slices.Equal(got, vals) {
						t.Errorf("assemble %s --%s: got %q, want %q", strings.Join(p, " "), name, got, vals)
					}
				}
			}
		}
	}
	walk(nil, commands())
	if seen < 8 {
		t.Errorf("only %d slice flags found", seen)
	}
}

func findPath(cmds []*cli.Command, path []string) *cli.Command {
	c := findCommand(cmds, path[0])
	if len(path) == 1 {
		return c
	}
	return findPath(c.Subcommands, path[1:])
}
