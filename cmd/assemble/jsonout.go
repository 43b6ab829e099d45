package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/jsontext"
	"github.com/cloud-assembly/assemble/internal/output"
	"github.com/cloud-assembly/assemble/packager"
	"github.com/cloud-assembly/assemble/packager/blueprint"
	"github.com/cloud-assembly/assemble/packager/cfn"
	"github.com/cloud-assembly/assemble/packager/registry"
	"github.com/cloud-assembly/assemble/trust"
)

// jsonFlag is every command's --json. The schema of each command's object
// is docs/json/COMMAND.json; a failure is docs/json/error.json.
var jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print the result, or the error, as one JSON object on standard output (see docs/json)"}

// printJSON prints a command's --json result on standard output.
func printJSON(c *cli.Context, v any) error { return encodeJSON(c.App.Writer, v) }

// encodeJSON writes v to w as indented JSON with a final newline, the
// libraries' messages in the command's words (flagWords).
func encodeJSON(w io.Writer, v any) error {
	b, err := jsontext.MarshalIndent(v)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, flagWords(string(b)))
	return err
}

// wantsJSON reports whether the command line (flags first, as reorderArgs
// leaves it) asks for --json, so that report prints a failure as JSON even
// when the flags could not be parsed. Values of flags that take one are
// skipped: -o --json names a file.
func wantsJSON(app *cli.App, args []string) bool {
	_, flags, rest := commandPath(app, args)
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		if name == "json" {
			if !hasValue {
				return true
			}
			on, err := strconv.ParseBool(value)
			return err == nil && on
		}
		if !hasValue && takesValue(flags, name) {
			i++
		}
	}
	return false
}

// A resultError carries what a command found before it failed (verify's
// file and signer, a validator's per-file results): --json prints its
// fields beside "error".
type resultError struct {
	err    error
	result any
}

func (e resultError) Error() string { return e.err.Error() }
func (e resultError) Unwrap() error { return e.err }

// withResult attaches a partial result to err for --json.
func withResult(err error, result any) error {
	if err == nil {
		return nil
	}
	return resultError{err, result}
}

// A shownError has been shown already (the help, when no command is
// given): report prints no error line for it, but --json reports it.
type shownError struct{ err error }

func (e shownError) Error() string { return e.err.Error() }
func (e shownError) Unwrap() error { return e.err }

// A fileError is an error about one file the command was given: "verify
// app.cloud: ..." (verb "verify"), "--key k.asc: ..." (verb "--key"), or
// "app.cloud: ..." (no verb). --json names the file.
type fileError struct {
	verb, file string
	err        error
}

func (e *fileError) Error() string {
	if e.verb == "" {
		return e.file + ": " + e.err.Error()
	}
	return e.verb + " " + e.file + ": " + e.err.Error()
}
func (e *fileError) Unwrap() error { return e.err }

// onFile wraps err as an error about file (nil stays nil).
func onFile(verb, file string, err error) error {
	if err == nil {
		return nil
	}
	return &fileError{verb, file, err}
}

// A causeError is the command's own message for a cause a library names:
// the message is printed as it is, and errors.Is (and the --json code)
// sees the cause. file, when not empty, is the file it is about.
type causeError struct {
	msg, file string
	cause     error
}

func (e *causeError) Error() string { return e.msg }
func (e *causeError) Unwrap() error { return e.cause }

// because returns the message format made with args, about file (or no
// file: ""), with cause as its class.
func because(cause error, file, format string, args ...any) error {
	return &causeError{fmt.Sprintf(format, args...), file, cause}
}

// errorJSON is the "error" object of a failure (docs/json/error.json).
// Unknown places are null.
type errorJSON struct {
	Code     string           `json:"code"`
	Message  string           `json:"message"`
	File     *string          `json:"file"`
	Line     *int             `json:"line"`
	Column   *int             `json:"column"`
	Hint     *string          `json:"hint"`
	Findings []diagnosticJSON `json:"findings,omitempty"`
}

// newErrorJSON describes err (hint is "" for none).
func newErrorJSON(err error, hint string) errorJSON {
	out := errorJSON{Code: codeOf(err), Message: flagWords(err.Error())}
	p := placeOf(err)
	if p.file != "" {
		out.File = &p.file
	}
	if p.line > 0 {
		out.Line, out.Column = &p.line, &p.column
	}
	if hint != "" {
		out.Hint = &hint
	}
	var ce *assembly.CheckError
	if errors.As(err, &ce) {
		out.Findings = diagnosticsJSON(ce.Findings)
	}
	return out
}

// writeErrorJSON prints err as the one JSON object of a failed command:
// {"error": {...}}, after the fields of the result it carries, if any.
func writeErrorJSON(w io.Writer, err error, hint string) error {
	e, merr := jsontext.Marshal(struct {
		Error errorJSON `json:"error"`
	}{newErrorJSON(err, hint)})
	if merr != nil {
		return merr
	}
	var re resultError
	if errors.As(err, &re) {
		r, merr := jsontext.Marshal(re.result)
		if merr != nil {
			return merr
		}
		// {"a":1} and {"error":{...}} make {"a":1,"error":{...}}.
		if r = bytes.TrimSpace(r); len(r) > 2 && r[0] == '{' {
			e = append(append(r[:len(r)-1:len(r)-1], ','), e[1:]...)
		}
	}
	var b bytes.Buffer
	if err := json.Indent(&b, e, "", "  "); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, werr := w.Write(b.Bytes())
	return werr
}

// A place is where an error happened: a file, and a line and column in
// it when known (1-based).
type place struct {
	file         string
	line, column int
}

// placeOf finds where err happened: the innermost error that names a line
// in a file, else the innermost that names a file.
func placeOf(err error) place {
	if p, ok := findPlace(err, true); ok {
		return p
	}
	p, _ := findPlace(err, false)
	return p
}

func findPlace(err error, needLine bool) (place, bool) {
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if inner := u.Unwrap(); inner != nil {
			if p, ok := findPlace(inner, needLine); ok {
				return p, true
			}
		}
	case interface{ Unwrap() []error }:
		for _, inner := range u.Unwrap() {
			if p, ok := findPlace(inner, needLine); ok {
				return p, true
			}
		}
	}
	p := ownPlace(err)
	if p.file != "" && (p.line > 0 || !needLine) {
		return p, true
	}
	return place{}, false
}

// ownPlace is the place an error itself names, if any.
func ownPlace(err error) place {
	switch e := err.(type) {
	case *blueprint.Error:
		return place{e.File, e.Line, e.Column}
	case *cfn.Error:
		return place{e.File, e.Line, e.Col}
	case *packager.ProjectError:
		return place{e.File, e.Line, e.Column}
	case *packager.SchemaCheckError:
		if len(e.Findings) > 0 {
			return place{e.Findings[0].File, e.Findings[0].Line, e.Findings[0].Col}
		}
	case *registry.ValidationError:
		if len(e.Problems) > 0 {
			return place{e.File, e.Problems[0].Line, e.Problems[0].Col}
		}
		return place{file: e.File}
	case *assembly.SyntaxError:
		return place{assembly.ManifestName, e.Line, e.Column}
	case *output.Error:
		return place{file: e.Path}
	case *fs.PathError:
		return place{file: e.Path}
	case *fileError:
		return place{file: e.file}
	case *causeError:
		return place{file: e.file}
	case *trust.PolicyError:
		return place{e.File, e.Line, e.Column}
	case *trust.FileError:
		return place{file: e.File}
	}
	return place{}
}
