package cfn

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Every error Package returns wraps exactly one of them.
var (
	// ErrSyntax: a file is not a readable YAML or JSON template.
	ErrSyntax = errors.New("invalid template syntax")
	// ErrInvalid: the template or a module breaks a rule of the design.
	ErrInvalid = errors.New("invalid template")
	// ErrMissingParameter: a module parameter has neither a value nor a Default.
	ErrMissingParameter = errors.New("missing module parameter")
	// ErrUnknownParameter: a module's Properties (or an Fn::Invoke's)
	// set a property the module declares no parameter for.
	ErrUnknownParameter = errors.New("module property is not a parameter")
	// ErrCycle: a module includes itself, directly or through others.
	ErrCycle = errors.New("module cycle")
	// ErrNameClash: a name emitted into the parent is already taken.
	ErrNameClash = errors.New("name clash")
	// ErrOutsideRoot: a file named by the template lies outside the project folder.
	ErrOutsideRoot = errors.New("file outside the project folder")
	// ErrTooLarge: an input exceeds one of the size limits.
	ErrTooLarge = errors.New("input too large")
	// ErrDangling: a Ref, Fn::GetAtt, DependsOn, Condition or Sub variable
	// of the packaged template names nothing in it.
	ErrDangling = errors.New("reference to nothing")
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
