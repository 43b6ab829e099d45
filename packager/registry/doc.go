// Package registry reads, validates and describes CloudFormation registry
// modules: a template fragment (fragments/ in a module project made by
// `cfn init`) and the module schema generated from it.
//
// [ReadFragment] parses a fragment, keeping line numbers; [Fragment.Validate]
// makes every check cloudformation-cli's `cfn validate` makes, plus the
// nesting and cycle rules the documentation states where modules are
// visible locally ([CheckNesting]); [Fragment.Schema] writes the module
// schema byte for byte as the reference generator does.
package registry
