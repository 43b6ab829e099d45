package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
)

// strictFlag is --strict of the commands that read assemblies.
var strictFlag = &cli.BoolFlag{Name: "strict", Usage: "treat the warnings of the assembly check as errors (see FINDINGS)"}

// checkOptions are the assembly check's options from the command's flags.
func checkOptions(c *cli.Context) assembly.CheckOptions {
	return assembly.CheckOptions{Strict: c.Bool("strict")}
}

// showFindings prints the check's warnings and notes about file.
func showFindings(c *cli.Context, file string, rep *assembly.Report) {
	if rep == nil {
		return
	}
	for _, f := range rep.Warnings() {
		warnf(c, "%s: %s", file, f)
	}
}

// findingsHelp is the table of findings for --help, from assembly.Rules
// (the README has the same table).
func findingsHelp() string {
	var b strings.Builder
	b.WriteString("FINDINGS (rule: when reading / with --strict / in build; the rule ends each finding's line):\n")
	for _, r := range assembly.Rules() {
		fmt.Fprintf(&b, "   %-19s %-7s %-7s %-7s %s\n", r.Code, r.Reading, r.Severity(assembly.CheckOptions{Strict: true}), r.Writing,
			strings.ReplaceAll(r.Summary, "`", ""))
	}
	return strings.TrimSuffix(b.String(), "\n")
}
