package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/cloud-assembly/assemble/internal/output"
	"github.com/cloud-assembly/assemble/internal/plural"
)

// createOutput opens a command's -o output through internal/output, the
// one writer every command uses: "-" is standard output, a pipe, terminal
// or /proc descriptor is written directly, a regular file is replaced
// atomically (a symbolic link followed and kept), never over any of
// inputs (the files the command read), and another writer of the same
// file is waited for, saying so. sync flushes the file to disk before
// the rename (build, whose output is the one meant to last). The caller
// writes, then Commits; a deferred Close discards an uncommitted output.
func createOutput(c *cli.Context, name string, inputs []string, sync bool) (*output.File, error) {
	f, err := output.Create(c.Context, name, outputOptions(c, inputs, sync))
	if err != nil {
		return nil, outputError(err)
	}
	return f, nil
}

// outputOptions are the options of a command's output.
func outputOptions(c *cli.Context, inputs []string, sync bool) output.Options {
	return output.Options{
		Stdout: c.App.Writer,
		Inputs: inputs,
		Sync:   sync,
		Waiting: func(path string) {
			fmt.Fprintf(c.App.ErrWriter, "assemble: waiting for another process writing %s\n", path)
		},
	}
}

// writeOutput writes data to the -o output name (standard output when
// name is "" or "-").
func writeOutput(c *cli.Context, name string, data []byte, inputs []string) error {
	if name == "" {
		name = "-"
	}
	return outputError(output.WriteFile(c.Context, name, data, outputOptions(c, inputs, false)))
}

// outputError adds the hint for a refused output.
func outputError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, output.ErrInput):
		return withHint(err, "name another output file with -o; no command writes over a file it reads")
	case errors.Is(err, output.ErrFolder):
		var oe *output.Error
		if errors.As(err, &oe) {
			return withHint(err, "name a file inside the folder, e.g. -o "+filepath.Join(oe.Path, "NAME"))
		}
	case errors.Is(err, output.ErrLocked):
		return withHint(err, "another assemble (build, sign...) is writing this file")
	}
	return err
}

// refuseTerminal refuses -o - for an assembly (a ZIP) when standard
// output is a terminal, as age and gzip refuse binary output there.
func refuseTerminal(c *cli.Context, out string) error {
	if out == "-" && isTerminal(c.App.Writer) {
		return withHint(usagef("-o -: standard output is a terminal; not writing a binary assembly to it"),
			"redirect it to a file or a pipe (-o - > app.cloud), or name the file with -o FILE")
	}
	return nil
}

// summaryWriter is where a command prints its one-line summary: standard
// output, unless the command's output itself goes there (-o -, or a
// pipe or terminal), then standard error.
func summaryWriter(c *cli.Context, f *output.File) io.Writer {
	if f != nil && f.Direct() {
		return c.App.ErrWriter
	}
	return c.App.Writer
}

// Flags shared by the long-running commands (build, sign, verify, extract).
// --json output is printed even with --quiet: it was asked for.
var (
	quietFlag    = &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print no summary or progress on success (warnings, errors and --json still print)"}
	progressFlag = &cli.BoolFlag{Name: "progress", Usage: "report progress on standard error even when it is not a terminal"}
	verboseFlag  = &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "say on standard error what was read: keyrings and keys, project files"}
	// noWarnUnverifiedFlag silences the warning that a signed assembly
	// was read without verifying it (for scripts that verify separately).
	noWarnUnverifiedFlag = &cli.BoolFlag{Name: "no-warn-unverified", EnvVars: []string{"ASSEMBLE_NO_WARN_UNVERIFIED"}, Usage: "do not warn that a signed assembly's signature was not verified (also $ASSEMBLE_NO_WARN_UNVERIFIED=1)"}
)

// verbosef prints a line of --verbose detail on standard error.
func verbosef(c *cli.Context, format string, args ...any) {
	if c.Bool("verbose") && !c.Bool("quiet") {
		fmt.Fprintf(c.App.ErrWriter, "assemble: "+format+"\n", args...)
	}
}

// printf prints a command's result line unless --quiet is set.
func printf(c *cli.Context, w io.Writer, format string, args ...any) {
	if c.Bool("quiet") {
		return
	}
	io.WriteString(w, flagWords(fmt.Sprintf(format, args...)))
}

// A progress reports bytes done of a total on standard error: redrawn in
// place on a terminal, as a line per tenth otherwise (with --progress).
type progress struct {
	w        io.Writer
	label    string
	terminal bool
	last     time.Time
	step     int64 // last tenth printed, off a terminal
	drawn    bool
}

// newProgress returns a progress for label ("signing app.cloud"), or nil
// when nothing is to be shown: --quiet, or standard error is not a
// terminal and --progress was not given (nothing lands in CI logs).
func newProgress(c *cli.Context, label string) *progress {
	if c.Bool("quiet") {
		return nil
	}
	tty := isTerminal(c.App.ErrWriter)
	if !tty && !c.Bool("progress") {
		return nil
	}
	return &progress{w: c.App.ErrWriter, label: label, terminal: tty, step: -1}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Func returns the callback for the library (nil when p is nil), which
// calls it one call at a time.
func (p *progress) Func() func(done, total int64) {
	if p == nil {
		return nil
	}
	return p.update
}

func (p *progress) update(done, total int64) {
	if p.terminal {
		if now := time.Now(); now.Sub(p.last) >= 100*time.Millisecond || done == total {
			p.last = now
			fmt.Fprintf(p.w, "\r\x1b[Kassemble: %s: %s", p.label, amount(done, total))
			p.drawn = true
		}
		return
	}
	if total <= 0 {
		return
	}
	if step := done * 10 / total; step > p.step {
		p.step = step
		fmt.Fprintf(p.w, "assemble: %s: %s\n", p.label, amount(done, total))
	}
}

// Done ends a progress line drawn in place.
func (p *progress) Done() {
	if p != nil && p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// amount formats "12.5 MiB of 100.0 MiB (12%)".
func amount(done, total int64) string {
	if total < 0 {
		return size(done)
	}
	pct := int64(100)
	if total > 0 {
		pct = done * 100 / total
	}
	return fmt.Sprintf("%s of %s (%d%%)", size(done), size(total), pct)
}

// size formats a byte count in binary units.
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return plural.Count(int(n), "byte")
	}
	v, u := float64(n), 0
	for v >= unit && u < 4 {
		v /= unit
		u++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGT"[u-1])
}
