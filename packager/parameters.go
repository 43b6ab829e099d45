package packager

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/internal/suggest"
)

// MissingParameterProvider is the provider of the "missing" entries for
// stack parameters that have neither a value nor a default.
const MissingParameterProvider = "stack-parameter"

// templateParameter is one entry of a template's Parameters section.
type templateParameter struct {
	name       string
	typ        string
	hasDefault bool
	line, col  int
}

// templateInterface is what a stack's template declares for the droplets
// around it: its Parameters and its Outputs.
type templateInterface struct {
	params  []templateParameter
	outputs []string // sorted
	// outputsKnown is false when the template may gain Outputs at deploy
	// time (a Fn::ForEach among them, a transform other than
	// AWS::LanguageExtensions).
	outputsKnown bool
}

// readTemplate reads the Parameters and Outputs sections of a packaged
// template (YAML or JSON).
//
// body is the packager's output, whose limits bound it (a template of
// thousands of module instances may exceed yamlpos.MaxNodes), or a file
// read as it is, which build bounds with nodeLimit first.
func readTemplate(file string, body []byte) (*templateInterface, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(body, &doc); err != nil {
		return nil, yamlError(file, body, err)
	}
	if len(doc.Content) == 0 {
		return nil, &ProjectError{File: file, Err: fmt.Errorf("%w: the template is empty", ErrProject)}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &ProjectError{File: file, Line: root.Line, Column: root.Column, Err: fmt.Errorf("%w: a template must be a mapping (Resources, Parameters, ...)", ErrProject)}
	}
	ti := &templateInterface{outputsKnown: true}
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "Parameters":
			pn := root.Content[i+1]
			if pn.Kind != yaml.MappingNode {
				return nil, &ProjectError{File: file, Line: pn.Line, Column: pn.Column, Err: fmt.Errorf("%w: Parameters must be a mapping", ErrProject)}
			}
			for j := 0; j+1 < len(pn.Content); j += 2 {
				k, v := pn.Content[j], pn.Content[j+1]
				p := templateParameter{name: k.Value, line: k.Line, col: k.Column}
				if v.Kind == yaml.MappingNode {
					for x := 0; x+1 < len(v.Content); x += 2 {
						switch v.Content[x].Value {
						case "Default":
							p.hasDefault = true
						case "Type":
							p.typ = v.Content[x+1].Value
						}
					}
				}
				ti.params = append(ti.params, p)
			}
		case "Outputs":
			on := root.Content[i+1]
			for j := 0; on.Kind == yaml.MappingNode && j+1 < len(on.Content); j += 2 {
				name := on.Content[j].Value
				if strings.HasPrefix(name, "Fn::ForEach::") {
					ti.outputsKnown = false
				}
				ti.outputs = append(ti.outputs, name)
			}
		case "Transform":
			tn := root.Content[i+1]
			names := []*yaml.Node{tn}
			if tn.Kind == yaml.SequenceNode {
				names = tn.Content
			}
			for _, n := range names {
				if n.Kind != yaml.ScalarNode || n.Value != "AWS::LanguageExtensions" {
					ti.outputsKnown = false
				}
			}
		}
	}
	sort.Strings(ti.outputs)
	return ti, nil
}

// template reads a stack's packaged template: it checks the stack's
// parameters against it and records its Outputs for checkOutputs.
func (b *builder) template(id string, d *assembly.Droplet, kind *droplets.Kind, name string, body []byte) error {
	ti, err := readTemplate(name, body)
	if err != nil {
		var pe *ProjectError
		if errors.As(err, &pe) {
			pe.File = b.templatePath(name)
		}
		return err
	}
	if b.outputs == nil {
		b.outputs = map[string]templateOutputs{}
	}
	b.outputs[id] = templateOutputs{template: name, ti: ti}
	if kind.Property("parameters") == nil {
		return nil
	}
	return b.parameters(id, d, name, ti.params)
}

// templateOutputs is the template of a stack droplet, read.
type templateOutputs struct {
	template string // archive name
	ti       *templateInterface
}

// checkOutputs checks every ${Stack.output.Name} reference to a stack whose
// template the build packaged: the template must declare Output Name.
func (b *builder) checkOutputs() error {
	m := b.plan.Manifest
	var errs []error
	for _, id := range m.IDs() {
		refs, err := assembly.ScanProperties(m.Droplets[id].Properties)
		if err != nil {
			return err // Validate reported it already
		}
		for _, r := range refs {
			name, isOutput := strings.CutPrefix(r.Attribute, "output.")
			t, ok := b.outputs[r.Droplet]
			if !isOutput || !ok || !t.ti.outputsKnown {
				continue
			}
			i := sort.SearchStrings(t.ti.outputs, name)
			if i < len(t.ti.outputs) && t.ti.outputs[i] == name {
				continue
			}
			has := "it declares no Outputs"
			if len(t.ti.outputs) > 0 {
				has = "it declares " + strings.Join(t.ti.outputs, ", ") + didYouMean(name, t.ti.outputs)
			}
			err := fmt.Errorf("%w: %s: template %s declares no Output %q (%s)", ErrProject, r.Reference, t.template, name, has)
			errs = append(errs, b.errAt(id, "properties."+r.Field, also(err, assembly.ErrReference)))
		}
	}
	return errors.Join(errs...)
}

// didYouMean is `; did you mean "X"?` for the closest of names, or "".
func didYouMean(name string, names []string) string {
	if best := suggest.Closest(name, names); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return ""
}

// parameters checks a stack's parameters against its template's: a value
// for an undeclared parameter is an error; a declared parameter with no
// value and no default goes into "missing" (an error with Strict).
func (b *builder) parameters(id string, d *assembly.Droplet, name string, declared []templateParameter) error {
	given, _ := d.Properties["parameters"].(map[string]any)
	known := map[string]bool{}
	var names []string
	for _, p := range declared {
		known[p.name] = true
		names = append(names, p.name)
	}
	sort.Strings(names)
	for _, g := range slices.Sorted(maps.Keys(given)) {
		if !known[g] {
			decl := "declares none"
			if len(names) > 0 {
				decl = "declares " + strings.Join(names, ", ")
			}
			return b.errAt(id, "properties.parameters."+g, fmt.Errorf("%w: template %s has no parameter %q (it %s)", ErrProject, name, g, decl))
		}
	}
	for _, p := range declared {
		if _, ok := given[p.name]; ok || p.hasDefault {
			continue
		}
		if b.opts.Strict {
			b.missing = append(b.missing, &ProjectError{File: b.templatePath(name), Line: p.line, Column: p.col, Droplet: id, Field: "properties.parameters." + p.name,
				Err: fmt.Errorf("%w: parameter %s has no value and no default: set it under properties.parameters, or give it a Default", ErrMissing, p.name)})
			continue
		}
		props := map[string]any{"droplet": id, "parameter": p.name, "environment": d.Environment}
		if p.typ != "" {
			props["type"] = p.typ
		}
		if b.plan.Manifest.Missing == nil {
			b.plan.Manifest.Missing = map[string]*assembly.Missing{}
		}
		b.plan.Manifest.Missing[MissingParameterProvider+":"+id+":"+p.name] = &assembly.Missing{Provider: MissingParameterProvider, Props: props}
	}
	return nil
}

// templatePath names a template for messages: its path in the project.
func (b *builder) templatePath(name string) string {
	if b.plan.Dir == "" {
		return name
	}
	return b.plan.Dir + string(os.PathSeparator) + name
}

// maxTarHeaders bounds the entries read when checking a saved image.
const maxTarHeaders = 1 << 16

// checkSavedImage checks that file is a "docker image save" tarball: a tar
// archive holding manifest.json (Docker) or index.json (OCI layout). The
// file itself is shipped unchanged.
func checkSavedImage(file string, _ PackageOptions) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for i := 0; i < maxTarHeaders; i++ {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s is not a tar archive (%v): make it with docker image save -o FILE IMAGE", ErrProject, file, err)
		}
		switch strings.TrimPrefix(h.Name, "./") {
		case "manifest.json", "index.json":
			return nil, nil
		}
	}
	return nil, fmt.Errorf("%w: %s holds no manifest.json: make it with docker image save -o FILE IMAGE", ErrProject, file)
}
