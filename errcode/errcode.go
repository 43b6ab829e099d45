// Package errcode gives each cause of failure a stable code and one hint.
//
// A library declares its sentinel errors with New (or Sub, for a cause
// that is a kind of another); the message is what Error prints, the code
// is what --json prints under "code" and what programs switch on, and the
// hint is the one line that says how to fix it. A hint that needs a
// run-time fact (a path, a name) is attached where the fact is known
// (internal/hint), never by copying this text.
//
//	var ErrNotFound = errcode.New("remote_not_found", "not found",
//		"check the location; 'assemble push ASSEMBLY LOCATION' puts an assembly there")
//
//	if errcode.Of(err) == "remote_not_found" { ... }
//
// errors.Is keeps working on the sentinels as before.
package errcode

import (
	"errors"
	"slices"
	"sync"
)

// An Error is a sentinel with a stable code and a hint. Compare with
// errors.Is; read the code of any error with Of.
type Error struct {
	code, msg, hint string
	parent          error
}

// New declares a sentinel with code, message and hint. code is
// lower_snake_case and stable across releases.
func New(code, msg, hint string) *Error {
	e := &Error{code: code, msg: msg, hint: hint}
	register(e)
	return e
}

// Sub declares a sentinel that is a kind of parent: errors.Is(e, parent)
// holds, and Of reports e's own code.
func Sub(parent error, code, msg, hint string) *Error {
	e := &Error{code: code, msg: msg, hint: hint, parent: parent}
	register(e)
	return e
}

func (e *Error) Error() string { return e.msg }

// Unwrap returns the parent of a Sub sentinel, or nil.
func (e *Error) Unwrap() error { return e.parent }

// Code is the stable code.
func (e *Error) Code() string { return e.code }

// Hint is the line that says how to fix the cause.
func (e *Error) Hint() string { return e.hint }

// A Coder is any error that knows its code (an *Error, or a type of a
// library's own that carries one).
type Coder interface {
	error
	Code() string
}

// Of returns the code of the outermost coded error in err's chain, or ""
// when none carries one.
func Of(err error) string {
	var c Coder
	if errors.As(err, &c) {
		return c.Code()
	}
	return ""
}

// HintOf returns the hint of the outermost coded error in err's chain
// that has one, or "".
func HintOf(err error) string {
	var c *Error
	if errors.As(err, &c) {
		return c.hint
	}
	return ""
}

var (
	mu  sync.Mutex
	all []*Error
)

func register(e *Error) {
	mu.Lock()
	all = append(all, e)
	mu.Unlock()
}

// All returns every sentinel declared so far (in the packages the program
// links), sorted by code; tests use it to hold each code to one hint.
func All() []*Error {
	mu.Lock()
	out := slices.Clone(all)
	mu.Unlock()
	slices.SortStableFunc(out, func(a, b *Error) int {
		switch {
		case a.code < b.code:
			return -1
		case a.code > b.code:
			return 1
		}
		return 0
	})
	return out
}
