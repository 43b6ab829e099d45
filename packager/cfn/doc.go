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
// files are read and parsed once, resources are indexed by name, and a
// module's outputs are resolved only when something refers to them, so the
// cost grows linearly with the number of module instances.
//
// Each module instance is expanded straight into the top template's terms:
// its Properties are resolved in the including file, its resources are
// renamed with the accumulated prefix (Outer + Inner + Bucket), and a name
// the module does not define (a parent parameter, AWS::Region) is left as
// written. A parameter with neither a value nor a Default is an error only
// where it is used (ErrMissingParameter, at the module entry), as in the
// aws-cli: modules meant for Fn::Invoke often leave some unset.
//
// Conditions of a module are evaluated from its parameters; parameters of
// the top template are deploy-time values, so a condition that needs one is
// emitted into the parent as Prefix+Name (a clash is ErrNameClash). The top
// template's own conditions are left as written.
//
// # Extension points
//
// Resolving a module Source (and an Fn::InsertFile path) goes through one
// interface, Sources; NewSources backs it with package source (local files
// bounded by the project folder, Packages zips, HTTPS and S3, with Hash
// pinning).
// Intrinsic functions are dispatched from one table (intrinsics in
// resolve.go): Ref, Fn::GetAtt, Fn::Sub, Fn::If, Fn::Select, Fn::Join,
// Fn::FindInMap, Fn::Merge (package merge), Fn::Flatten (package flatten),
// Fn::InsertFile and Fn::Invoke. ParameterSchema is checked with package
// paramschema before a module is expanded.
//
// # ForEach
//
// ForEach on a module or resource, and Fn::ForEach::Name entries in
// Modules (and in a module's Resources; the top template's own
// Fn::ForEach resources are CloudFormation's and are kept), repeat the
// entry once per item. Instances are named Name0, Name1, ... unless the
// name uses &{Identifier}. $Identifier, ${Identifier}, $Index, ${Index} and,
// for lists of objects, $Value and ${Value.Field} are replaced as text in
// every string of the entry. The list must be known at packaging time; a
// Ref to a parameter of the top template uses its Default.
// Name[0].Out, Name[key].Out, Name[*].Out (a list) and the dotted forms
// Name.key.Out and Name.*.Out work in Fn::GetAtt and in Fn::Sub, and on
// Map parameters (Map[*], Map[key], Map[key].Attr).
//
// # Transform order
//
// The packaged template's Transform list holds the parent's transforms first,
// in their own order, then each module's transforms that are not already
// listed, in the order the modules are declared, a module's own before
// those of the modules it includes (the same rule at every level).
// CloudFormation runs macros in list order, so the parent's own macros run
// before any macro that a module brings in.
package cfn
