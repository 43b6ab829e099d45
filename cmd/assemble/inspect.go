package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/tidwall/gjson"
	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/plural"
)

func inspectCmd() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "show an assembly's droplets, dependencies, deploy order and warnings",
		ArgsUsage: "ASSEMBLY",
		Description: `inspect reads an assembly without verifying it: a signed assembly is
   reported as signed but unverified (use 'assemble verify' to check it).
   --query takes a gjson path over manifest.json (https://github.com/tidwall/gjson).
   The assembly is checked as every command checks it (the table below):
   errors fail, warnings are shown, and --strict makes them errors.

   Example: assemble inspect webapp.cloud --query 'droplets.Service.properties.parameters'

` + findingsHelp(),
		Flags: []cli.Flag{
			jsonFlag,
			&cli.StringFlag{Name: "query", Usage: "print the part of manifest.json the gjson `PATH` selects"},
			strictFlag,
			noWarnUnverifiedFlag,
			digestFlag, timeoutFlag(),
		},
		Action: runInspect,
	}
}

func runInspect(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("inspect takes one ASSEMBLY, got %d arguments", c.NArg())
	}
	name := c.Args().First()
	file := shown(name)
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		return withHint(because(errIsFolder, file, "%s is a folder, not an assembly", file), fmt.Sprintf("build it first with 'assemble build -o app.cloud %s', or draw a project with 'assemble graph %s'", file, file))
	}
	r, cl, err := openReader(c, "", name)
	if err != nil {
		return err
	}
	defer cl.Close()
	signed := r.Signed()
	if signed {
		warnUnverified(c, file)
	}
	rep, err := r.Check(checkOptions(c))
	showFindings(c, file, rep)
	if err != nil {
		return onFile("", file, err)
	}
	m := rep.Manifest
	if q := c.String("query"); q != "" {
		body, err := fs.ReadFile(r, assembly.ManifestName)
		if err != nil {
			return err
		}
		res := gjson.GetBytes(body, q)
		if !res.Exists() {
			return withHint(because(errNoMatch, file, "%s: query %q matches nothing in manifest.json", file, q), "paths look like droplets.Service.properties or droplets.@keys")
		}
		switch {
		case c.Bool("json"):
			return printJSON(c, queryResult{File: file, Query: q, Value: json.RawMessage(res.Raw)})
		case res.Type == gjson.String:
			fmt.Fprintln(c.App.Writer, res.String())
		default:
			fmt.Fprintln(c.App.Writer, res.Raw)
		}
		return nil
	}
	if c.Bool("json") {
		return printJSON(c, inspectJSON(file, r, m, rep))
	}
	w := c.App.Writer
	state := "unsigned"
	if signed {
		state = "signed (signature not verified)"
	}
	fmt.Fprintf(w, "%s: %s, %s, %s, %s\n\n", file, m.Schema, plural.Count(len(m.Droplets), "droplet"), plural.Count(fileCount(r), "file"), state)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DROPLET\tTYPE\tENVIRONMENT\tDEPENDS ON")
	for _, id := range m.IDs() {
		d := m.Droplets[id]
		deps := strings.Join(rep.Graph.Dependencies(id), ", ")
		if deps == "" {
			deps = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", id, d.Type, d.Environment, deps)
	}
	tw.Flush()
	fmt.Fprintf(w, "\ndeploy order: %s\n", strings.Join(rep.Order, ", "))
	for _, k := range sortedMissing(m) {
		fmt.Fprintf(w, "missing: %s (provider %s)\n", k, m.Missing[k].Provider)
	}
	return nil
}

// queryResult is inspect --query's result as JSON: the part of
// manifest.json the query selects, as it is there.
type queryResult struct {
	File  string          `json:"file"`
	Query string          `json:"query"`
	Value json.RawMessage `json:"value"`
}

type inspectDroplet struct {
	ID           string   `json:"id"`
	Type         string   `json:"type"`
	Environment  string   `json:"environment"`
	DependsOn    []string `json:"dependsOn"`
	Dependencies []string `json:"dependencies"`
}

type inspectFile struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

type inspectResult struct {
	File              string           `json:"file"`
	Schema            string           `json:"schema"`
	Signed            bool             `json:"signed"`
	SignatureVerified bool             `json:"signatureVerified"`
	Droplets          []inspectDroplet `json:"droplets"`
	Order             []string         `json:"order"`
	Missing           []string         `json:"missing"`
	Files             []inspectFile    `json:"files"`
	Warnings          []diagnosticJSON `json:"warnings"`
}

func inspectJSON(file string, r *assembly.Reader, m *assembly.Manifest, rep *assembly.Report) inspectResult {
	out := inspectResult{File: file, Schema: m.Schema, Signed: r.Signed(), Order: rep.Order,
		Missing: sortedMissing(m), Warnings: diagnosticsJSON(rep.Warnings()), Droplets: []inspectDroplet{}, Files: []inspectFile{}}
	for _, id := range m.IDs() {
		d := m.Droplets[id]
		deps := rep.Graph.Dependencies(id)
		if deps == nil {
			deps = []string{}
		}
		explicit := d.DependsOn
		if explicit == nil {
			explicit = []string{}
		}
		out.Droplets = append(out.Droplets, inspectDroplet{ID: id, Type: d.Type, Environment: d.Environment, DependsOn: explicit, Dependencies: deps})
	}
	for _, f := range r.Files() {
		out.Files = append(out.Files, inspectFile{f.Name(), f.Size()})
	}
	return out
}

// warnUnverified is the warning the spec requires when a signed assembly is
// processed without verifying its signature.
func warnUnverified(c *cli.Context, file string) {
	if c.Bool("no-warn-unverified") {
		return
	}
	warnf(c, "%s is signed, but this command does not verify signatures: nothing in it is verified (run 'assemble verify --keyring FILE %s')", file, file)
}
