// Package paramschema checks module parameter values against a module's
// ParameterSchema section and applies the schema's defaults.
//
//	ParameterSchema:
//	  Subnets:
//	    Type: Array
//	    MinItems: 1
//	    Items:
//	      Type: Object
//	      Required: [CidrBlock, Type]
//	      Properties:
//	        Type: {Type: String, Enum: [Public, Private], Default: Private}
//
// # Keywords
//
// Type (String, Number, Boolean, Object, Array), Required, MinLength,
// MaxLength, Pattern, Enum, Minimum, Maximum, ExclusiveMinimum,
// ExclusiveMaximum, MinItems, MaxItems, Items, Properties, Default and
// Description (ignored). Any other keyword, or a keyword with a value of the
// wrong kind, is a schema error (ErrSchema): a typo such as "MinLenght" would
// otherwise turn a check off silently. A Default that breaks its own schema
// is a schema error too.
//
// Keywords apply to the kind of value they are about, as in JSON Schema:
// MinLength on a list checks nothing; Type is what rejects the list.
//
//   - String accepts strings (and unquoted dates, which YAML tags as
//     timestamps but CloudFormation reads as strings). A number is not a
//     string: quote it.
//   - Number accepts numbers and strings holding a decimal number ("5",
//     "-1.5e3"), since CloudFormation passes numbers as strings; Minimum and
//     the other bounds compare the numeric value.
//   - Boolean accepts true and false and the strings "true" and "false" in
//     any case, as CloudFormation does.
//   - Pattern is a Go (RE2) regular expression, unanchored as in JSON Schema:
//     write ^ and $ to match the whole string.
//   - Lengths count Unicode code points.
//   - Enum compares as data: numbers by value, objects and lists deeply.
//   - Required is a list of property names on an Object schema; Required:
//     true on any schema makes that value itself mandatory.
//
// # Defaults
//
// Defaults apply recursively: an absent (or null) value takes its schema's
// Default, and then the defaults inside it apply; an object gains its absent
// properties that have a Default, appended in the schema's order; every list
// item gets its Items defaults. Required is checked after defaults, so a
// required property with a Default is always satisfied. The input is never
// modified: Validate returns a copy.
//
// # Unresolved values
//
// A value that is still an intrinsic function (a !Ref to a parent parameter,
// a !Sub waiting for a ForEach identifier, a !GetAtt) cannot be known at
// packaging time. It is accepted as it is: no keyword is checked on that
// node and no default is applied inside it, while the rest of the value is
// still checked.
//
// # Errors
//
// A violation is a *Error wrapping ErrViolation; its message names the
// parameter path (Subnets[0].Type), what was wrong, the keyword, and the line
// and column ("at line 17, column 11"). The position is in the value when the
// value came from the caller, and in the schema (Error.InSchema) when it came
// from a Default or is about a missing mandatory value. Callers add the module
// name and file.
package paramschema
