// Package hint attaches to an error the line that says how to fix it.
// Library packages return such errors; the command line prints the hint
// after the error ("assemble: hint: ...") and in --json's "hint".
package hint

import "errors"

// An Error is an error with the hint that fixes it.
type Error struct {
	Err  error
	Hint string
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// With wraps err with hint h (nil stays nil).
func With(err error, h string) error {
	if err == nil {
		return nil
	}
	return &Error{err, h}
}

// Of returns the outermost hint of err's chain, or "".
func Of(err error) string {
	var he *Error
	if errors.As(err, &he) {
		return he.Hint
	}
	return ""
}
