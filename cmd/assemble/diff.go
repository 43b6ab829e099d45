package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/deploy"
	"github.com/cloud-assembly/assemble/deploy/review"
	"github.com/cloud-assembly/assemble/internal/plural"
)

// reviewFlags are the flags diff shares with deploy (--plan).
func reviewFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "change-set", Usage: "also make a change set per changed stack for CloudFormation's replacement verdicts (deleted after; the only writes)"},
	}
}

func diffCmd() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "verify an assembly, then show what deploying it would change, changing nothing",
		ArgsUsage: "ASSEMBLY",
		Description: `Verifies the assembly as 'assemble deploy' does (same trust flags, same
checks), then compares each droplet with what is deployed, reading only
(GetTemplate, DescribeStacks, GetStackPolicy, HeadObject, ListObjectsV2, a
registry's HEAD):
   stack        resources added, removed and modified (with each property's
                path and its old and new value), parameters, tags (deploy's
                own assemble: tags aside), settings (termination protection,
                stack policy, notification ARNs) and outputs
   file, dir    objects added, changed (by the signed content's SHA-256) and,
                under a directory's keyPrefix, objects the assembly does not
                hold (deploy leaves them)
   image        the tag's digest
and lists the security changes: IAM statements (inline, managed, trust and
resource policies, KMS key policies), managed policy attachments, Lambda
permissions and security group rules that allow a principal, action,
resource, peer or port the deployed version does not.

A stack whose parameter is another droplet's output that changes shows the
value as (known after deploy). The header names the account, the regions,
the assembly deployed now and the one under review; the last line counts
the droplets that change. 'assemble deploy --plan' prints the same.

A --target over several account/region pairs compares the droplets with an
environment of their own once, then each pair in its own account and
region: a section per pair, with its count, then the count over all.

--change-set asks CloudFormation which resources it would replace: it makes
a change set per changed stack and deletes it after, by its ID (with the
stack a new stack's change set makes).

EXIT CODES:
   0  compared (whether or not anything changes)
   1  refused, or a droplet could not be compared
   2  usage error

Examples:
   assemble diff --keyring release.pub.asc app.cloud
   assemble diff --keyring release.pub.asc --json app.cloud | jq '.droplets[].stack.security'`,
		Flags: assemblyFlags("diff", append(deployCommonFlags(), reviewFlags()...)...),
		Action: func(c *cli.Context) error {
			opts, err := diffOptions(c)
			if err != nil {
				return err
			}
			name, src, vres, err := openDeploySource(c)
			defer vres.close()
			if err != nil {
				return err
			}
			if opts.Options, err = opts.Options.WithPolicy(vres.assembly.Trust()); err != nil {
				return err
			}
			return runDiff(c, name, src, vres, opts)
		},
	}
}

// deployCommonFlags are the flags deploy, diff share: what to deploy and
// with what.
func deployCommonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "parameter", Usage: "supply a stack parameter the assembly leaves `ID.NAME=VALUE` (repeatable)"},
		&cli.StringSliceFlag{Name: "only", Usage: "only the droplet `ID` (repeatable); references to others are read from what is deployed"},
		&cli.IntFlag{Name: "concurrency", Value: deploy.DefaultConcurrency, Usage: "compare or deploy up to `N` independent droplets at once"},
		&cli.StringFlag{Name: "staging-bucket", Usage: "S3 `BUCKET` that receives templates over 51,200 bytes"},
		&cli.StringSliceFlag{Name: "capabilities", Usage: "grant stacks the `CAPABILITY` IAM, NAMED_IAM or AUTO_EXPAND (repeatable)"},
		&cli.BoolFlag{Name: "force", Usage: "deploy droplets that carry error metadata"},
	}
}

// diffOptions translates diff's flags.
func diffOptions(c *cli.Context) (deploy.DiffOptions, error) {
	o, err := commonDeployOptions(c)
	if err != nil {
		return deploy.DiffOptions{}, err
	}
	return deploy.DiffOptions{Options: o, ChangeSet: c.Bool("change-set")}, nil
}

