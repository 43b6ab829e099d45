package packager

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/yamlpos"
)

// ProjectFile is the name of the project description in a project folder.
const ProjectFile = "assembly.yaml"

// MaxProjectFileSize bounds assembly.yaml and every template read for its
// parameters.
const MaxProjectFileSize = 16 << 20

// maxYAMLNodes bounds the values a YAML document may expand to (aliases
// included), against "billion laughs" documents.
const maxYAMLNodes = 100000

// positions maps "Droplet\x00field" to a place in assembly.yaml.
type positions map[string][2]int

func (p positions) set(droplet, field string, n *yaml.Node) {
	p[droplet+"\x00"+field] = [2]int{n.Line, n.Column}
}

// find returns the place of the field or of its nearest recorded parent.
func (p positions) find(droplet, field string) (line, col int) {
	for {
		if pos, ok := p[droplet+"\x00"+field]; ok {
			return pos[0], pos[1]
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			if field == "" {
				return 0, 0
			}
			field = ""
			continue
		}
		field = field[:i]
	}
}

// readYAML reads one YAML document from file, bounded in size.
func readYAML(file string) (*yaml.Node, error) {
	b, err := limitio.ReadFile(file, MaxProjectFileSize)
	var tl *limitio.TooLargeError
	if errors.As(err, &tl) {
		return nil, &ProjectError{File: file, Err: fmt.Errorf("%w: larger than %d bytes", ErrProject, MaxProjectFileSize)}
	}
	if err != nil {
		return nil, err
	}
	if err := nodeLimit(file, b); err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return nil, &ProjectError{File: file, Err: fmt.Errorf("%w: the file is empty", ErrProject)}
		}
		return nil, yamlError(file, b, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		if err != nil {
			return nil, yamlError(file, b, err)
		}
		return nil, &ProjectError{File: file, Line: extra.Line, Column: extra.Column, Err: fmt.Errorf("%w: a second YAML document; keep one document per file", ErrProject)}
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		return doc.Content[0], nil
	}
	return &doc, nil
}

// nodeLimit refuses a file with more YAML nodes than yamlpos.MaxNodes,
// before yaml.v3 allocates them.
func nodeLimit(file string, data []byte) error {
	if le := yamlpos.CheckNodes(data); le != nil {
		return &ProjectError{File: file, Line: le.Pos.Line, Column: le.Pos.Column, Err: fmt.Errorf("%w: %s", ErrProject, le.Reason())}
	}
	return nil
}

// yamlError places a go-yaml syntax error at file:line:column.
func yamlError(file string, data []byte, err error) error {
	pos, msg := yamlpos.Locate(data, err)
	return &ProjectError{File: file, Line: pos.Line, Column: pos.Column, Err: fmt.Errorf("%w: malformed YAML: %s", ErrProject, msg)}
}

// projectSpec is assembly.yaml, converted.
type projectSpec struct {
	file     string
	manifest *assembly.Manifest
	pos      positions
	budget   int // values left to convert, aliases expanded (maxYAMLNodes in all)
	assets   *assetsConfig
}

func (s *projectSpec) errAt(n *yaml.Node, droplet, field string, format string, args ...any) *ProjectError {
	return &ProjectError{File: s.file, Line: n.Line, Column: n.Column, Droplet: droplet, Field: field, Err: fmt.Errorf("%w: "+format, append([]any{ErrProject}, args...)...)}
}

// loadProjectFile reads assembly.yaml into a manifest whose path
// properties are still project paths. defaultEnv applies to droplets that
// name no environment when the file names none either.
// The keys assembly.yaml may hold at the top and in a droplet (also what
// docs/schema/assembly.schema.json allows).
var (
	projectKeys        = []string{"environment", "assets", "targets", "droplets"}
	projectTargetKeys  = []string{"environment", "values", "tags", "deployRole"}
	projectDropletKeys = []string{"type", "environment", "dependsOn", "metadata", "properties"}
	projectAssetsKeys  = []string{"bucketName", "keyPrefix"}
)

