// Package blueprint loads, validates and packages blueprints of the
// Blueprint Specification v2023-04-20 (YAML or JSON), the second template
// format assemble packages into droplets.
//
// # Validation
//
// Load checks every section's rules (version, transform, variables, values,
// datasources, resources, include, exports, metadata), the ${..}
// substitution grammar (package subst) and where substitutions may appear,
// that references resolve, that elem and i sit only in resources with each,
// the 50 core functions' names, argument counts and types, reference cycles,
// and each's dependencies and type. Every problem is an *Error with file,
// line and column, wrapping one of the Err* classes; Load returns them all
// as an ErrorList.
//
// Two readings where the specification is silent, both chosen to match the
// reference implementation's fixtures: a variable type "bool" is read as
// "boolean", and resources may carry dependsOn (a resource name or a list of
// them). Without a provider registry, a link formed by a linkSelector is
// taken as hard (the selecting resource depends on the selected one) unless
// both resources are different types of one namespace (aws/dynamodb/table
// and aws/dynamodb/stream), which is taken as soft.
//
// # Includes
//
// Local includes are loaded and validated with the variables passed to
// them: unknown names, values of the wrong type and missing required
// variables are errors, as are include cycles and chains deeper than
// MaxDepth (5) blueprints, the root being depth 1. A relative path resolves
// from the including file's folder; ${cwd()} stands for Options.Cwd (the
// process's working directory by default). Includes whose metadata names a
// sourceType (other than "file" or "local") are remote and not loaded, nor
// are includes whose path is known only at deploy time.
//
// # Packaging
//
// Package evaluates what is known at packaging time (non-secret variables
// with values or defaults, non-secret values built from them, core function calls on
// known arguments), leaves deploy-time references, datetime(), cwd() and
// link() as they are, and returns the blueprint and its local children with
// include paths pointing at the children's copies.
package blueprint
