// Package packager turns a project (an assembly.yaml or a single template)
// into droplets: it packages CloudFormation templates with local modules and
// Blueprint documents, collects assets, and validates the whole graph.
//
// # Building
//
// Load reads a project into a Plan (manifest, validation report, files to
// ship) without writing anything; Plan.Write or Build writes the .cloud file
// through assembly.Writer. BuildOptions carries everything a build needs:
// Strict, the default Environment, ModTime and Workers.
//
// # New droplet kinds
//
// A droplet kind registers itself with droplets.Register from its own file.
// When one of its path properties needs processing before it is shipped
// (a template to package, a document to convert), register a Packer for it
// with RegisterPacker(kindType, property, packer), also from an init
// function in a file of its own.
package packager