// commonDeployOptions translates the flags deploy and diff share (the
// assembly's target and reach, and deployCommonFlags).
func commonDeployOptions(c *cli.Context) (deploy.Options, error) {
	o := deploy.Options{
		Only:          c.StringSlice("only"),
		Target:        c.String("target"),
		RoleARN:       c.String("role-arn"),
		Qualifier:     c.String("qualifier"),
		Region:        c.String("region"),
		Profile:       c.String("profile"),
		Concurrency:   c.Int("concurrency"),
		StagingBucket: c.String("staging-bucket"),
		Capabilities:  c.StringSlice("capabilities"),
		Force:         c.Bool("force"),
	}
	if o.Concurrency < 1 {
		return o, usagef("--concurrency %d: at least 1", o.Concurrency)
	}
	var err error
	o.Parameters, err = parameterFlags(c)
	return o, err
}

// parameterFlags reads --parameter ID.NAME=VALUE.
func parameterFlags(c *cli.Context) (map[string]string, error) {
	var out map[string]string
	for _, p := range c.StringSlice("parameter") {
		key, value, ok := strings.Cut(p, "=")
		id, pname, dotted := strings.Cut(key, ".")
		if !ok || !dotted || id == "" || pname == "" {
			return nil, usagef("--parameter %q: want ID.NAME=VALUE (a stack droplet's logical ID, its parameter's name, the value)", p)
		}
		if out == nil {
			out = map[string]string{}
		}
		if _, dup := out[key]; dup {
			return nil, usagef("--parameter %s given twice", key)
		}
		out[key] = value
	}
	return out, nil
}

// diffJSON is what diff (and deploy --plan) print with --json
// (docs/json/diff.json).
type diffJSON struct {
	File          string        `json:"file"`
	Authenticated bool          `json:"authenticated"`
	Signer        *signerResult `json:"signer,omitempty"`
	Plan          bool          `json:"plan,omitempty"`
	*deploy.DiffResult
	Droplets []dropletDiffJSON `json:"droplets"`
	Pairs    []pairDiffJSON    `json:"pairs,omitempty"`
}

type dropletDiffJSON struct {
	*deploy.DropletDiff
	Error *errorJSON `json:"error,omitempty"`
}

// pairDiffJSON is one account/region pair of a target's matrix.
type pairDiffJSON struct {
	*deploy.DiffResult
	Droplets []dropletDiffJSON `json:"droplets"`
	Error    *errorJSON        `json:"error,omitempty"`
}

func newDiffJSON(name string, vres *verifyResult, res *deploy.DiffResult) diffJSON {
	out := diffJSON{File: name, Authenticated: vres.Authenticated, Signer: vres.Signer, DiffResult: res, Droplets: dropletDiffsJSON(res.Droplets)}
	for _, p := range res.Pairs {
		pj := pairDiffJSON{DiffResult: p, Droplets: dropletDiffsJSON(p.Droplets)}
		if p.Error != "" {
			e := errorJSON{Code: codeOf(p.Err()), Message: p.Error}
			pj.Error = &e
		}
		out.Pairs = append(out.Pairs, pj)
	}
	return out
}

func dropletDiffsJSON(ds []*deploy.DropletDiff) []dropletDiffJSON {
	out := []dropletDiffJSON{}
	for _, d := range ds {
		j := dropletDiffJSON{DropletDiff: d}
		if d.Err != nil {
			e := newErrorJSON(d.Err, "")
			j.Error = &e
		}
		out = append(out, j)
	}
	return out
}

// runDiff runs the diff and prints it (diff, deploy --plan).
func runDiff(c *cli.Context, name string, src *deploy.Source, vres *verifyResult, opts deploy.DiffOptions) error {
	if !c.Bool("json") {
		printSource(c, name, vres)
	}
	res, err := deploy.Diff(c.Context, src, opts)
	out := newDiffJSON(name, vres, res)
	out.Plan = c.Command.Name == "deploy"
	if err != nil {
		if !c.Bool("json") && res.Account != "" {
			printDiff(c.App.Writer, res, c.Bool("quiet"))
		}
		return withResult(deployError(onFile(c.Command.Name, name, err)), out)
	}
	if c.Bool("json") {
		return printJSON(c, out)
	}
	printDiff(c.App.Writer, res, c.Bool("quiet"))
	return nil
}

