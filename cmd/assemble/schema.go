package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/packager/schema"
)

func schemaCmd() *cli.Command {
	return &cli.Command{
		Name:   "schema",
		Action: subcommandGroupAction,
		Usage:  "work with CloudFormation resource type schemas",
		Subcommands: []*cli.Command{
			{
				Name:      "validate",
				Usage:     "validate resource type schemas against the provider definition meta-schema",
				ArgsUsage: "FILE...",
				Description: `Checks each schema against the embedded Resource Provider Definition
meta-schema and the rules the reference tools enforce beyond it. Prints one
line per file, or one per error with its JSON path. Lint findings are
warnings (listed with --warnings) and never make a schema invalid.
Exits 1 if any schema is invalid.

   Example: assemble schema validate --json schemas/*.json`,
				Flags: []cli.Flag{
					jsonFlag,
					&cli.BoolFlag{Name: "warnings", Aliases: []string{"w"}, Usage: "also print each warning"},
					&cli.BoolFlag{Name: "strict", Usage: "report as errors, not warnings, identifier and property-list pointers that name no property, and the checks cloudformation-resource-schema makes beyond the spec (tagUpdatable without an update handler, taggable beside tagging)"},
				},
				Action: schemaValidate,
			},
		},
	}
}

func schemaValidate(c *cli.Context) error {
	files := c.Args().Slice()
	if len(files) == 0 {
		return usagef("schema validate: no schema file given")
	}
	if os.Getenv("GOGC") == "" {
		// Validation allocates many short-lived maps; trading ~20 MB of
		// heap for fewer collections cuts CPU time by about a third.
		debug.SetGCPercent(400)
	}
	v, err := schema.DefaultValidator()
	if err != nil {
		return err
	}
	if c.Bool("strict") {
		v = v.Strict()
	}
	// One time for regular expressions for the whole command.
	v = v.WithRegexBudget(schema.NewRegexBudget(schema.DefaultRegexBudget))
	results := v.ValidateFiles(files, 0)
	invalid := 0
	for _, r := range results {
		if !r.Valid {
			invalid++
		}
	}
	w := c.App.Writer
	res := schemaResult{Valid: invalid == 0, Files: results}
	if !c.Bool("json") {
		for _, r := range results {
			if r.Valid {
				if n := len(r.Warnings); n > 0 {
					printf(c, w, "%s: valid (%s)\n", r.File, plural.Count(n, "warning"))
				} else {
					printf(c, w, "%s: valid\n", r.File)
				}
			}
			for _, e := range r.Errors {
				fmt.Fprintf(w, "%s: invalid: %s\n", r.File, e)
			}
			if c.Bool("warnings") {
				for _, e := range r.Warnings {
					warnf(c, "%s: %s", r.File, e)
				}
			}
		}
	}
	if invalid > 0 {
		err := withHint(fmt.Errorf("%d of %s invalid: %w", invalid, plural.Count(len(results), "schema"), schema.ErrInvalid),
			"fix the errors listed above; each names the JSON path of the offending value")
		return withResult(err, res)
	}
	if c.Bool("json") {
		return printJSON(c, res)
	}
	return nil
}

// schemaResult is schema validate's result as JSON
// (docs/json/schema-validate.json): one entry per file given.
type schemaResult struct {
	Valid bool            `json:"valid"`
	Files []schema.Result `json:"files"`
}

// subcommandGroupAction handles a command that only groups subcommands:
// with no argument it shows its help on standard error, as assemble with
// no command does; anything else is an unknown subcommand. Both are usage
// errors (exit 2).
func subcommandGroupAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return withHint(usagef("%s: unknown subcommand %q", c.Command.FullName(), c.Args().First()),
			fmt.Sprintf("run 'assemble %s --help' to list its subcommands", c.Command.FullName()))
	}
	c.App.Writer = c.App.ErrWriter
	cli.ShowSubcommandHelp(c)
	return usageError{shownError{fmt.Errorf("%s: no subcommand given", c.Command.FullName())}}
}
