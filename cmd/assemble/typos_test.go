package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// leafCommand is a command that runs (not a group), with its path below
// the app: ["schema", "validate"].
type leafCommand struct {
	path []string
	cmd  *cli.Command
}

func (l leafCommand) String() string { return strings.Join(l.path, " ") }

// runnableCommands walks the app's command list (help excepted), so that the
// rules the tests check hold for commands added later.
func runnableCommands() []leafCommand {
	app := newApp(strings.NewReader(""), &strings.Builder{}, &strings.Builder{})
	var out []leafCommand
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Name == "help" {
				continue
			}
			p := append(append([]string(nil), path...), c.Name)
			if len(c.Subcommands) > 0 {
				walk(p, c.Subcommands)
				continue
			}
			out = append(out, leafCommand{p, c})
		}
	}
	walk(nil, app.Commands)
	return out
}

// misspell drops the second letter: "verify" -> "vrify", "keyring" ->
// "kyring".
func misspell(s string) string { return s[:1] + s[2:] }

func runArgs(args ...string) (code int, stdout, stderr string) {
	var o, e strings.Builder
	code = run(context.Background(), append([]string{"assemble"}, args...), strings.NewReader(""), &o, &e)
	return code, o.String(), e.String()
}

// Issue 23, item 3: a misspelt command is named, with the nearest
// command, exit 2; so is a misspelt subcommand of a group, and a command
// typed with flags after it (`verfy --keyring k`) is about the command,
// not the flag.
func TestMisspeltCommands(t *testing.T) {
	for _, l := range runnableCommands() {
		name := l.path[len(l.path)-1]
		if len(name) < 4 {
			continue // "man": any two-letter word is near it
		}
		args := append(append([]string(nil), l.path[:len(l.path)-1]...), misspell(name), "--json", "x")
		code, stdout, stderr := runArgs(args...)
		want := fmt.Sprintf("did you mean %q?", name)
		if code != exitUsage || stdout != "" && !strings.Contains(stdout, `"usage"`) || !strings.Contains(stderr, fmt.Sprintf("unknown %scommand %q", map[bool]string{true: "sub"}[len(l.path) > 1], misspell(name))) || !strings.Contains(stderr, want) {
			t.Errorf("assemble %s: exit %d, stderr:\n%s\nwant exit 2 and %s", strings.Join(args, " "), code, stderr, want)
		}
	}
}

// Issue 23, item 3: every long flag of every command, misspelt, is an
// error that suggests it.
func TestMisspeltFlags(t *testing.T) {
	for _, l := range runnableCommands() {
		for _, f := range l.cmd.Flags {
			name := f.Names()[0]
			if len(name) < 5 {
				continue // "json" less a letter is near too much
			}
			typo := misspell(name)
			args := append(append([]string(nil), l.path...), "--"+typo)
			code, _, stderr := runArgs(args...)
			want := fmt.Sprintf("did you mean --%s?", name)
			if code != exitUsage || !strings.Contains(stderr, "-"+typo) || !strings.Contains(stderr, want) {
				t.Errorf("assemble %s: exit %d, stderr:\n%s\nwant exit 2 and %q", strings.Join(args, " "), code, stderr, want)
			}
		}
	}
}

// Issue 23, item 6: every command takes -q/--quiet, commands merged
// later too (setUp adds it): a script may pass it to any of them.
func TestEveryCommandTakesQuiet(t *testing.T) {
	for _, l := range runnableCommands() {
		if !slices.ContainsFunc(l.cmd.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), "quiet") && slices.Contains(f.Names(), "q") }) {
			t.Errorf("assemble %s has no -q/--quiet", l)
		}
		args := append(append([]string(nil), l.path...), "-q", "--help")
		if code, _, stderr := runArgs(args...); code != exitOK {
			t.Errorf("assemble %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
	}
}