// printDiff prints a diff for a person: the header, each droplet that
// changes with what changes, the security changes, the count; a target
// over several account/region pairs has a section per pair (its droplets
// indented, its own count) after the droplets with an environment of
// their own, and the count over all.
func printDiff(w io.Writer, res *deploy.DiffResult, quiet bool) {
	if quiet {
		return
	}
	deployed := "nothing deployed yet"
	if len(res.Deployed) > 0 {
		var ds []string
		for _, d := range res.Deployed {
			ds = append(ds, d.String())
		}
		deployed = "deployed now: " + strings.Join(ds, ", ")
	}
	target := ""
	if res.Target != "" {
		target = "target " + res.Target + ", "
	}
	where := fmt.Sprintf("account %s, region %s", res.Account, strings.Join(res.Regions, ", "))
	if len(res.Pairs) > 0 {
		where = fmt.Sprintf("%s (regions %s) as account %s", plural.Count(len(res.Pairs), "account/region pair"), strings.Join(res.Regions, ", "), res.Account)
	}
	fmt.Fprintf(w, "%s%s; reviewing %s, %s\n", target, where, res.SHA256, deployed)
	printDropletDiffs(w, res.Droplets)
	for _, p := range res.Pairs {
		fmt.Fprintf(w, "%s (account %s, region %s):\n", p.Environment, p.Account, strings.Join(p.Regions, ", "))
		var b strings.Builder
		printDropletDiffs(&b, p.Droplets)
		if p.Error != "" && !slices.ContainsFunc(p.Droplets, func(d *deploy.DropletDiff) bool { return d.Err != nil }) {
			fmt.Fprintf(&b, "not compared: %s\n", p.Error) // a refusal of the pair, not of a droplet
		}
		b.WriteString(diffSummary(p) + "\n")
		for _, line := range strings.SplitAfter(strings.TrimSuffix(b.String(), "\n"), "\n") {
			fmt.Fprint(w, "   "+line)
		}
		fmt.Fprintln(w)
	}
	line := diffSummary(res)
	if res.Broadened > 0 {
		line += fmt.Sprintf("; %s widen%s what is allowed (security changes above)", plural.Count(res.Broadened, "stack"), map[bool]string{true: "s", false: ""}[res.Broadened == 1])
	}
	fmt.Fprintln(w, line)
}

// diffSummary counts the droplets that change: "2 of 4 droplets change".
func diffSummary(res *deploy.DiffResult) string {
	switch {
	case res.Total == 1:
		return fmt.Sprintf("%d of 1 droplet changes", res.Changed)
	case res.Changed == 1:
		return fmt.Sprintf("1 of %d droplets changes", res.Total)
	}
	return fmt.Sprintf("%d of %s change", res.Changed, plural.Count(res.Total, "droplet"))
}

// printDropletDiffs prints each compared droplet's state and what changes.
func printDropletDiffs(w io.Writer, droplets []*deploy.DropletDiff) {
	for _, d := range droplets {
		if d.State == deploy.StateExcluded {
			continue
		}
		head := fmt.Sprintf("%s (%s)", d.ID, d.Alias)
		if d.StackName != "" {
			head = fmt.Sprintf("%s (stack %s)", d.ID, d.StackName)
		}
		fmt.Fprintf(w, "%s: %s\n", head, d.State)
		if d.Err != nil {
			fmt.Fprintf(w, "   %v\n", d.Err)
		}
		for _, n := range d.Notes {
			fmt.Fprintf(w, "   %s\n", n)
		}
		if len(d.Pending) > 0 {
			fmt.Fprintf(w, "   known after deploy: %s\n", strings.Join(d.Pending, ", "))
		}
		if s := d.Stack; s != nil {
			printStackDiff(w, s)
		}
		for _, o := range d.Objects {
			switch o.Action {
			case review.Remove:
				fmt.Fprintf(w, "   [-] %s (not in the assembly)\n", o.URL)
			case review.Add:
				fmt.Fprintf(w, "   [+] %s (%d bytes, sha256 %s)\n", o.URL, o.Size, o.SHA256)
			default:
				fmt.Fprintf(w, "   [~] %s (%d bytes, sha256 %s, was %s)\n", o.URL, o.Size, o.SHA256, orNone(o.OldSHA256))
			}
		}
		if im := d.Image; im != nil && im.Action != "unchanged" {
			line := fmt.Sprintf("   [%s] %s", mark(im.Action), im.Ref)
			if im.Digest != "" {
				line += " " + im.Digest
			}
			if im.OldDigest != "" {
				line += " (was " + im.OldDigest + ")"
			}
			fmt.Fprintln(w, line)
		}
	}
}

