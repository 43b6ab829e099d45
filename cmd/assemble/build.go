package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/output"
	"github.com/cloud-assembly/assemble/packager"
)

func buildCmd() *cli.Command {
	return &cli.Command{
		Name:      "build",
		Usage:     "build a project (assembly.yaml, a CDK cdk.out, or one template) into a .cloud assembly",
		ArgsUsage: "[PROJECT]",
		Description: `PROJECT is a folder holding assembly.yaml, a CDK cloud assembly (the cdk.out
   folder 'cdk synth' writes, or a CDK app folder holding one), a folder
   holding one template, or a template file (default: the current folder). A
   cdk.out is shipped byte for byte under cdk.out/ with droplets describing
   its stacks and assets; 'assemble extract --cdk-out' gives it back. The
   output defaults to <folder name>.cloud in the current folder; -o - writes
   it to standard output. Entries carry the time in SOURCE_DATE_EPOCH when it
   is set, else 1980-01-01, so rebuilds are identical.

   Example: assemble build -o webapp.cloud fixtures/examples/webapp
            cdk synth && assemble build -o app.cloud cdk.out`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the assembly to `FILE`"},
			&cli.BoolFlag{Name: "strict", Usage: "fail when anything is missing (a stack parameter with no value and no default)"},
			&cli.StringFlag{Name: "environment", Usage: "default `ENV` for droplets that name none (e.g. aws://123456789012/eu-west-1)"},
			jsonFlag,
			&cli.StringFlag{Name: "schemas", Usage: "check every packaged template against the resource type schemas (*.json) in `DIR`"},
			&cli.BoolFlag{Name: "schemas-warn", Usage: "report --schemas findings as warnings instead of failing the build"},
			quietFlag,
			progressFlag,
		},
		Action: runBuild,
	}
}

func runBuild(c *cli.Context) error {
	if c.NArg() > 1 {
		return usagef("build takes one PROJECT, got %d arguments", c.NArg())
	}
	project := "."
	if c.NArg() == 1 {
		project = c.Args().First()
	}
	output := c.String("output")
	if output == "-" && c.Bool("json") {
		return withHint(usagef("--json and -o - both write to standard output"), "write the assembly to a file with -o FILE")
	}
	if output == "" {
		abs, err := filepath.Abs(project)
		if err != nil {
			return err
		}
		if base := filepath.Base(abs); base == packager.ProjectFile || base == "manifest.json" {
			abs = filepath.Dir(abs) // named after the project (or cdk.out) folder
		}
		name := filepath.Base(abs)
		name = strings.TrimSuffix(name, filepath.Ext(name))
		output = name + ".cloud"
	}
	if env := c.String("environment"); env != "" {
		if _, err := assembly.ParseEnvironment(env); err != nil {
			return usagef("--environment: %v (e.g. aws://123456789012/eu-west-1)", err)
		}
	}
	opts := packager.BuildOptions{
		Strict:      c.Bool("strict"),
		Environment: c.String("environment"),
	}
	if err := buildSchemas(c, &opts); err != nil {
		return err
	}
	prog := newProgress(c, "building "+output)
	opts.Progress = prog.Func()
	plan, err := packager.Load(project, opts)
	if err != nil {
		return onFile("build", project, err)
	}
	f, sum, size, err := writeBuild(c, plan, output, prog)
	if err != nil {
		return onFile("build", project, err)
	}
	for _, w := range plan.Warnings {
		warnf(c, "%s", w)
	}
	if c.Bool("json") {
		return printJSON(c, buildResult{
			Output:   output,
			SHA256:   sum,
			Size:     size,
			Droplets: plan.Report.Order,
			Files:    plan.Files(),
			Missing:  sortedMissing(plan.Manifest),
			Warnings: diagnosticsJSON(plan.Warnings),
		})
	}
	out := summaryWriter(c, f)
	printf(c, out, "built %s: %s, %s\n", output, count(len(plan.Manifest.Droplets), "droplet"), count(len(plan.Files()), "file"))
	printf(c, out, "sha256: %s\n", sum)
	for _, k := range sortedMissing(plan.Manifest) {
		printf(c, out, "missing: %s\n", k)
	}
	return nil
}

// writeBuild writes the planned assembly to the output through the one
// output writer, never over a file the build read nor into a folder it
// ships, with progress on standard error. It returns the output and the
// SHA-256 of what it wrote, hashed on the way.
func writeBuild(c *cli.Context, plan *packager.Plan, name string, prog *progress) (f *output.File, sum string, size int64, err error) {
	f, err = createOutput(c, name, plan.Inputs(), true)
	if err != nil {
		return nil, "", 0, err
	}
	defer f.Close()
	if err := plan.CheckOutput(f.Target()); err != nil {
		return nil, "", 0, err
	}
	dw := newDigestWriter(f)
	defer dw.close()
	_, err = plan.WriteTo(c.Context, dw)
	prog.Done()
	if err == nil {
		sum, err = dw.Sum()
	}
	if err == nil {
		err = f.Commit()
	}
	if err != nil {
		return nil, "", 0, err
	}
	return f, sum, dw.n, nil
}

type buildResult struct {
	Output   string           `json:"output"`
	SHA256   string           `json:"sha256"`
	Size     int64            `json:"size"`
	Droplets []string         `json:"droplets"`
	Files    []string         `json:"files"`
	Missing  []string         `json:"missing"`
	Warnings []diagnosticJSON `json:"warnings"`
}

type diagnosticJSON struct {
	Level   string `json:"level"`
	Rule    string `json:"rule,omitempty"`
	Droplet string `json:"droplet,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func diagnosticsJSON(fs []assembly.Finding) []diagnosticJSON {
	out := []diagnosticJSON{}
	for _, f := range fs {
		out = append(out, diagnosticJSON{f.Severity.String(), f.Rule, f.Droplet, f.Field, f.Message})
	}
	return out
}

func sortedMissing(m *assembly.Manifest) []string {
	keys := []string{}
	for k := range m.Missing {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// count formats "1 file", "2 files".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
