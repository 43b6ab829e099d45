package main

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/packager/blueprint"
)

// Errors of the command itself, for causes no library names.
var (
	// errIsFolder: a file argument names a folder.
	errIsFolder = errcode.New("is_folder", "is a folder", "name a file, not a folder")
	// errNoMatch: inspect --query matches nothing.
	errNoMatch = errcode.New("no_match", "query matches nothing",
		"check the --query path (gjson syntax) against 'assemble inspect --json'")
)

// Every sentinel of the libraries carries its code and hint (package
// errcode); an error takes the code of a sentinel in its chain. When a
// chain holds several, saysMore decides: a code of this list, earliest
// first, wins over the others (a transport's failure says what went wrong
// on the way, whatever was being read; damaged data says more than the
// digest mismatch it causes; an attestation that is not this assembly's
// says more than the file that differs); else the outermost code that is
// not one of the generic classes (generic), which yield to any other.
var saysMore = []string{
	"changed_after_verification", "bad_digest", "wrong_digest",
	"remote_no_credentials", "bad_location", "access_denied", "remote_not_found", "remote_changed", "bad_response",
	"remote_digest_mismatch", "redirect_refused", "timeout", "not_assembly_artifact", "remote_unsupported",
	"corrupt", "truncated", "attestation_mismatch", "unknown_critical", "interrupted",
	// deploy's refusals: another account, or missing values, make the rest moot
	"role_wrong_account", "wrong_account", "missing_information",
}

var generic = map[string]bool{
	"invalid_project": true, "manifest": true, "container": true, "verification_failed": true,
	"policy_not_met": true, "gpg_failed": true, "invalid_template": true, "trust_option": true,
	"outside_root": true,
}

// Codes of failures no sentinel above names.
const (
	codeUsage       = "usage"             // bad flags or arguments (exit code 2)
	codeNotFound    = "not_found"         // a file named does not exist
	codePermission  = "permission_denied" // a file may not be read or written
	codeInterrupted = "interrupted"       // the command was interrupted
	codeFailure     = "failure"           // anything else (an I/O error)
)

// codeOf is err's stable code: "usage" for a usage error, the rule of an
// invalid assembly's first finding (or of the first finding a build
// places in its project), the code of a blueprint's first
// error, else the code its chain carries (chainCode), else a code for
// the file system's classes of errors.
func codeOf(err error) string {
	var ue usageError
	if errors.As(err, &ue) {
		return codeUsage
	}
	var ce *assembly.CheckError
	if errors.As(err, &ce) && len(ce.Findings) > 0 {
		return ruleCode(ce.Findings[0].Rule)
	}
	var f assembly.Finding // the build places findings in the project
	if errors.As(err, &f) && f.Rule != "" {
		return ruleCode(f.Rule)
	}
	var bl blueprint.ErrorList
	if errors.As(err, &bl) && len(bl) > 0 {
		err = bl[0]
	}
	if code := chainCode(err); code != "" {
		return code
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return codeNotFound
	case errors.Is(err, fs.ErrPermission):
		return codePermission
	case errors.Is(err, context.Canceled):
		return codeInterrupted
	}
	return codeFailure
}

// ruleCode is an assembly rule's code as an error code: "missing-file"
// becomes "missing_file".
func ruleCode(rule string) string { return strings.ReplaceAll(rule, "-", "_") }

// chainCode picks the code of err among the codes its chain carries
// (saysMore, generic), or "".
func chainCode(err error) string {
	codes := codesIn(err, nil)
	for _, c := range saysMore {
		if slices.Contains(codes, c) {
			return c
		}
	}
	for _, c := range codes {
		if !generic[c] {
			return c
		}
	}
	if len(codes) > 0 {
		return codes[0]
	}
	return ""
}

// codesIn appends the codes of err's chain, outermost first. A sentinel's
// parents are kinds of it, not further causes: they are not listed.
func codesIn(err error, out []string) []string {
	if c, ok := err.(errcode.Coder); ok {
		out = append(out, c.Code())
		if _, sentinel := err.(*errcode.Error); sentinel {
			return out
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		if inner := u.Unwrap(); inner != nil {
			out = codesIn(inner, out)
		}
	case interface{ Unwrap() []error }:
		for _, inner := range u.Unwrap() {
			out = codesIn(inner, out)
		}
	}
	return out
}