func mark(action string) string {
	switch action {
	case review.Add:
		return "+"
	case review.Remove:
		return "-"
	}
	return "~"
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func printStackDiff(w io.Writer, s *review.StackDiff) {
	for _, r := range s.Resources {
		line := fmt.Sprintf("   [%s] %s %s", mark(r.Action), r.LogicalID, r.Type)
		if r.Replacement != "" {
			line += " (replacement: " + r.Replacement + ")"
		}
		fmt.Fprintln(w, line)
		for _, ch := range r.Changes {
			fmt.Fprintf(w, "       %s: %s\n", ch.Path, oldNew(ch))
		}
	}
	for _, group := range []struct {
		what string
		chs  []review.ValueChange
	}{{"parameter", s.Parameters}, {"tag", s.Tags}, {"setting", s.Settings}, {"output", s.Outputs}, {"section", s.Sections}} {
		for _, ch := range group.chs {
			fmt.Fprintf(w, "   %s %s: %s\n", group.what, ch.Path, oldNew(ch))
		}
	}
	if len(s.Security) > 0 {
		fmt.Fprintln(w, "   security changes (allowed now and not before):")
		for _, g := range s.Security {
			fmt.Fprintf(w, "      + %s\n", g)
		}
	}
}

// oldNew is "OLD -> NEW", "+ NEW" or "- OLD", values as JSON.
func oldNew(ch review.ValueChange) string {
	val := func(v any) string {
		if s, ok := v.(string); ok && s == review.Pending {
			return s
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		if len(b) > 200 {
			return string(b[:200]) + "..."
		}
		return string(b)
	}
	switch {
	case ch.Old == nil:
		return "+ " + val(ch.New)
	case ch.New == nil:
		return "- " + val(ch.Old)
	}
	return val(ch.Old) + " -> " + val(ch.New)
}

// terminalApprover asks at the terminal whether to deploy what needs
// approval (the diff shown first); nil when there is no terminal (or
// with --json): then deploy refuses, naming what needs approval.
func terminalApprover(c *cli.Context) func(context.Context, *deploy.DiffResult, []string) error {
	if c.Bool("json") {
		return nil
	}
	tty, err := openTerminal()
	if err != nil {
		return nil
	}
	return func(ctx context.Context, d *deploy.DiffResult, reasons []string) error {
		defer tty.Close()
		printDiff(tty, d, false)
		fmt.Fprintln(tty, "these changes need approval:")
		for _, r := range reasons {
			fmt.Fprintf(tty, "   %s\n", r)
		}
		fmt.Fprint(tty, "deploy them (y/n)? ")
		answer := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(tty).ReadString('\n')
			answer <- strings.ToLower(strings.TrimSpace(line))
		}()
		select {
		case a := <-answer:
			if a == "y" || a == "yes" {
				return nil
			}
			return deploy.ErrNotApproved
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// approvalLevel translates --require-approval; "" leaves the level to
// the policy file's deploy section, else the default
// (deploy.Options.WithPolicy, which deploy.Run applies).
func approvalLevel(c *cli.Context) (deploy.Approval, error) {
	v := c.String("require-approval")
	if v == "" {
		return "", nil
	}
	a, err := deploy.ParseApproval(v)
	if err != nil {
		return "", usageError{flagNamed(err, deployFlagNames)}
	}
	return a, nil
}
