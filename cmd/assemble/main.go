// Command assemble builds, signs and verifies Cloud Assemblies.
//
// The command is a thin translation layer: each subcommand parses its flags,
// makes one library call and prints the result. All logic a Go caller could
// want lives in the assembly, droplets, packager and signing packages.
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/internal/hint"
)

// Exit codes. They are documented in the README and in --help.
const (
	exitOK      = 0
	exitFailure = 1 // invalid input, failed verification, I/O errors
	exitUsage   = 2 // bad flags or arguments
	// exitInterrupted is what a shell reports for a command stopped by
	// SIGINT (128 + 2).
	exitInterrupted = 130
)

// interruptGrace is how long a command has to stop by itself after
// Ctrl-C (removing its temporary files) before the process exits anyway:
// a command blocked reading a terminal, a pipe or a FIFO does not watch
// its context.
const interruptGrace = 2 * time.Second

func main() {
	os.Exit(runWithSignals(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// runWithSignals runs the command with a context that Ctrl-C (SIGINT) or
// SIGTERM cancels, and returns its exit code: exitInterrupted when it was
// interrupted, also when the command has not stopped interruptGrace after.
func runWithSignals(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, stdin, stdout, stderr) }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	stop() // a second Ctrl-C ends the process at once
	select {
	case code := <-done:
		return code
	case <-time.After(interruptGrace):
		return reportInterrupted(args, stdout, stderr)
	}
}

// errInterrupted: the user pressed Ctrl-C (or the process got SIGTERM).
var errInterrupted = interruptedError{}

type interruptedError struct{}

func (interruptedError) Error() string { return "interrupted" }
func (interruptedError) Unwrap() error { return context.Canceled }
func (interruptedError) ExitCode() int { return exitInterrupted }

// reportInterrupted reports errInterrupted for a command that did not stop
// within interruptGrace.
func reportInterrupted(args []string, stdout, stderr io.Writer) int {
	var jsonOut io.Writer
	if wantsJSON(newApp(strings.NewReader(""), io.Discard, io.Discard), args) {
		jsonOut = stdout
	}
	return report(stderr, jsonOut, errInterrupted)
}

// run executes the CLI and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	app := newApp(stdin, stdout, stderr)
	if len(args) > 1 && args[len(args)-1] == completionFlag {
		// A completion script asks for candidates: nothing is run.
		complete(stdout, app, args[1:len(args)-1])
		return exitOK
	}
	var err error
	if uerr := unknownCommand(app, args); uerr != nil {
		err = uerr
	} else if f := missingValue(app, args); f != "" {
		err = usagef("flag needs an argument: %s", f)
	} else {
		args = reorderArgs(app, args)
		err = app.RunContext(ctx, args)
	}
	if err == nil {
		return exitOK
	}
	var ec exitCoder
	if ctx.Err() != nil && (!errors.As(err, &ec) || ec.ExitCode() != exitInterrupted) {
		// Whatever failed after Ctrl-C failed because of it; a command
		// that says what the interruption left (deploy names the droplets
		// in flight) keeps its words, and its --json result.
		err = errInterrupted
	}
	var jsonOut io.Writer
	if wantsJSON(app, args) {
		jsonOut = stdout
	}
	return report(stderr, jsonOut, err)
}

// helpCmd is "help [COMMAND]", of the app and of each command group: a
// fresh command per app, so that nothing is shared between runs (urfave/
// cli's own is a package variable that, run as a subcommand, adds itself to
// its own subcommands), and an unknown topic is a usage error (urfave/cli's
// exits 3, "No help topic").
func helpCmd() *cli.Command {
	return &cli.Command{
		Name:      "help",
		Aliases:   []string{"h"},
		Usage:     "show the commands, or one command's help",
		ArgsUsage: "[COMMAND]",
		HideHelp:  true,
		Action: func(c *cli.Context) error {
			parent := c.Lineage()[1]
			top := parent.Command == nil || parent.Command.Name == c.App.Name
			cmds := c.App.Commands
			if !top {
				cmds = parent.Command.Subcommands
			}
			name := c.Args().First()
			switch {
			case name == "" && top:
				return cli.ShowAppHelp(parent)
			case name == "":
				return cli.ShowSubcommandHelp(parent)
			case findCommand(cmds, name) == nil:
				help := "assemble --help"
				if !top {
					help = "assemble " + parent.Command.FullName() + " --help"
				}
				return withHint(usagef("no help topic %q", name), "run '"+help+"' to list the commands")
			}
			return cli.ShowCommandHelp(parent, name)
		},
	}
}

// optionalCommands are commands linked in only by a build tag (see
// verify_github_sigstore.go): the default binary stays without their
// dependencies.
var optionalCommands []func() *cli.Command

// commands lists every subcommand, in the order --help shows them.
func commands() []*cli.Command {
	cmds := baseCommands()
	for _, c := range optionalCommands {
		cmds = append(cmds, c())
	}
	return cmds
}

func baseCommands() []*cli.Command {
	return []*cli.Command{
		buildCmd(),
		inspectCmd(),
		graphCmd(),
		packageCmd(),
		attestCmd(),
		signCmd(),
		verifyCmd(),
		extractCmd(),
		pushCmd(),
		pullCmd(),
		diffCmd(),
		deployCmd(),
		statusCmd(),
		destroyCmd(),
		schemaCmd(),
		moduleCmd(),
		blueprintCmd(),
		versionCmd(),
		completionCmd(),
		manCmd(),
	}
}

