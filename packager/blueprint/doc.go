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
// the core functions' names, argument counts and types, reference cycles,
// and each's dependencies and type. Every problem is an *Error with file,
// line and column, wrapping one of the Err* classes; Load returns them all
// as an ErrorList.
//
// # Evaluation
//
// Load also evaluates everything known before deploy time, with the
// evaluator Package inlines from, so validation and packaging give one
// verdict: literals, variables with a value (Options.Variables) or a
// default, values built from them, and core function calls on such
// arguments. A call that fails (substr past the end, jsondecode of text
// that is not JSON, fromjson of a missing key), a field or index a known
// value lacks, an array or object interpolated into a string, each over an
// object, a result of the wrong type for its place, and an export whose
// type differs from the literal (or known) resource field it names are
// reported at their place. References whose type the blueprint fixes
// without evaluation are checked the same way: a field a resource's spec or
// metadata writes (or its state, spec, metadata, labels, annotations and
// custom, always mappings) and a loaded child's export, of the type the
// child declares. Left for deploy time: datetime(), cwd(), link(),
// references to resources, data sources and child blueprints, elem and i,
// and secret variables and references to secret values (never evaluated, so
// never inlined nor quoted in a message). A value that fails is reported once, where it is
// defined. Evaluation is bounded: a result above MaxEvalSize, or work
// beyond MaxEvalWork steps for one Load, is an ErrEvalLimit error.
// What one Load reads is bounded too: MaxFileSize bytes per file,
// MaxBlueprints files and MaxNodes YAML nodes in all (ErrTooLarge).
//
// fromjson reads a path without its leading "/" from the document's root,
// as the specification's example fromjson(variables.config, "host") means.
// String functions count characters, as len does. normalize(), which the
// specification's value examples use without defining it, returns its
// argument with every string (and object key) in Unicode Normalization Form
// C, through arrays and objects.
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
// them, as the parent evaluates them (${to_upper(variables.env)} passes
// "PROD"; what is known only at deploy time stays unknown): unknown names, values of the wrong type and missing required
// variables are errors, as are include cycles and chains deeper than
// MaxDepth (5) blueprints, the root being depth 1. A relative path resolves
// from the including file's folder; ${cwd()} stands for Options.Cwd (the
// process's working directory by default). Includes whose metadata names a
// sourceType (other than "file" or "local") are remote and not loaded, nor
// are includes whose path is known only at deploy time.
//
// # Packaging
//
// Package inlines what Load evaluated (within MaxInlineSize), folds the
// known arguments of what it could not, leaves deploy-time references,
// datetime(), cwd() and link() as they are, and returns the blueprint and
// its local children with include paths pointing at the children's copies.
package blueprint
