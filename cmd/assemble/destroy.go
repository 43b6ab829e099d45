package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/deploy"
	"github.com/cloud-assembly/assemble/internal/plural"
)

func destroyCmd() *cli.Command {
	return &cli.Command{
		Name:      "destroy",
		Usage:     "verify an assembly, then delete what its droplets deployed",
		ArgsUsage: "ASSEMBLY",
		Description: `Verifies the assembly as 'assemble deploy' does (same trust flags, --policy
file, --target and roles), looks at everything first, then deletes, in
reverse dependency order and each in its droplet's own account and region,
only what the droplets deployed:
   stack        the stack whose assemble:droplet tag names the droplet
                (DeleteStack, waited for)
   file         the droplet's objects whose assemble-droplet metadata names it
   directory
   images       kept: registries keep their tags
A stack or object of a droplet's name that another assembly or tool made
refuses the whole destroy (not_owned) before anything is deleted: leave the
droplet out with --only. A stack's buckets are emptied only with --purge
(those it retains too); without it their contents are never touched.
--plan says what would be deleted and deletes nothing.

EXIT CODES:
   0  destroyed (or planned)
   1  refused, or a deletion failed
   2  usage error
   130 interrupted

Examples:
   assemble destroy --keyring release.pub.asc --target staging --plan app.cloud
   assemble destroy --keyring release.pub.asc --target staging app.cloud`,
		Flags: assemblyFlags("destroy",
			&cli.BoolFlag{Name: "plan", Usage: "say what would be deleted, deleting nothing"},
			&cli.StringSliceFlag{Name: "only", Usage: "destroy only the droplet `ID` (repeatable)"},
			&cli.BoolFlag{Name: "purge", Usage: "empty the stacks' S3 buckets (retained ones too) before deleting"},
		),
		Action: func(c *cli.Context) error {
			opts := deploy.DestroyOptions{Options: deploy.Options{
				Only: c.StringSlice("only"), Plan: c.Bool("plan"),
				Target: c.String("target"), RoleARN: c.String("role-arn"), Qualifier: c.String("qualifier"),
			}, Purge: c.Bool("purge")}
			if !c.Bool("quiet") {
				w := c.App.ErrWriter
				opts.Progress = func(e deploy.Event) { fmt.Fprintf(w, "assemble: %s: %s\n", eventWho(e), flagWords(e.Message)) }
			}
			name, src, vres, err := openDeploySource(c)
			defer vres.close()
			if err != nil {
				return err
			}
			out := deployJSON{File: name, SHA256: src.SHA256, Authenticated: vres.Authenticated, Signer: vres.Signer}
			if !c.Bool("json") {
				printSource(c, name, vres)
			}
			res, err := deploy.Destroy(c.Context, src, opts)
			out.fill(res)
			if !c.Bool("json") {
				printDestroy(c, name, res)
			}
			if err != nil {
				return withResult(deployError(onFile("destroy", name, err)), out)
			}
			if c.Bool("json") {
				return printJSON(c, out)
			}
			return nil
		},
	}
}

func printDestroy(c *cli.Context, name string, res *deploy.Result) {
	counts := map[deploy.Outcome]int{}
	all := append([]*deploy.Result{res}, res.Pairs...)
	for _, r := range all {
		indent := ""
		if r.Environment != "" {
			indent = "   "
			printf(c, c.App.Writer, "%s:\n", r.Environment)
		}
		for _, d := range r.Droplets {
			if d.Outcome == deploy.Excluded || d.Outcome == "" {
				continue
			}
			counts[d.Outcome]++
			printf(c, c.App.Writer, "%s%s (%s): %s\n", indent, d.ID, d.Alias, d.Outcome)
			for _, a := range d.Actions {
				printf(c, c.App.Writer, "%s   %s\n", indent, a)
			}
		}
	}
	var parts []string
	for _, o := range []deploy.Outcome{deploy.Deleted, deploy.Planned, deploy.Absent, deploy.Kept, deploy.Failed, deploy.NotStarted} {
		if counts[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[o], o))
		}
	}
	verb := "destroyed"
	if res.Plan {
		verb = "planned the destruction of"
	}
	n := 0
	for _, v := range counts {
		n += v
	}
	printf(c, c.App.Writer, "%s %s of %s: %s\n", verb, plural.Count(n, "droplet"), name, strings.Join(parts, ", "))
}

// eventWho names a progress event's droplet, and its account/region pair
// in a target of several.
func eventWho(e deploy.Event) string {
	if e.Environment != "" {
		return e.Droplet + " (" + strings.TrimPrefix(e.Environment, "aws://") + ")"
	}
	return e.Droplet
}