// -v is --verbose wherever a command has it; the version is --version
// (and 'assemble version'), without urfave/cli's default -v alias.
func init() {
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version"}
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:  "assemble",
		Usage: "build, sign and verify Cloud Assemblies (.cloud files)",
		Description: `A Cloud Assembly is one ZIP archive holding everything a cloud application
needs to deploy, described by manifest.json and sealed by signature.asc.

   Flags may be given before or after the file arguments.

EXIT CODES:
   0  success (for verify: the assembly is valid and its signature trusted)
   1  failure (invalid input, failed verification, untrusted signer, I/O error)
   2  usage error (unknown command or flag, missing argument)`,
		Version:   versionString(),
		Commands:  commands(),
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		// A flag's value is never split: --var 'env=a,b' is one value,
		// --keyring 'release,2026.asc' one file.
		DisableSliceFlagSeparator: true,
		// Errors are printed once, by report, never by urfave/cli itself.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return usageErrorHint(c, err)
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return withHint(usagef("unknown command %q", c.Args().First()), "run 'assemble --help' to list the commands")
			}
			// No command is a usage error: the help goes to standard
			// error, and the exit code is 2.
			c.App.Writer = c.App.ErrWriter
			cli.ShowAppHelp(c)
			return usageError{shownError{errors.New("no command given")}}
		},
	}
	for _, c := range app.Commands {
		setUp(c)
	}
	app.Commands = append(app.Commands, helpCmd())
	// urfave/cli adds --help only when it adds its own help command.
	app.Flags = append(app.Flags, cli.HelpFlag)
	return app
}

// setUp gives c and its subcommands our usage error handler, and each
// command group its help command.
func setUp(c *cli.Command) {
	c.OnUsageError = func(c *cli.Context, err error, _ bool) error { return usageErrorHint(c, err) }
	if len(c.Subcommands) == 0 && !slices.ContainsFunc(c.Flags, func(f cli.Flag) bool { return f == quietFlag }) {
		// Every command takes --quiet (issue 23): a script may pass it
		// to any command; what a command prints that is not its product
		// (a summary, "valid" lines, progress) it then leaves out.
		c.Flags = append(c.Flags, quietFlag)
	}
	for _, f := range c.Flags {
		markPath(f)
	}
	for _, sub := range c.Subcommands {
		setUp(sub)
	}
	if len(c.Subcommands) > 0 {
		h := helpCmd()
		h.Hidden = true // assemble help schema validate is listed once, at the top
		c.Subcommands = append(c.Subcommands, h)
	}
}

// markPath marks a flag whose value is a `FILE` or `DIR` (its usage's
// placeholder) as taking a path, so that shell completion offers files
// (the fish script otherwise offers nothing after --key).
func markPath(f cli.Flag) {
	switch f := f.(type) {
	case *cli.StringFlag:
		f.TakesFile = f.TakesFile || takesPath(f.Usage)
	case *cli.StringSliceFlag:
		f.TakesFile = f.TakesFile || takesPath(f.Usage)
	}
}

func takesPath(usage string) bool {
	return strings.Contains(usage, "`FILE`") || strings.Contains(usage, "`DIR`")
}

// usageError marks an error in how the command was called (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageErrorHint is urfave/cli's usage error, with the nearest flag as a
// hint when a flag is unknown.
func usageErrorHint(c *cli.Context, err error) error {
	if hint := flagHint(c, err); hint != "" {
		return withHint(usageError{err}, hint)
	}
	return usageError{err}
}

// usagef returns a usage error (exit code 2).
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// withHint wraps err so that report prints hint after it.
func withHint(err error, h string) error { return hint.With(err, h) }

// exitCoder lets a library error choose its exit code.
type exitCoder interface{ ExitCode() int }

// report prints err in the CLI's error format on stderr and returns its
// exit code. When jsonOut is not nil (the command line asked for --json),
// it also prints the error there as the command's one JSON object
// (docs/json/error.json).
func report(stderr, jsonOut io.Writer, err error) int {
	code := exitFailure
	var ue usageError
	var ec exitCoder
	switch {
	case errors.As(err, &ue):
		code = exitUsage
	case errors.As(err, &ec):
		code = ec.ExitCode()
	}
	fix := flagWords(hintOf(err, hint.Of(err)))
	if jsonOut != nil {
		var b bytes.Buffer
		if werr := writeErrorJSON(&b, err, fix); werr != nil {
			fmt.Fprintf(stderr, "assemble: error: printing the error as JSON: %s\n", werr)
		}
		io.WriteString(jsonOut, redact(b.String(), true))
	}
	var se shownError
	if errors.As(err, &se) {
		return code
	}
	fmt.Fprintf(stderr, "assemble: error: %s\n", redact(flagWords(err.Error()), false))
	if fix != "" {
		fmt.Fprintf(stderr, "assemble: hint: %s\n", redact(fix, false))
	}
	return code
}

// warnf prints a warning line to the command's error stream.
func warnf(c *cli.Context, format string, args ...any) {
	fmt.Fprintf(c.App.ErrWriter, "assemble: warning: %s\n", flagWords(fmt.Sprintf(format, args...)))
}
