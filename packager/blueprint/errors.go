package blueprint

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cloud-assembly/assemble/errcode"
)

// Error classes. Every *Error wraps exactly one of them, so callers test the
// class with errors.Is.
var (
	// ErrSyntax: the file is not well-formed YAML or JSON, or uses YAML
	// anchors, aliases or tags (the specification forbids them).
	ErrSyntax = errcode.New("blueprint_syntax", "syntax error",
		"fix the blueprint's YAML or JSON at the line and column shown")
	// ErrVersion: version is missing or not 2023-04-20.
	ErrVersion = errcode.New("blueprint_version", "unsupported version",
		"set version: 2023-04-20")
	// ErrSchema: a section breaks the specification's rules (missing or
	// unknown field, wrong type, bad format, bad allowed values or default).
	ErrSchema = errcode.New("blueprint_schema", "invalid definition",
		"fix the blueprint at the place shown (see the Blueprint Specification v2023-04-20)")
	// ErrSubstitution: a ${..} substitution does not follow the grammar.
	ErrSubstitution = errcode.New("substitution_syntax", "invalid substitution",
		"fix the ${...} substitution at the place shown (write $${ for a literal ${)")
	// ErrSubstitutionNotAllowed: a ${..} substitution where the
	// specification forbids one (keys, transform, variables, types, labels,
	// link selectors, data source exports and filter fields, export fields).
	ErrSubstitutionNotAllowed = errcode.New("substitution_not_allowed", "substitution not allowed here",
		"a substitution may not stand there: write the value")
	// ErrReference: a reference names something the blueprint does not
	// define, or accesses it in a way its kind does not support.
	ErrReference = errcode.New("unresolved_reference", "unresolved reference",
		"name a variable, value, resource, data source, child or export the blueprint defines")
	// ErrElemOutsideEach: elem or i outside a resource with each.
	ErrElemOutsideEach = errcode.New("elem_outside_each", "elem or i outside an each resource",
		"elem and i may be used only in a resource with each")
	// ErrFunction: unknown function, wrong argument count or type, or a
	// call whose arguments are known before deploy time fails (substr past
	// the end, jsondecode of text that is not JSON, fromjson of a missing
	// key), or a field or index a known value does not have.
	ErrFunction = errcode.New("blueprint_function", "invalid function call",
		"fix the function call at the place shown (its name, its arguments)")
	// ErrType: a substitution yields a type its place does not accept, an
	// array or object is interpolated into a string, or an export's type
	// differs from the field it names.
	ErrType = errcode.New("type_mismatch", "type mismatch",
		"give a value of the type the field declares")
	// ErrReferenceCycle: values, resources, data sources or children depend
	// on themselves through references, dependsOn or links.
	ErrReferenceCycle = errcode.New("reference_cycle", "reference cycle",
		"the references shown form a cycle: break it")
	// ErrEachDependency: a resource's each depends on a resource or a child
	// blueprint, which are only known at deploy time.
	ErrEachDependency = errcode.New("each_dependency", "each depends on a resource or child blueprint",
		"each may use only variables and values known before deploying")
	// ErrEachType: a resource's each does not yield an array.
	ErrEachType = errcode.New("each_type", "each does not yield an array",
		"each must yield an array")
	// ErrInclude: an included blueprint can not be loaded, or the variables
	// passed to it do not match its definitions.
	ErrInclude = errcode.New("blueprint_include", "invalid include",
		"fix the include's path (relative to the blueprint; ${cwd()} for the project folder)")
	// ErrIncludeCycle: a blueprint includes itself, directly or not.
	ErrIncludeCycle = errcode.New("include_cycle", "include cycle",
		"the includes shown form a cycle: break it")
	// ErrIncludeDepth: includes nest deeper than MaxDepth blueprints.
	ErrIncludeDepth = errcode.New("include_depth", "include depth exceeded",
		"include fewer levels of blueprints")
	// ErrEvalLimit: evaluating what is known before deploy time yields a
	// result above MaxEvalSize or takes more than MaxEvalWork steps.
	ErrEvalLimit = errcode.New("eval_limit", "evaluation limit exceeded",
		"the blueprint evaluates to too much; simplify it")
	// ErrRead: the blueprint file given can not be read.
	ErrRead = errcode.New("blueprint_read", "can not read file",
		"check the blueprint's path and permissions")
	// ErrTooLarge: a file exceeds MaxFileSize, or the files loaded hold
	// more than MaxNodes YAML nodes.
	ErrTooLarge = errcode.New("blueprint_too_large", "file too large",
		"the blueprint is larger than assemble reads; split it into includes")
)

// Error is one problem found in a blueprint file, at a line and column
// (1-based; 0 when the place is the whole file).
type Error struct {
	File   string
	Line   int
	Column int
	Err    error // one of the Err* classes
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line) + ":" + strconv.Itoa(e.Column))
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// Unwrap returns the error class.
func (e *Error) Unwrap() error { return e.Err }

// ErrorList is every problem found, sorted by file and position.
type ErrorList []*Error

func (l ErrorList) Error() string {
	msgs := make([]string, len(l))
	for i, e := range l {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap gives errors.Is and errors.As access to every error.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

func (l ErrorList) sorted() ErrorList {
	out := slices.Clone(l)
	slices.SortStableFunc(out, func(a, b *Error) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Column - b.Column
	})
	// Drop exact duplicates (the same problem reached twice).
	return slices.CompactFunc(out, func(a, b *Error) bool { return *a == *b })
}

func itoa(n int) string { return strconv.Itoa(n) }

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, ", ")
}

var codes = []struct {
	err  error
	code string
}{
	{ErrSyntax, "syntax"},
	{ErrVersion, "version"},
	{ErrSchema, "schema"},
	{ErrSubstitution, "substitution_syntax"},
	{ErrSubstitutionNotAllowed, "substitution_not_allowed"},
	{ErrReference, "unresolved_reference"},
	{ErrElemOutsideEach, "elem_outside_each"},
	{ErrFunction, "function"},
	{ErrType, "type_mismatch"},
	{ErrReferenceCycle, "reference_cycle"},
	{ErrEachDependency, "each_dependency"},
	{ErrEachType, "each_type"},
	{ErrInclude, "include"},
	{ErrIncludeCycle, "include_cycle"},
	{ErrIncludeDepth, "include_depth"},
	{ErrTooLarge, "too_large"},
	{ErrEvalLimit, "eval_limit"},
	{ErrRead, "read"},
}

// Code returns a stable short name for an error's class ("reference_cycle",
// "include_depth", ...), as printed by assemble blueprint validate --json,
// or "" when err wraps none of the classes.
func Code(err error) string {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return ""
}
