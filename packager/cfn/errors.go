package cfn

import (
	"fmt"
	"strings"

	"github.com/cloud-assembly/assemble/errcode"
)

// Sentinel errors. Every error Package returns wraps exactly one of them.
var (
	// ErrSyntax: a file is not a readable YAML or JSON template.
	ErrSyntax = errcode.New("template_syntax", "invalid template syntax",
		"fix the template's YAML or JSON at the line and column shown")
	// ErrInvalid: the template or a module breaks a rule of the design.
	ErrInvalid = errcode.New("invalid_template", "invalid template",
		"fix the template at the place shown")
	// ErrMissingParameter: a module parameter has neither a value nor a Default.
	ErrMissingParameter = errcode.New("missing_module_parameter", "missing module parameter",
		"give the module the parameter under Properties, or a Default in the module")
	// ErrUnknownParameter: a module's Properties (or an Fn::Invoke's)
	// set a property the module declares no parameter for.
	ErrUnknownParameter = errcode.New("unknown_module_parameter", "module property is not a parameter",
		"set only the parameters the module declares (the error names the nearest), or declare the parameter in the module")
	// ErrCycle: a module includes itself, directly or through others.
	ErrCycle = errcode.New("module_cycle", "module cycle",
		"a module includes itself through the chain shown: break the cycle")
	// ErrNameClash: a name emitted into the parent is already taken.
	ErrNameClash = errcode.New("name_clash", "name clash",
		"rename one of the two: a module's resources are prefixed with its name")
	// ErrOutsideRoot: a file named by the template lies outside the project folder.
	ErrOutsideRoot = errcode.New("outside_root", "file outside the project folder",
		"keep the file inside the project folder")
	// ErrTooLarge: an input exceeds one of the size limits.
	ErrTooLarge = errcode.New("template_too_large", "input too large",
		"the template is larger than assemble reads (see the README's limits); split it into modules or nested stacks")
	// ErrDangling: a Ref, Fn::GetAtt, DependsOn, Condition or Sub variable
	// of the packaged template names nothing in it.
	ErrDangling = errcode.New("dangling_reference", "reference to nothing",
		"name something the template defines (the error names the nearest)")
)

// Frame is one step of the module chain that led to an error.
type Frame struct {
	Module string // module name in the including file
	Source string // the Source as written
	File   string // the including file
	Line   int    // line of the module entry in File
}

// Error is an error at a place in a file, reached through a module chain.
type Error struct {
	File      string
	Line, Col int
	Msg       string
	Chain     []Frame // innermost first
	Err       error   // one of the sentinels
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	for _, f := range e.Chain {
		fmt.Fprintf(&b, " (in module %s (%s), included at %s:%d)", f.Module, f.Source, f.File, f.Line)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }
