package packager

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/assembly"
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

// readParameters reads the Parameters section of a packaged template
// (YAML or JSON).
func readParameters(file string, body []byte) ([]templateParameter, error) {
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
	var params []templateParameter
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "Parameters" {
			continue
		}
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
			params = append(params, p)
		}
	}
	return params, nil
}

// parameters checks a stack's parameters against its template: a value for
// an undeclared parameter is an error; a declared parameter with no value
// and no default goes into "missing" (an error with Strict).
func (b *builder) parameters(id string, d *assembly.Droplet, name string, body []byte) error {
	declared, err := readParameters(name, body)
	if err != nil {
		var pe *ProjectError
		if errors.As(err, &pe) {
			pe.File = b.templatePath(name)
		}
		return err
	}
	given, _ := d.Properties["parameters"].(map[string]any)
	known := map[string]bool{}
	var names []string
	for _, p := range declared {
		known[p.name] = true
		names = append(names, p.name)
	}
	sort.Strings(names)
	for _, g := range sortedKeys(given) {
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

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
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
