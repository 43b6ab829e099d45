package errcode

// A FieldError is an option a library refuses, said in the library's own
// terms: Field is the option as the library names it (a field of its
// options, "MinSigners", or a parameter, "algorithm"), Value the value as
// given (quoted where it is a string: `"MD5"`, or `0`), Reason what is
// wrong and what would do. Err is the sentinel it is a case of, so
// errors.Is and Of see its class and code.
//
// A command line says the same with its flag in place of Field:
//
//	--min-signers 0: at least 1 signature is always needed
type FieldError struct {
	Field, Value, Reason string
	Err                  error
}

func (e *FieldError) Error() string { return e.Field + " " + e.Value + ": " + e.Reason }

// Unwrap returns the sentinel.
func (e *FieldError) Unwrap() error { return e.Err }

// Named is e said with name in place of its Field (a command line's
// flag): the same Value, Reason and Err.
func (e *FieldError) Named(name string) *FieldError {
	c := *e
	c.Field = name
	return &c
}