func loadProjectFile(file, defaultEnv string) (*projectSpec, error) {
	root, err := readYAML(file)
	if err != nil {
		return nil, err
	}
	s := &projectSpec{file: file, pos: positions{}, budget: maxYAMLNodes, manifest: &assembly.Manifest{Schema: assembly.SchemaVersion, Droplets: map[string]*assembly.Droplet{}}}
	top, err := s.mapping(root, "", "", projectKeys)
	if err != nil {
		return nil, err
	}
	if n := top["assets"]; n != nil {
		if err := s.readAssets(n); err != nil {
			return nil, err
		}
	}
	env := defaultEnv
	envNode := root
	if n := top["environment"]; n != nil {
		envNode = n
		if env, err = s.str(n, "", "environment"); err != nil {
			return nil, err
		}
	}
	if n := top["targets"]; n != nil {
		if err := s.readTargets(n); err != nil {
			return nil, err
		}
		if top["environment"] == nil && env == "" {
			// Droplets that name no environment take each target's.
			env = "aws://" + assembly.UnknownAccount + "/" + assembly.UnknownRegion
		}
	}
	dn := top["droplets"]
	if dn == nil {
		return nil, s.errAt(root, "", "", "no droplets: add a droplets: mapping of logical IDs to droplets")
	}
	if dn.Kind != yaml.MappingNode {
		return nil, s.errAt(dn, "", "droplets", "want a mapping of logical IDs to droplets")
	}
	if len(dn.Content)/2 > assembly.MaxDroplets {
		return nil, s.errAt(dn, "", "droplets", "%d droplets, at most %d allowed", len(dn.Content)/2, assembly.MaxDroplets)
	}
	for i := 0; i+1 < len(dn.Content); i += 2 {
		kn, vn := dn.Content[i], dn.Content[i+1]
		id := kn.Value
		if _, dup := s.manifest.Droplets[id]; dup {
			return nil, s.errAt(kn, id, "", "droplet %s is defined twice", id)
		}
		if !assembly.ValidLogicalID(id) {
			return nil, &ProjectError{File: file, Line: kn.Line, Column: kn.Column, Droplet: id,
				Err: fmt.Errorf("%w: logical ID %q must match ^[A-Za-z0-9+/_-]{1,256}$ (no dots, spaces or other punctuation)", assembly.ErrLogicalID, id)}
		}
		s.pos.set(id, "", kn)
		d, err := s.droplet(id, vn, env, envNode)
		if err != nil {
			return nil, err
		}
		s.manifest.Droplets[id] = d
	}
	if len(s.manifest.Droplets) == 0 {
		return nil, s.errAt(dn, "", "droplets", "no droplets defined")
	}
	return s, nil
}

// readTargets reads targets: a mapping of names to {environment (one
// aws://ACCOUNT/REGION or a list of them), values, tags, deployRole}. What
// the values mean is checked with the manifest (assembly's "target" rule).
func (s *projectSpec) readTargets(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return s.errAt(n, "", "targets", "want a mapping of target names (dev, prod) to {environment, values, tags, deployRole}")
	}
	s.manifest.Targets = map[string]*assembly.Target{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		name, field := kn.Value, "targets."+kn.Value
		if _, dup := s.manifest.Targets[name]; dup {
			return s.errAt(kn, "", field, "target %s is defined twice", name)
		}
		if !assembly.ValidTargetName(name) {
			return s.errAt(kn, "", field, "target name %q must match ^[A-Za-z0-9_-]{1,64}$", name)
		}
		f, err := s.mapping(vn, "", field, projectTargetKeys)
		if err != nil {
			return err
		}
		t := &assembly.Target{}
		en := f["environment"]
		if en == nil {
			return s.errAt(vn, "", field, "target %s has no environment: give environment: aws://ACCOUNT/REGION, or a list of them", name)
		}
		s.pos.set("", field+".environments", en)
		switch en.Kind {
		case yaml.SequenceNode:
			for j, e := range en.Content {
				ef := fmt.Sprintf("%s.environments[%d]", field, j)
				s.pos.set("", ef, e)
				v, err := s.str(e, "", ef)
				if err != nil {
					return err
				}
				t.Environments = append(t.Environments, v)
			}
		default:
			v, err := s.str(en, "", field+".environment")
			if err != nil {
				return err
			}
			s.pos.set("", field+".environments[0]", en)
			t.Environments = []string{v}
		}
		if t.Values, err = s.strings(f["values"], field+".values"); err != nil {
			return err
		}
		if t.Tags, err = s.strings(f["tags"], field+".tags"); err != nil {
			return err
		}
		if rn := f["deployRole"]; rn != nil {
			if t.DeployRole, err = s.str(rn, "", field+".deployRole"); err != nil {
				return err
			}
		}
		s.manifest.Targets[name] = t
	}
	return nil
}

