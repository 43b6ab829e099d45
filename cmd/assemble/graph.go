package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/packager"
	"github.com/cloud-assembly/assemble/remote"
)

func graphCmd() *cli.Command {
	return &cli.Command{
		Name:      "graph",
		Usage:     "print the dependency graph of an assembly or a project (Graphviz dot or Mermaid)",
		ArgsUsage: "ASSEMBLY|PROJECT",
		Description: `Arrows point from a droplet to the droplets that depend on it, in deploy
   order; each is labelled with the dependsOn or the references that make it.

   Example: assemble graph --format mermaid fixtures/examples/webapp`,
		Flags: []cli.Flag{
			noWarnUnverifiedFlag,
			&cli.StringFlag{Name: "format", Value: "dot", Usage: "output `FORMAT`: dot or mermaid"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the graph to `FILE` instead of standard output"},
			jsonFlag,
		},
		Action: runGraph,
	}
}

func runGraph(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("graph takes one ASSEMBLY or PROJECT, got %d arguments", c.NArg())
	}
	format := c.String("format")
	if format != "dot" && format != "mermaid" {
		return usagef("unknown format %q: use dot or mermaid", format)
	}
	target := c.Args().First()
	m, rep, inputs, err := loadGraph(c, target)
	if err != nil {
		return err
	}
	out := c.String("output")
	if c.Bool("json") && (out == "" || out == "-") {
		return printJSON(c, graphJSON(target, m, rep, "", ""))
	}
	var buf bytes.Buffer
	if format == "dot" {
		writeDot(&buf, m, rep.Graph)
	} else {
		writeMermaid(&buf, m, rep.Graph)
	}
	if err := writeOutput(c, out, buf.Bytes(), inputs); err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(c, graphJSON(target, m, rep, format, out))
	}
	return nil
}

// graphResult is graph's result as JSON (docs/json/graph.json): the
// droplets, each dependency with what makes it, and a deploy order; with
// -o, the file the drawing was written to.
type graphResult struct {
	File string `json:"file"`
	// Source is File under its old name, kept one release (deprecated).
	Source   string      `json:"source"`
	Droplets []graphNode `json:"droplets"`
	Edges    []graphEdge `json:"edges"`
	Order    []string    `json:"order"`
	Format   string      `json:"format,omitempty"`
	Output   string      `json:"output,omitempty"`
}

type graphNode struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Kind string `json:"kind"`
}

// A graphEdge says that Droplet depends on DependsOn, because of Via (a
// dependsOn entry or the references that make it).
type graphEdge struct {
	Droplet   string `json:"droplet"`
	DependsOn string `json:"dependsOn"`
	Via       string `json:"via"`
}

func graphJSON(source string, m *assembly.Manifest, rep *assembly.Report, format, output string) graphResult {
	res := graphResult{File: source, Source: source, Droplets: []graphNode{}, Edges: []graphEdge{}, Order: rep.Order, Format: format, Output: output}
	for _, id := range rep.Graph.IDs {
		res.Droplets = append(res.Droplets, graphNode{id, m.Droplets[id].Type, kindName(m.Droplets[id])})
	}
	pairs, labels := edgeLabels(rep.Graph)
	for _, p := range pairs {
		res.Edges = append(res.Edges, graphEdge{Droplet: p[1], DependsOn: p[0], Via: labels[p]})
	}
	return res
}

// loadGraph reads an assembly (a ZIP file) or loads a project. It returns
// the files it read.
func loadGraph(c *cli.Context, target string) (*assembly.Manifest, *assembly.Report, []string, error) {
	if remote.IsLocation(target) || isZip(target) {
		rc, cl, err := openReader(c, "", target)
		if err != nil {
			return nil, nil, nil, err
		}
		defer cl.Close()
		if rc.Signed() {
			warnUnverified(c, target)
		}
		rep, err := rc.Check(assembly.CheckOptions{})
		showFindings(c, target, rep)
		if err != nil {
			return nil, nil, nil, onFile("", target, err)
		}
		return rep.Manifest, rep, []string{target}, nil
	}
	plan, err := packager.Load(target, packager.BuildOptions{})
	if err != nil {
		return nil, nil, nil, onFile("graph", target, err)
	}
	for _, d := range plan.Warnings {
		warnf(c, "%s", d)
	}
	return plan.Manifest, plan.Report, plan.Inputs(), nil
}

func isZip(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == "PK\x03\x04"
}

// kindName is a droplet's kind for labels: its class name, else its type.
func kindName(d *assembly.Droplet) string { return droplets.KindName(d.Type) }

// edgeLabels groups the graph's edges by (dependency, dependent) pair.
func edgeLabels(g *assembly.Graph) (pairs [][2]string, labels map[[2]string]string) {
	labels = map[[2]string]string{}
	for _, e := range g.Edges() {
		k := [2]string{e.To, e.From}
		if _, ok := labels[k]; !ok {
			pairs = append(pairs, k)
			labels[k] = e.Via
		} else {
			labels[k] += ", " + e.Via
		}
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i][0] != pairs[j][0] {
			return pairs[i][0] < pairs[j][0]
		}
		return pairs[i][1] < pairs[j][1]
	})
	return pairs, labels
}

func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

func writeDot(w io.Writer, m *assembly.Manifest, g *assembly.Graph) {
	fmt.Fprintln(w, "digraph assembly {")
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, "  node [shape=box];")
	for _, id := range g.IDs {
		fmt.Fprintf(w, "  %s [label=%s];\n", dotQuote(id), dotQuote(id+"\n"+kindName(m.Droplets[id])))
	}
	pairs, labels := edgeLabels(g)
	for _, p := range pairs {
		fmt.Fprintf(w, "  %s -> %s [label=%s];\n", dotQuote(p[0]), dotQuote(p[1]), dotQuote(labels[p]))
	}
	fmt.Fprintln(w, "}")
}

func mermaidText(s string) string {
	return `"` + strings.NewReplacer(`"`, "#quot;", "|", "#124;", "<", "#lt;", ">", "#gt;").Replace(s) + `"`
}

func writeMermaid(w io.Writer, m *assembly.Manifest, g *assembly.Graph) {
	fmt.Fprintln(w, "flowchart LR")
	node := map[string]string{}
	for i, id := range g.IDs {
		node[id] = fmt.Sprintf("n%d", i)
		fmt.Fprintf(w, "  n%d[%s]\n", i, mermaidText(id+" ("+kindName(m.Droplets[id])+")"))
	}
	pairs, labels := edgeLabels(g)
	for _, p := range pairs {
		fmt.Fprintf(w, "  %s -->|%s| %s\n", node[p[0]], mermaidText(labels[p]), node[p[1]])
	}
}
