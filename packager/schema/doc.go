// Package schema validates CloudFormation resource type schemas and checks
// templates against a folder of them.
//
// # Validation
//
// A [Validator] checks a resource type schema against the Resource Provider
// Definition meta-schema (the cloudformation-cli copy, embedded in the
// binary and compiled once), then applies the rules the reference tools
// enforce beyond the meta-schema: JSON pointers that must name defined
// properties, overlapping property lists, arrayType on non-arrays, the
// tagging block, unresolvable $refs, the reserved "remote" key and the
// schema size limit. Patterns are ECMA-262 regular expressions and are
// compiled with an ECMAScript-compatible engine (dlclark/regexp2), so
// lookarounds and \uXXXX escapes are accepted; one that does not compile
// is a warning, as in the reference CLI. Lint-level findings are returned
// as warnings and never make a schema invalid. Pointers in the identifier
// and property lists that name no property are warnings too (published AWS
// schemas have them), or errors with [Validator.Strict]. A schema shaped
// like a hook type (no properties, a typeConfiguration) is checked against
// the embedded hook meta-schema instead.
//
// # Template checks
//
// [LoadCatalog] reads a folder of resource type schemas; [Catalog.CheckTemplate]
// reports unknown resource types, unknown properties, missing required
// properties and wrongly typed values in a template, each with its line;
// [Catalog.CheckPackaged] places the findings for a packaged template back
// in its source template and local modules.
package schema