// strings reads an optional mapping of strings (nil when n is).
func (s *projectSpec) strings(n *yaml.Node, field string) (map[string]string, error) {
	if n == nil {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, s.errAt(n, "", field, "want a mapping of names to strings")
	}
	out := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		f := field + "." + k.Value
		if _, dup := out[k.Value]; dup {
			return nil, s.errAt(k, "", field, "key %q appears twice", k.Value)
		}
		s.pos.set("", f, v)
		if v.Kind != yaml.ScalarNode || v.Tag == "!!map" || v.Tag == "!!seq" {
			return nil, s.errAt(v, "", f, "want a string")
		}
		// numbers and booleans are taken as written (Stage: 1 is "1")
		out[k.Value] = v.Value
	}
	return out, nil
}

// mapping checks that n is a mapping with only the allowed keys, no
// duplicates, and returns the value nodes by key.
func (s *projectSpec) mapping(n *yaml.Node, droplet, field string, allowed []string) (map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		what := "the file"
		if field != "" {
			what = field
		}
		return nil, s.errAt(n, droplet, field, "%s must be a mapping", what)
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if _, dup := out[k.Value]; dup {
			return nil, s.errAt(k, droplet, field, "key %q appears twice", k.Value)
		}
		known := false
		for _, a := range allowed {
			known = known || a == k.Value
		}
		if !known {
			err := s.errAt(k, droplet, field, "unknown key %q (allowed: %s%s)", k.Value, strings.Join(allowed, ", "), didYouMean(k.Value, allowed))
			err.Err = also(err.Err, assembly.ErrUnknownKey)
			return nil, err
		}
		out[k.Value] = n.Content[i+1]
		s.pos.set(droplet, joinField(field, k.Value), n.Content[i+1])
	}
	return out, nil
}

func (s *projectSpec) str(n *yaml.Node, droplet, field string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return "", s.errAt(n, droplet, field, "want a string")
	}
	return n.Value, nil
}

func (s *projectSpec) droplet(id string, n *yaml.Node, env string, envNode *yaml.Node) (*assembly.Droplet, error) {
	// An inherited environment is reported where the file sets it.
	s.pos.set(id, "environment", envNode)
	f, err := s.mapping(n, id, "", projectDropletKeys)
	if err != nil {
		return nil, err
	}
	d := &assembly.Droplet{Environment: env}
	tn := f["type"]
	if tn == nil {
		return nil, s.errAt(n, id, "", "no type: set type: to one of %s, or a full type specifier", strings.Join(droplets.Aliases(), ", "))
	}
	typ, err := s.str(tn, id, "type")
	if err != nil {
		return nil, err
	}
	if k, ok := droplets.LookupAlias(typ); ok {
		typ = k.Type
	} else if !strings.Contains(typ, "://") {
		return nil, s.errAt(tn, id, "type", "unknown droplet type %q: use one of %s, or a full type specifier (protocol://path)", typ, strings.Join(droplets.Aliases(), ", "))
	}
	d.Type = typ
	if en := f["environment"]; en != nil {
		if d.Environment, err = s.str(en, id, "environment"); err != nil {
			return nil, err
		}
	}
	if d.Environment == "" {
		err := s.errAt(n, id, "environment", "no environment: set environment: on the droplet or at the top of %s (e.g. aws://123456789012/eu-west-1)", filepath.Base(s.file))
		err.Err = also(err.Err, assembly.ErrSchema) // the key the spec requires
		return nil, err
	}
	if dn := f["dependsOn"]; dn != nil {
		if dn.Kind != yaml.SequenceNode {
			return nil, s.errAt(dn, id, "dependsOn", "want a list of logical IDs")
		}
		for i, e := range dn.Content {
			field := fmt.Sprintf("dependsOn[%d]", i)
			s.pos.set(id, field, e)
			v, err := s.str(e, id, field)
			if err != nil {
				return nil, err
			}
			d.DependsOn = append(d.DependsOn, v)
		}
	}
	if mn := f["metadata"]; mn != nil {
		if mn.Kind != yaml.MappingNode {
			return nil, s.errAt(mn, id, "metadata", "want a mapping of names to {kind, value}")
		}
		d.Metadata = map[string]*assembly.Metadata{}
		for i := 0; i+1 < len(mn.Content); i += 2 {
			key := mn.Content[i].Value
			field := "metadata." + key
			if _, dup := d.Metadata[key]; dup {
				return nil, s.errAt(mn.Content[i], id, "metadata", "key %q appears twice", key)
			}
			e, err := s.mapping(mn.Content[i+1], id, field, []string{"kind", "value"})
			if err != nil {
				return nil, err
			}
			if e["kind"] == nil || e["value"] == nil {
				return nil, s.errAt(mn.Content[i+1], id, field, "a metadata entry needs kind: and value:")
			}
			md := &assembly.Metadata{}
			if md.Kind, err = s.str(e["kind"], id, field+".kind"); err != nil {
				return nil, err
			}
			if md.Value, err = s.value(e["value"], id, field+".value"); err != nil {
				return nil, err
			}
			d.Metadata[key] = md
		}
	}
	if pn := f["properties"]; pn != nil {
		v, err := s.value(pn, id, "properties")
		if err != nil {
			return nil, err
		}
		props, ok := v.(map[string]any)
		if !ok {
			return nil, s.errAt(pn, id, "properties", "want a mapping of property names to values")
		}
		d.Properties = props
	}
	return d, nil
}

