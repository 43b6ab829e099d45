package trust

import (
	"fmt"

	"github.com/cloud-assembly/assemble/errcode"
)

// ErrWrongDigest: the file's SHA-256 is not the one asked for
// (VerifyOptions.Digest): it is another assembly, whatever it holds.
var ErrWrongDigest = errcode.New("wrong_digest", "not the assembly asked for",
	"the file's SHA-256 is not the digest asked for: check which assembly you mean ('assemble verify' prints its sha256)")

var (
	// ErrOption: the options ask for something that cannot be (a
	// required signer that is not a trusted key, more signers than
	// keys, an unknown algorithm): a usage error of whoever set them.
	ErrOption = errcode.New("trust_option", "invalid trust option",
		"check the trust options (Options.MinSigners, Options.RequireSigners, Options.Algorithms)")
	// ErrNoKeyring: a signed assembly is verified with no trusted keys.
	ErrNoKeyring = errcode.New("no_keyring", "no trusted keyring",
		"name the trusted public keys (Options.Keyrings; gpg --export --armor KEYID > keyring.asc), or a policy file naming them (Options.PolicyFile)")
	// ErrInvalidPolicy: a policy file is not a valid policy (its YAML
	// or its settings).
	ErrInvalidPolicy = errcode.New("invalid_policy", "invalid policy",
		"fix the policy file at the line and column shown (keys: keyrings, min-signers, require-signers, algorithms)")
	// ErrKeyringFile: a keyring path cannot be used (missing, not a
	// regular file in a keyring folder, an empty folder, too large).
	ErrKeyringFile = errcode.New("keyring_file", "unusable keyring",
		"a keyring is an armored or binary OpenPGP public keyring (gpg --export --armor KEYID > keyring.asc)")
)

// An OptionError is a mistake in the options that is about no single
// option (one about a field is an *errcode.FieldError wrapping
// ErrOption): the message is said as it is, and errors.Is sees ErrOption
// (and Err, when set).
type OptionError struct {
	Msg string
	Err error
}

func (e *OptionError) Error() string { return e.Msg }

// Is makes every OptionError an ErrOption.
func (e *OptionError) Is(target error) bool { return target == ErrOption }

// Unwrap returns Err, or ErrOption when there is none (so the error
// carries ErrOption's code).
func (e *OptionError) Unwrap() error {
	if e.Err == nil {
		return ErrOption
	}
	return e.Err
}

// errNoKeyring is the error of a verification with no trusted keys.
var errNoKeyring = &OptionError{Msg: "no trusted keyring: a signed assembly needs trusted public keys (Options.Keyrings, or a policy file naming keyrings)", Err: ErrNoKeyring}

func optionf(format string, args ...any) *OptionError {
	return &OptionError{Msg: fmt.Sprintf(format, args...)}
}

// A PolicyError is a mistake in a policy file, at a line and column
// (0 when it is about the whole file).
type PolicyError struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *PolicyError) Unwrap() error { return ErrInvalidPolicy }

func (e *PolicyError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// A FileError is about one file given for an option ("--keyring
// release.asc: ...").
type FileError struct {
	Option, File string
	Err          error
}

func (e *FileError) Error() string { return e.Option + " " + e.File + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// keyringError is an ErrKeyringFile said in its own words, with the
// hint that fixes it.
type keyringError struct{ msg, hint string }

func (e *keyringError) Error() string { return e.msg }
func (e *keyringError) Unwrap() error { return ErrKeyringFile }
