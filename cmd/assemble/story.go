package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/deploy"
)

// chatter reports whether an event says only what the next one or the
// final table says, and is left out of the text on standard error (the
// JSON lines keep every event): the start of a droplet's step ("deploying
// (file)"), of an upload ("uploading ..."; "uploaded ..." follows) and its
// bare outcome ("uploaded", "created"): one upload is one line.
func chatter(e deploy.Event) bool {
	switch {
	case strings.HasPrefix(e.Message, "deploying ("), strings.HasPrefix(e.Message, "uploading "):
		return true
	}
	for _, o := range []deploy.Outcome{deploy.Created, deploy.Updated, deploy.Uploaded, deploy.Pushed, deploy.Unchanged} {
		if e.Message == string(o) {
			return true
		}
	}
	return false
}

// eventSink sends deploy's events where the flags say: --events FILE as
// JSON lines; with --json, standard error as JSON lines (standard output
// holds the one object); else standard error as text, unless -q. The
// returned function closes the file.
func eventSink(c *cli.Context, o *deploy.Options, assembly string) (func(), error) {
	var w io.Writer
	closeFn := func() {}
	if name := c.String("events"); name != "" {
		if same, _ := sameFile(name, assembly); same {
			return closeFn, usagef("--events %s is the assembly: name another file", name)
		}
		f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return closeFn, flagFileError("--events", err)
		}
		w, closeFn = f, func() { f.Close() }
	} else if c.Bool("json") {
		w = c.App.ErrWriter
	}
	if w == nil {
		return closeFn, nil // deployOptions' text lines (or nothing, -q)
	}
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	text := o.Progress
	o.Progress = func(e deploy.Event) {
		mu.Lock()
		enc.Encode(e)
		mu.Unlock()
		if text != nil && c.String("events") != "" && !c.Bool("json") {
			text(e)
		}
	}
	return closeFn, nil
}

// sameFile reports whether a and b name one existing file.
func sameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}

// writeStackOutputs writes --outputs-file: every stack's outputs, by
// stack name, as `cdk deploy --outputs-file` writes them
// (deploy.Result.StackOutputsJSON).
func writeStackOutputs(c *cli.Context, assembly string, res *deploy.Result) error {
	name := c.String("outputs-file")
	if name == "" || res == nil {
		return nil
	}
	b, err := res.StackOutputsJSON()
	if err != nil {
		return err
	}
	return writeOutput(c, name, b, []string{assembly})
}

// printDeployTable prints what each droplet came to: outcome, time,
// outputs (a stack's output.<Name> attributes).
func printDeployTable(c *cli.Context, res *deploy.Result) {
	if res == nil || c.Bool("quiet") {
		return
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DROPLET\tKIND\tOUTCOME\tTIME\tOUTPUTS")
	for _, d := range res.Droplets {
		if d.Outcome == deploy.Excluded {
			continue
		}
		var outs []string
		for k, v := range d.Attributes {
			if key, ok := strings.CutPrefix(k, "output."); ok {
				outs = append(outs, key+"="+v)
			}
		}
		sort.Strings(outs)
		took := "-"
		if d.Seconds > 0 {
			took = fmt.Sprintf("%.1fs", d.Seconds)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.ID, d.Alias, d.Outcome, took, strings.Join(outs, " "))
	}
	tw.Flush()
}

// printDrift prints a stack's drift detection under its status line.
func printDrift(w io.Writer, indent string, d *deploy.StackDrift) {
	if d == nil {
		return
	}
	line := "drift: " + d.Status
	if d.Error != "" {
		line += " (" + d.Error + ")"
	}
	fmt.Fprintf(w, "%s   %s\n", indent, line)
	for _, r := range d.Resources {
		fmt.Fprintf(w, "%s      %s %s %s\n", indent, r.Status, r.LogicalID, r.Type)
		for _, p := range r.Properties {
			fmt.Fprintf(w, "%s         %s: expected %s, actual %s (%s)\n", indent, p.Path, p.Expected, p.Actual, p.Change)
		}
	}
}
