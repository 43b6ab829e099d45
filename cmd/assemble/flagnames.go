package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/trust"
)

// Libraries name an option they refuse in their own terms (an
// errcode.FieldError's Field: "MinSigners"; a trust.FileError's Option:
// "Keyrings"); the command says the same with its flag. flagNamed does
// that, keeping the error's chain (its sentinels, codes and hints).
func flagNamed(err error, names map[string]string) error {
	var fe *errcode.FieldError
	if errors.As(err, &fe) {
		if flag, ok := names[fe.Field]; ok {
			err = reworded(err, strings.Replace(err.Error(), fe.Error(), fe.Named(flag).Error(), 1))
			err = commaHint(flag, fe.Value, err)
		}
	}
	var fi *trust.FileError
	if errors.As(err, &fi) {
		if flag, ok := names[fi.Option]; ok {
			named := *fi
			named.Option = flag
			err = reworded(err, strings.Replace(err.Error(), fi.Error(), named.Error(), 1))
		}
	}
	return err
}

// commaHint adds, to the error of a repeatable flag's value holding a
// comma, that values are not split: the flag is repeated.
func commaHint(flag, value string, err error) error {
	if v, uerr := strconv.Unquote(value); uerr == nil {
		value = v
	}
	before, after, ok := strings.Cut(value, ",")
	if !ok {
		return err
	}
	return withHint(err, fmt.Sprintf("a value is never split on commas: repeat the flag, %s %s %s %s", flag, strings.TrimSpace(before), flag, strings.TrimSpace(after)))
}

// rewordedError is an error said in other words: its chain is the same.
type rewordedError struct {
	msg string
	err error
}

func (e *rewordedError) Error() string { return e.msg }
func (e *rewordedError) Unwrap() error { return e.err }

// reworded is err said as msg.
func reworded(err error, msg string) error { return &rewordedError{msg, err} }

// algorithmError is signing.ParseAlgorithm's error said of flag: a usage
// error.
func algorithmError(flag string, err error) error {
	return usageError{flagNamed(err, map[string]string{"algorithm": flag})}
}
