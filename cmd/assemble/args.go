package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// reorderArgs moves flags typed after positional arguments in front of them,
// so that "assemble inspect app.cloud --json" works as people expect:
// urfave/cli v2 stops reading flags at the first positional argument.
//
// It walks the command path (app, command, subcommand...) and, for the last
// command found, rewrites its arguments as flags first, then positionals, each
// group in the order given. A flag's value stays with its flag; "--" ends the
// flags and everything after it stays positional; "-" is a positional.
func reorderArgs(app *cli.App, args []string) []string {
	if len(args) < 2 || args[1] == "help" || args[1] == "h" {
		return args // assemble help build: urfave/cli's help command
	}
	out, flags, rest := commandPath(app, args)
	return append(out, permute(flags, rest)...)
}

// missingValue returns the last argument when it is a flag that takes a
// value and has none ("assemble verify app.cloud --keyring"), else "".
// Moved in front of the file by reorderArgs, such a flag would take the
// next argument, "--" or the file, as its value.
func missingValue(app *cli.App, args []string) string {
	_, flags, rest := commandPath(app, args)
	if len(rest) == 0 || slices.Contains(rest[:len(rest)-1], "--") {
		return ""
	}
	a := rest[len(rest)-1]
	name := strings.TrimLeft(a, "-")
	if len(a) < 2 || a[0] != '-' || a == "--" || strings.Contains(name, "=") || !takesValue(flags, name) {
		return ""
	}
	return a
}

// commandPath splits a command line into the program and command names
// (assemble schema validate), the flags of the last command named, and
// the rest of the arguments.
func commandPath(app *cli.App, args []string) (path []string, flags []cli.Flag, rest []string) {
	if len(args) == 0 {
		return nil, app.Flags, nil
	}
	path = []string{args[0]}
	rest = args[1:]
	flags = app.Flags
	cmds := app.Commands
	for len(rest) > 0 {
		cmd := findCommand(cmds, rest[0])
		if cmd == nil {
			break
		}
		path = append(path, rest[0])
		rest = rest[1:]
		flags, cmds = cmd.Flags, cmd.Subcommands
		if len(cmds) == 0 {
			break
		}
	}
	return path, flags, rest
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

func permute(flags []cli.Flag, args []string) []string {
	var fl, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			pos = append(pos, a)
			continue
		}
		fl = append(fl, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if takesValue(flags, name) && i+1 < len(args) {
			i++
			fl = append(fl, args[i])
		}
	}
	if len(pos) == 0 {
		return fl
	}
	// "--" keeps positionals that look like flags from being parsed as flags.
	return append(append(fl, "--"), pos...)
}

// takesValue reports whether the named flag consumes the next argument.
// Unknown flags are assumed to take none; urfave/cli reports them.
func takesValue(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			_, isBool := f.(*cli.BoolFlag)
			return !isBool
		}
	}
	return false
}
