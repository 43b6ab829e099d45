// Package cfn reads, expands and writes CloudFormation templates that use
// client-side local modules (the Modules, Constants and related sections of
// the aws-cli "local modules" design).
//
// # Reading and writing
//
// Parse reads YAML (with the short-form tags !Ref, !GetAtt, !Sub, ...) or
// JSON into a yaml.Node tree that keeps key order and line numbers. Short
// forms are rewritten to their long form (!Ref X becomes {Ref: X}) so that
// the engine sees one shape; EncodeYAML writes the short forms back and
// EncodeJSON writes long forms.
//
// # Expansion
//
// Package expands every module instance in one pass over each file: module
// files are parsed once and cached, resources are indexed by name, and a
// module's outputs are resolved only when something refers to them, so the
// cost grows linearly with the number of module instances.
//
// Resolving a module Source goes through one function (Options.Load), and
// intrinsic functions are dispatched from one table (intrinsics in
// resolve.go).
//
// # Transform order
//
// The packaged template's Transform list holds the parent's transforms first,
// in their own order, then each module's transforms that are not already
// listed, in the order the modules are declared (depth first). CloudFormation
// runs macros in list order, so the parent's own macros run before any macro
// that a module brings in.
package cfn
