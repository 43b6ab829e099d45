package blueprint

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Fragment kinds CheckFragment accepts.
const (
	FragmentCondition        = "condition"
	FragmentDataSourceExport = "datasource-export"
	FragmentDataSourceFilter = "datasource-filter"
	FragmentExport           = "export"
	FragmentTransform        = "transform"
	FragmentValue            = "value"
	FragmentVariable         = "variable"
)

// CheckFragment checks one definition on its own (a resource condition, a
// data source export or filter, an export, a transform, a value or a
// variable definition), read from a YAML or JSON file: its structure, its
// types and allowed values, and the syntax and places of its substitutions.
// References are not resolved, since there is no blueprint around them.
func CheckFragment(kind, path string) error {
	src, err := readFile(path)
	if err != nil {
		return err
	}
	var errs ErrorList
	root, perr := parseDocument(path, src, false)
	if perr != nil {
		return ErrorList{perr}
	}
	c := &checker{
		bp: &Blueprint{Path: path}, file: path, src: src, errs: &errs,
		vars: map[string]*Variable{}, values: map[string]*Value{}, ds: map[string]*dataSource{},
		res: map[string]*resource{}, inc: map[string]*Include{},
		edges: map[string][]edge{}, keyNode: map[string]*yaml.Node{},
	}
	c.checkKeysAndTags(root)
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "fragment", Line: root.Line, Column: root.Column}
	switch kind {
	case FragmentCondition:
		c.checkCondition(root, "resources.fragment", "resource condition", false, true)
	case FragmentDataSourceExport:
		ds := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{key, root}}
		c.checkDataSourceExports(ds, "data source")
	case FragmentDataSourceFilter:
		c.checkFilter(root, "datasources.fragment", "data source")
	case FragmentExport:
		c.checkExport(key, root)
	case FragmentTransform:
		c.checkTransform(root)
	case FragmentValue:
		c.checkValue(key, root)
	case FragmentVariable:
		c.checkVariable(key, root)
	default:
		return fmt.Errorf("unknown fragment kind %q", kind)
	}
	if len(errs) > 0 {
		return errs.sorted()
	}
	return nil
}
