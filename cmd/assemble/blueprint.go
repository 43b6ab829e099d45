package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/packager/blueprint"
	"github.com/urfave/cli/v2"
)

func blueprintCmd() *cli.Command {
	return &cli.Command{
		Name:   "blueprint",
		Usage:  "work with blueprints (Blueprint Specification v2023-04-20)",
		Action: subcommandGroupAction,
		Subcommands: []*cli.Command{
			blueprintValidateCmd(),
		},
	}
}

func blueprintValidateCmd() *cli.Command {
	return &cli.Command{
		Name:      "validate",
		Usage:     "check blueprints and the blueprints they include",
		ArgsUsage: "FILE...",
		Description: `Checks each blueprint against the Blueprint Specification v2023-04-20: every
section's rules, the ${..} substitution grammar and where substitutions may
appear, references, core function calls, reference cycles, each, and the
local blueprints it includes (include cycles, depth beyond 5, the variables
passed to them).

Everything known before deploy time (literals, --var values and defaults,
values, core function calls on them) is evaluated as assemble build would,
so a failing call, an object interpolated into a string, each over an
object or an export of the wrong type is reported here, at its place.

${cwd()} in include paths stands for --cwd, which defaults to the current
working directory. Relative include paths resolve from the including file's
folder. Includes whose path is known only at deploy time, or whose metadata
names a remote sourceType, are not loaded.

Example:
   assemble blueprint validate --var environment=prod app.blueprint.yaml`,
		Flags: []cli.Flag{
			jsonFlag,
			&cli.StringFlag{Name: "cwd", Usage: "the folder `DIR` that ${cwd()} stands for (default: the working directory)"},
			&cli.StringSliceFlag{Name: "var", Usage: "value for a root blueprint variable, as `NAME=VALUE` (repeatable)"},
		},
		Action: blueprintValidate,
	}
}

type jsonDiag struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

type jsonResult struct {
	File       string     `json:"file"`
	Valid      bool       `json:"valid"`
	Blueprints []string   `json:"blueprints"`
	Errors     []jsonDiag `json:"errors"`
}

func blueprintValidate(c *cli.Context) error {
	if c.NArg() == 0 {
		return withHint(usagef("blueprint validate needs at least one FILE"), "example: assemble blueprint validate app.blueprint.yaml")
	}
	vars := map[string]any{}
	for _, kv := range c.StringSlice("var") {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return withHint(usagef("--var %q is not NAME=VALUE", kv), "example: --var environment=prod")
		}
		vars[name] = value
	}
	opts := blueprint.Options{Cwd: c.String("cwd"), Variables: vars}
	results := []jsonResult{}
	var firstErr error
	failed := 0
	for _, file := range c.Args().Slice() {
		bp, err := blueprint.Load(file, opts)
		res := jsonResult{File: file, Valid: err == nil, Blueprints: loaded(bp), Errors: []jsonDiag{}}
		if err != nil {
			failed++
			var list blueprint.ErrorList
			if !errors.As(err, &list) {
				return onFile("validate", file, err)
			}
			if firstErr == nil {
				firstErr = list
			}
			for _, e := range list {
				res.Errors = append(res.Errors, jsonDiag{File: e.File, Line: e.Line, Column: e.Column, Code: blueprint.Code(e), Message: e.Msg})
			}
		}
		results = append(results, res)
	}
	res := blueprintResult{Valid: failed == 0, Files: results}
	if !c.Bool("json") {
		for _, r := range results {
			if r.Valid {
				printf(c, c.App.Writer, "%s: valid (%s)\n", r.File, plural.Count(len(r.Blueprints), "blueprint"))
				continue
			}
			for _, d := range r.Errors {
				place := d.File
				if d.Line > 0 {
					place = fmt.Sprintf("%s:%d:%d", d.File, d.Line, d.Column)
				}
				fmt.Fprintf(c.App.ErrWriter, "assemble: error: %s: %s\n", place, d.Message)
			}
		}
	}
	if failed > 0 {
		err := because(firstErr, "", "%d of %s invalid", failed, plural.Count(len(results), "blueprint file"))
		return withResult(withHint(err, "fix the errors above; see the Blueprint Specification v2023-04-20"), res)
	}
	if c.Bool("json") {
		return printJSON(c, res)
	}
	return nil
}

// blueprintResult is blueprint validate's result as JSON
// (docs/json/blueprint-validate.json): one entry per file given.
type blueprintResult struct {
	Valid bool         `json:"valid"`
	Files []jsonResult `json:"files"`
}

// loaded lists the blueprint and the children loaded with it, depth first.
func loaded(bp *blueprint.Blueprint) []string {
	out := []string{}
	var walk func(b *blueprint.Blueprint)
	walk = func(b *blueprint.Blueprint) {
		if b == nil {
			return
		}
		out = append(out, b.Path)
		names := make([]string, 0, len(b.Children))
		for n := range b.Children {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			walk(b.Children[n].Blueprint)
		}
	}
	walk(bp)
	return out
}
