// Package flatten implements Fn::Flatten, the packaging-time intrinsic of
// CloudFormation local modules that turns nested data into a flat list,
// typically to feed a ForEach.
//
//	Fn::Flatten:
//	  Source: !Ref ServiceConfig      # resolved by the caller first
//	  Pattern: $.services[*]          # optional
//	  Transform:                      # optional
//	    Template:
//	      Identifier: $item.name-$env
//	      Environment: $env
//	    Variables:
//	      env: $item.environments[*]
//	  GroupBy: Environment            # optional
//
// Flatten works on data that is already resolved: the caller replaces a
// Source such as !Ref ServiceConfig by the parameter's value first. A Source
// that is still an intrinsic function, or a path that has to descend into
// one, gives ErrUnresolved. Intrinsic functions elsewhere in the data are
// values and are carried through as they are.
//
// # Items
//
// The argument is either a list, flattened deeply (nested lists are spliced
// at any depth), or an object with Source and the optional keys below. The
// items are, in document order:
//
//   - with Pattern, the nodes the pattern selects from Source;
//   - without it, Source flattened: a list deeply, and an object by its
//     values in key order (list values spliced deeply, other values kept as
//     items, so an object of objects gives its inner objects).
//
// # Paths
//
// Pattern, Variables and GroupBy use a small JSONPath: $ (or $item, $env,
// ...) followed by .name, ['any name'], [N], and the wildcards .* and [*],
// which select the elements of a list or the values of an object. A segment
// that does not apply (a missing key, an index past the end) selects
// nothing; a Pattern that matches nothing gives an empty list.
//
// # Transform
//
// For each item, the Template is copied once per combination of the
// Variables' values, a cross product in a fixed order: Variables in the
// order written, the first one outermost (it changes slowest), each
// variable's values in document order. Each variable is a path from $item
// or from an earlier variable ($env.regions[*]); a variable that selects
// nothing produces no copies for that item.
//
// In the Template's strings (not its keys), $name.path and ${name.path}
// refer to $item or a variable; $$ is a literal $, and a $ that does not
// start a reference to a known name (${AWS::Region}, $5) is left as written.
// A string that is exactly one reference becomes the referenced value
// itself, with its type: a quoted "123456789012" stays a string, a number a
// number, an object an object, and a wildcard path gives a list. Inside a
// longer string, values are spliced in as text and must be scalars.
//
// Digit strings are never turned into numbers. The aws-cli implementation
// converts every templated string that looks numeric (its flatten-transform
// case expects AccountId: 123456789012); that would also turn an account id
// such as "012345678901" into 12345678901, so we keep strings as strings.
//
// A reference that selects nothing is an error: it is almost always a typo.
//
// # GroupBy
//
// GroupBy names a property of each item (or a path from the item, $.a.b);
// the result is then an object from each distinct value to the list of its
// items, in order of first appearance. An item without a single scalar
// there is an error.
//
// # Limits
//
// The argument (with aliases expanded) and the result are bounded by
// ynode.MaxNodes; beyond, Flatten returns ErrTooLarge.
package flatten
