package blueprint

import (
	"slices"
	"strings"

	"github.com/cloud-assembly/assemble/internal/plural"
)

// Type is a set of value types, used to check function arguments and the
// types substitutions yield. A zero Type never occurs; TAny is "unknown".
type Type uint8

const (
	TString Type = 1 << iota
	TInt
	TFloat
	TBool
	TArray
	TObject
	TFunc

	TAny    = TString | TInt | TFloat | TBool | TArray | TObject | TFunc
	TNumber = TInt | TFloat
)

// String names the types in the set, for messages.
func (t Type) String() string {
	if t == TAny {
		return "any"
	}
	names := []string{"string", "integer", "float", "boolean", "array", "object", "function"}
	var out []string
	for i, n := range names {
		if t&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return strings.Join(out, " | ")
}

// Param is one parameter of a core function.
type Param struct {
	Label    string
	Type     Type
	Optional bool
	Choices  []string // allowed string literal values, if any
}

// Function is the definition of one core function: its parameters and what
// it returns.
type Function struct {
	Name   string
	Params []Param
	// Variadic, when set, is the type of every argument (list, object,
	// compose, pipe take N arguments).
	Variadic *Param
	// MinArgs is the least number of arguments a variadic function takes.
	MinArgs int
	// Named says the arguments must be named (object).
	Named  bool
	Return Type
}

// Arity describes the accepted argument count for messages.
func (f *Function) Arity() string {
	if f.Variadic != nil {
		if f.MinArgs == 0 {
			return "any number of arguments"
		}
		return "at least " + plural.Count(f.MinArgs, "argument")
	}
	lo, hi := f.argRange()
	if lo == hi {
		return plural.Count(lo, "argument")
	}
	return itoa(lo) + " to " + itoa(hi) + " arguments"
}

func (f *Function) argRange() (int, int) {
	lo := 0
	for _, p := range f.Params {
		if !p.Optional {
			lo++
		}
	}
	return lo, len(f.Params)
}

func p(label string, t Type) Param   { return Param{Label: label, Type: t} }
func opt(label string, t Type) Param { return Param{Label: label, Type: t, Optional: true} }
func fn(name string, ret Type, ps ...Param) *Function {
	return &Function{Name: name, Params: ps, Return: ret}
}

// DateTimeFormats returns the formats the datetime function accepts (a
// new slice each call: callers may keep or change it).
func DateTimeFormats() []string { return []string{"unix", "rfc3339", "tag", "tagcompact"} }

// coreFunctions are the 50 core function definitions of the specification
// (v2023-04-20) and normalize, which its examples use, keyed by name.
var coreFunctions = func() map[string]*Function {
	str, in := TString, TString
	list := []*Function{
		fn("fromjson", TAny, p("json", str), p("pointer", str)),
		fn("fromjson_g", TFunc, p("pointer", str)),
		fn("jsondecode", TAny, p("json", str)),
		fn("len", TInt, p("value", TString|TArray|TObject)),
		fn("substr", TString, p("string", in), p("start", TInt), opt("end", TInt)),
		fn("substr_g", TFunc, p("start", TInt), opt("end", TInt)),
		fn("replace", TString, p("string", in), p("search", str), p("replace", str)),
		fn("replace_g", TFunc, p("search", str), p("replace", str)),
		fn("trim", TString, p("string", in)),
		fn("trimprefix", TString, p("string", in), p("prefix", str)),
		fn("trimprefix_g", TFunc, p("prefix", str)),
		fn("trimsuffix", TString, p("string", in), p("suffix", str)),
		fn("trimsuffix_g", TFunc, p("suffix", str)),
		fn("split", TArray, p("string", in), p("delimiter", str)),
		fn("split_g", TFunc, p("delimiter", str)),
		fn("join", TString, p("strings", TArray), p("delimiter", str)),
		fn("index", TInt, p("string", in), p("substring", str)),
		fn("last_index", TInt, p("string", in), p("substring", str)),
		fn("to_upper", TString, p("string", in)),
		fn("to_lower", TString, p("string", in)),
		fn("has_prefix", TBool, p("string", in), p("prefix", str)),
		fn("has_prefix_g", TFunc, p("prefix", str)),
		fn("has_suffix", TBool, p("string", in), p("suffix", str)),
		fn("has_suffix_g", TFunc, p("suffix", str)),
		fn("contains", TBool, p("haystack", TString|TArray), p("needle", TAny&^TFunc)),
		fn("contains_g", TFunc, p("needle", TAny&^TFunc)),
		{Name: "list", Variadic: &Param{Label: "item", Type: TAny &^ TFunc}, Return: TArray},
		{Name: "object", Variadic: &Param{Label: "attribute", Type: TAny &^ TFunc}, Named: true, Return: TObject},
		fn("keys", TArray, p("mapping", TObject)),
		fn("vals", TArray, p("mapping", TObject)),
		fn("map", TArray, p("items", TArray), p("mapper", TFunc)),
		fn("filter", TArray, p("items", TArray), p("predicate", TFunc)),
		fn("reduce", TAny, p("items", TArray), p("reducer", TFunc), p("initial", TAny&^TFunc)),
		fn("sort", TArray, p("items", TArray), p("compare", TFunc)),
		fn("flatmap", TArray, p("items", TArray), p("mapper", TFunc)),
		{Name: "compose", Variadic: &Param{Label: "function", Type: TFunc}, MinArgs: 1, Return: TFunc},
		{Name: "pipe", Variadic: &Param{Label: "function", Type: TFunc}, MinArgs: 1, Return: TFunc},
		fn("getattr", TFunc, p("attribute", str)),
		fn("getelem", TFunc, p("position", TInt)),
		fn("link", TObject, p("resourceA", TString|TObject), p("resourceB", TString|TObject)),
		fn("and", TBool, p("a", TBool), p("b", TBool)),
		fn("or", TBool, p("a", TBool), p("b", TBool)),
		fn("not", TBool, p("value", TBool)),
		fn("eq", TBool, p("a", TAny&^TFunc), p("b", TAny&^TFunc)),
		fn("gt", TBool, p("a", TNumber), p("b", TNumber)),
		fn("ge", TBool, p("a", TNumber), p("b", TNumber)),
		fn("lt", TBool, p("a", TNumber), p("b", TNumber)),
		fn("le", TBool, p("a", TNumber), p("b", TNumber)),
		fn("cwd", TString),
		// normalize is named in the specification's value examples
		// (${normalize(values.s3BucketNames)}) but not defined there: it
		// returns its argument with every string in Unicode Normalization
		// Form C, through arrays and objects.
		fn("normalize", TAny&^TFunc, p("value", TAny&^TFunc)),
		{Name: "datetime", Params: []Param{{Label: "format", Type: TString, Choices: DateTimeFormats()}}, Return: TString},
	}
	m := make(map[string]*Function, len(list))
	for _, f := range list {
		m[f.Name] = f
	}
	return m
}()

// CoreFunctions returns the names of the core functions, sorted.
func CoreFunctions() []string {
	names := make([]string, 0, len(coreFunctions))
	for n := range coreFunctions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// LookupFunction returns the definition of a core function.
func LookupFunction(name string) (*Function, bool) {
	f, ok := coreFunctions[name]
	return f, ok
}
