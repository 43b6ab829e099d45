package main

import (
	"context"
	"strings"
	"testing"
)

// Issue #12, defect 7: the exit code of how the command line was typed. A
// usage mistake (no command, an unknown command or help topic, a command
// group without its subcommand) exits 2, with the message on standard
// error and nothing on standard output.
func TestExitCodes(t *testing.T) {
	for _, tt := range []struct {
		args   string
		exit   int
		stderr string // a part of standard error, when exit is not 0
	}{
		{"", exitUsage, "USAGE:"},
		{"frobnicate", exitUsage, `unknown command "frobnicate"`},
		{"help nosuch", exitUsage, `no help topic "nosuch"`},
		{"h nosuch", exitUsage, `no help topic "nosuch"`},
		{"schema help nosuch", exitUsage, `no help topic "nosuch"`},
		{"schema", exitUsage, "assemble schema - "},
		{"module", exitUsage, "assemble module - "},
		{"blueprint", exitUsage, "assemble blueprint - "},
		{"schema nosuch", exitUsage, `unknown subcommand "nosuch"`},
		{"build --nosuch", exitUsage, "flag provided but not defined"},
		// A flag typed last with no value took "--" (or the file) as its
		// value once flags were moved in front of the file.
		{"verify app.cloud --keyring", exitUsage, "flag needs an argument: --keyring"},
		{"sign app.cloud -k", exitUsage, "flag needs an argument: -k"},
		{"schema validate x.json --nosuch", exitUsage, "flag provided but not defined"},
		{"help", exitOK, ""},
		{"help build", exitOK, ""},
		{"help schema validate", exitOK, ""},
		{"schema help validate", exitOK, ""},
		{"build --help", exitOK, ""},
		{"--help", exitOK, ""},
		{"--version", exitOK, ""},
		{"version", exitOK, ""},
	} {
		var stdout, stderr strings.Builder
		args := append([]string{"assemble"}, strings.Fields(tt.args)...)
		got := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
		if got != tt.exit {
			t.Errorf("assemble %s: exit %d, want %d\n%s", tt.args, got, tt.exit, stderr.String())
			continue
		}
		if tt.exit == exitOK {
			if stdout.Len() == 0 || stderr.Len() != 0 {
				t.Errorf("assemble %s: stdout %d bytes, stderr %q", tt.args, stdout.Len(), stderr.String())
			}
			continue
		}
		if stdout.Len() != 0 || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("assemble %s: stdout %q, stderr %q, want %q in it", tt.args, stdout.String(), stderr.String(), tt.stderr)
		}
	}
}

// Runs share no state: a help command run as a subcommand made urfave/
// cli's package-level help command its own subcommand, and the next fish
// completion script in the same process recursed until the stack ran out.
func TestHelpLeavesNoState(t *testing.T) {
	for _, args := range []string{"schema help nosuch", "schema help validate", "help schema", "completion fish"} {
		var stdout, stderr strings.Builder
		run(context.Background(), append([]string{"assemble"}, strings.Fields(args)...), strings.NewReader(""), &stdout, &stderr)
		if args == "completion fish" && !strings.Contains(stdout.String(), "complete -c assemble") {
			t.Errorf("fish completion after help runs:\n%s%s", stdout.String(), stderr.String())
		}
	}
}
