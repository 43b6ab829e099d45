package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/packager/registry"
)

func moduleCmd() *cli.Command {
	typeName := &cli.StringFlag{Name: "type-name", Usage: "module type name `Org::Service::Name::MODULE` (default: typeName in the project's .rpdk-config)"}
	return &cli.Command{
		Name:   "module",
		Action: subcommandGroupAction,
		Usage:  "validate CloudFormation registry modules and generate their schema",
		Subcommands: []*cli.Command{
			{
				Name:      "validate",
				Usage:     "check a module fragment against the registry's module rules",
				ArgsUsage: "FRAGMENT|MODULE_DIR",
				Description: `Makes every check of cloudformation-cli's 'cfn validate' on a module
fragment (a template file, or a module project folder with .rpdk-config and
one template under fragments/), and, when the type name is known, checks
that modules in neighbouring project folders nest at most 3 levels deep
without cycles. Exits 1 if the module is invalid.

   Example: assemble module validate modules/S3_Bucket`,
				Flags:  []cli.Flag{typeName, jsonFlag},
				Action: moduleValidate,
			},
			{
				Name:      "schema",
				Usage:     "print the module schema generated from a fragment",
				ArgsUsage: "FRAGMENT|MODULE_DIR",
				Description: `Writes the module schema exactly as 'cfn validate' writes schema.json.
The fragment must be valid.

   Example: assemble module schema -o schema.json modules/S3_Bucket`,
				Flags: []cli.Flag{
					typeName,
					&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the schema to `FILE` instead of standard output"},
					jsonFlag,
				},
				Action: moduleSchema,
			},
		},
	}
}

// loadModule reads the one FRAGMENT|MODULE_DIR argument and settles the
// type name (flag first, then .rpdk-config).
func loadModule(c *cli.Context, verb string) (*registry.Module, error) {
	if c.NArg() != 1 {
		return nil, usagef("module %s: want one FRAGMENT or MODULE_DIR, got %d arguments", verb, c.NArg())
	}
	m, err := registry.Load(c.Args().First(), registry.DefaultLimits())
	if err != nil {
		return nil, moduleError(c, err)
	}
	if tn := c.String("type-name"); tn != "" {
		if err := registry.CheckTypeName(tn); err != nil {
			return nil, usageError{err}
		}
		m.TypeName = tn
	}
	return m, nil
}

// moduleError prints each problem of a fragment on its own line (with
// --json, they are in the result instead) and returns a one-line summary.
func moduleError(c *cli.Context, err error) error {
	var ve *registry.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	res := moduleFailure{File: ve.File, Problems: []moduleProblem{}}
	for _, p := range ve.Problems {
		res.Problems = append(res.Problems, moduleProblem{p.Line, p.Col, p.Message})
		switch {
		case c.Bool("json"):
		case p.Line > 0:
			fmt.Fprintf(c.App.Writer, "%s:%d:%d: %s\n", ve.File, p.Line, p.Col, p.Message)
		default:
			fmt.Fprintf(c.App.Writer, "%s: %s\n", ve.File, p.Message)
		}
	}
	err = because(ve, ve.File, "%s: %s: %s", ve.File, plural.Count(len(ve.Problems), "problem"), registry.ErrInvalidFragment)
	return withResult(withHint(err, "fix the problems listed above; modules cannot import values, nest stacks or use transforms or macros"), res)
}

// moduleFailure is what module validate and module schema report as JSON
// beside the error of an invalid fragment: every problem.
type moduleFailure struct {
	File     string          `json:"file"`
	Valid    bool            `json:"valid"`
	Problems []moduleProblem `json:"problems"`
}

type moduleProblem struct {
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
}

// moduleResult is module validate's result as JSON
// (docs/json/module-validate.json).
type moduleResult struct {
	File     string `json:"file"`
	TypeName string `json:"typeName,omitempty"`
	Valid    bool   `json:"valid"`
}

// moduleSchemaResult is module schema's result as JSON
// (docs/json/module-schema.json): the schema itself, or the file it was
// written to.
type moduleSchemaResult struct {
	File     string          `json:"file"`
	TypeName string          `json:"typeName"`
	Output   string          `json:"output,omitempty"`
	Schema   json.RawMessage `json:"schema,omitempty"`
}

func moduleValidate(c *cli.Context) error {
	m, err := loadModule(c, "validate")
	if err != nil {
		return err
	}
	if err := m.Validate(registry.DefaultLimits()); err != nil {
		return moduleError(c, err)
	}
	if c.Bool("json") {
		return printJSON(c, moduleResult{File: m.Fragment.File, TypeName: m.TypeName, Valid: true})
	}
	if m.TypeName != "" {
		printf(c, c.App.Writer, "%s: valid module fragment (%s)\n", m.Fragment.File, m.TypeName)
	} else {
		printf(c, c.App.Writer, "%s: valid module fragment\n", m.Fragment.File)
	}
	return nil
}

func moduleSchema(c *cli.Context) error {
	m, err := loadModule(c, "schema")
	if err != nil {
		return err
	}
	if m.TypeName == "" {
		return withHint(usagef("module schema: no type name for %s", c.Args().First()),
			"pass --type-name Org::Service::Name::MODULE, or run it on a module project with a .rpdk-config")
	}
	b, err := m.Fragment.Schema(m.TypeName, registry.DefaultLimits())
	if err != nil {
		return moduleError(c, err)
	}
	out := c.String("output")
	if c.Bool("json") && (out == "" || out == "-") {
		return printJSON(c, moduleSchemaResult{File: m.Fragment.File, TypeName: m.TypeName, Schema: b})
	}
	if err := writeOutput(c, out, b, []string{c.Args().First(), m.Fragment.File}); err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, moduleSchemaResult{File: m.Fragment.File, TypeName: m.TypeName, Output: out})
	}
	return nil
}
