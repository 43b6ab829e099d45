// Package packager turns a project (an assembly.yaml or a single template)
// into droplets: it packages CloudFormation templates with local modules and
// Blueprint documents, collects assets, and validates the whole graph.
package packager