// value converts a YAML node to a JSON value (string, json.Number, bool,
// nil, []any, map[string]any), recording positions.
func (s *projectSpec) value(n *yaml.Node, id, field string) (any, error) {
	s.budget--
	if s.budget < 0 {
		return nil, s.errAt(n, id, field, "the document expands to more than %d values (aliases?)", maxYAMLNodes)
	}
	s.pos.set(id, field, n)
	switch n.Kind {
	case yaml.AliasNode:
		return s.value(n.Alias, id, field)
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
				return nil, s.errAt(k, id, field, "keys must be plain strings (merge keys and complex keys are not supported)")
			}
			if _, dup := m[k.Value]; dup {
				return nil, s.errAt(k, id, field, "key %q appears twice", k.Value)
			}
			v, err := s.value(n.Content[i+1], id, joinField(field, k.Value))
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		a := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			v, err := s.value(e, id, fmt.Sprintf("%s[%d]", field, i))
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str", "!!timestamp":
			return n.Value, nil
		case "!!null":
			return nil, nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return nil, s.errAt(n, id, field, "bad boolean %q", n.Value)
			}
			return b, nil
		case "!!int":
			var i int64
			if err := n.Decode(&i); err != nil {
				return nil, s.errAt(n, id, field, "integer %q does not fit in 64 bits: quote it to keep it as a string", n.Value)
			}
			return json.Number(strconv.FormatInt(i, 10)), nil
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, s.errAt(n, id, field, "number %q has no JSON form: quote it to keep it as a string", n.Value)
			}
			return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
		}
		return nil, s.errAt(n, id, field, "YAML tag %s is not allowed here: quote the value to keep it as a string", n.Tag)
	}
	return nil, s.errAt(n, id, field, "unexpected YAML node")
}

func joinField(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// locate turns the findings of an *assembly.CheckError into ProjectErrors
// at their places in assembly.yaml, one per finding (joined).
func (s *projectSpec) locate(err error) error {
	var ce *assembly.CheckError
	if !errors.As(err, &ce) {
		return &ProjectError{File: s.file, Err: err}
	}
	var errs []error
	for _, f := range ce.Findings {
		line, col := s.pos.find(f.Droplet, f.Field)
		errs = append(errs, &ProjectError{File: s.file, Line: line, Column: col, Droplet: f.Droplet, Field: f.Field, Err: findingError{f}})
	}
	return errors.Join(errs...)
}

// findingError is a finding placed by a ProjectError: its text leaves out
// the droplet and field, which the ProjectError names.
type findingError struct{ f assembly.Finding }

func (e findingError) Error() string { return e.f.Detail() }
func (e findingError) Unwrap() error { return e.f }
