package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/internal/suggest"
)

// unknownCommand returns the usage error for a command line whose command
// (or a group's subcommand) names none, with the nearest command as a hint:
// `assemble verfy --keyring k app.cloud` is about the command, not about
// --keyring, which the app itself does not define. nil when every word
// before the first flag names a command.
func unknownCommand(app *cli.App, args []string) error {
	if len(args) < 2 {
		return nil
	}
	cmds := app.Commands
	var group *cli.Command
	for _, a := range args[1:] {
		if a == "" || strings.HasPrefix(a, "-") {
			return nil // flags: urfave/cli reads them (and --help)
		}
		cmd := findCommand(cmds, a)
		if cmd == nil {
			return unknownCommandError(group, cmds, a)
		}
		if len(cmd.Subcommands) == 0 {
			return nil
		}
		group, cmds = cmd, cmd.Subcommands
	}
	return nil
}

func unknownCommandError(group *cli.Command, cmds []*cli.Command, name string) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	list := "run 'assemble --help' to list the commands"
	err := usagef("unknown command %q", name)
	if group != nil {
		list = fmt.Sprintf("run 'assemble %s --help' to list its subcommands", group.Name)
		err = usagef("%s: unknown subcommand %q", group.Name, name)
	}
	if near := suggest.Closest(name, names); near != "" {
		return withHint(err, fmt.Sprintf("did you mean %q? (%s)", near, list))
	}
	return withHint(err, list)
}

// flagHint is the hint for urfave/cli's "flag provided but not defined:
// -keyrng": the nearest flag of the command, "" when none is near.
func flagHint(c *cli.Context, err error) string {
	const prefix = "flag provided but not defined: "
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return ""
	}
	name := strings.TrimLeft(strings.TrimPrefix(msg, prefix), "-")
	var flags []cli.Flag
	where := "assemble"
	if c.Command != nil && c.Command.Name != "" && c.Command.Name != c.App.Name {
		flags = c.Command.Flags
		where = "assemble " + commandName(c)
	} else {
		flags = c.App.Flags
	}
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	help := fmt.Sprintf("run '%s --help' for its flags", where)
	near := ""
	if ours := foreignFlags[name]; ours != "" && slices.Contains(names, ours) {
		// Another tool's name for one of ours.
		return fmt.Sprintf("did you mean --%s? (--%s is %s; %s)", ours, name, foreignFlagTools[name], help)
	}
	if len(name) > 2 { // -z is no typo of -o
		near = suggest.Closest(name, names)
	}
	if near == "" {
		return help
	}
	dash := "--"
	if len(near) == 1 {
		dash = "-"
	}
	return fmt.Sprintf("did you mean %s%s? (%s)", dash, near, help)
}

// foreignFlags are the aws CLI's and the CDK CLI's names for flags of
// ours that people coming from them type (foreignFlagTools says whose).
var foreignFlags = map[string]string{
	"parameter-overrides":  "parameter",
	"parameters":           "parameter",
	"stack-name":           "only",
	"exclusively":          "only",
	"s3-bucket":            "staging-bucket",
	"no-execute-changeset": "plan",
}

var foreignFlagTools = map[string]string{
	"parameter-overrides":  "aws cloudformation deploy's",
	"parameters":           "cdk deploy's",
	"stack-name":           "aws cloudformation deploy's (name the droplet by its ID)",
	"exclusively":          "cdk deploy's",
	"s3-bucket":            "aws cloudformation deploy's",
	"no-execute-changeset": "aws cloudformation deploy's",
}

// commandName is the command's path below the app: "schema validate".
func commandName(c *cli.Context) string {
	var path []string
	for _, l := range c.Lineage() {
		if l.Command != nil && l.Command.Name != "" && l.Command.Name != c.App.Name {
			path = append([]string{l.Command.Name}, path...)
		}
	}
	return strings.Join(path, " ")
}
