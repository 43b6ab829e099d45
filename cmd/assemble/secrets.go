package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"
)

// Secrets are never echoed (issue 27, item 13): a key or passphrase given
// where a file name belongs (`--sign-key "$ARMORED_KEY"`, an easy mistake
// in CI) is refused naming the flag, never its value; and report, the one
// place every error is printed (text and --json), takes out anything that
// still looks like key material or the value of a secret's environment
// variable.

// errSecretValue: a flag that names a file holding a secret was given
// something else, which is not shown.
var errSecretValue = errors.New("the value is not a file name and is not shown")

// secretFileFlags are the flags whose value names a file holding a secret,
// and what each wants instead of the secret itself.
var secretFileFlags = map[string]string{
	"--key":             "name a file holding the armored secret key (or - for standard input), or put the key itself in $" + envSigningKey,
	"--sign-key":        "name a file holding the armored secret key (or - for standard input), or put the key itself in $" + envSigningKey,
	"--passphrase-file": "name a file holding the passphrase, or put the passphrase itself in $" + envPassphrase,
}

// looksLikeSecret reports whether a value given for a file name is key
// material rather than a name: an OpenPGP armor header, a line break, or
// more than any path holds.
func looksLikeSecret(v string) bool {
	return strings.Contains(v, "-----BEGIN ") || strings.ContainsAny(v, "\r\n") || len(v) > 4096
}

// checkSecretFlag refuses, naming the flag only, a value of a secret's
// file flag that is no file name.
func checkSecretFlag(flag, value string) error {
	if fix, ok := secretFileFlags[flag]; ok && looksLikeSecret(value) {
		return withHint(usageError{fmt.Errorf("%s: %w", flag, errSecretValue)}, flag+" takes a FILE: "+fix)
	}
	return nil
}

// secretFileError is flagFileError for --passphrase-file, whose value may
// be the passphrase itself, typed by mistake: a file that cannot be read
// is named by the flag only, unless its name looks like one (a folder or
// an extension, no white space); nil for the other flags.
func secretFileError(flag string, err error) error {
	var pe *fs.PathError
	if flag != "--passphrase-file" || (errors.As(err, &pe) && looksLikeFileName(pe.Path)) {
		return nil
	}
	var cause error = err
	if pe != nil {
		cause = pe.Err
	}
	return withHint(fmt.Errorf("%s: %w (the file name is not shown: it may be the passphrase itself)", flag, cause), flag+" takes a FILE: "+secretFileFlags[flag])
}

// fileNameRE is what a file name given for a passphrase file looks like,
// as a passphrase rarely does: no white space, and a folder or an
// extension (release.pass, secrets/key.txt).
var fileNameRE = regexp.MustCompile(`^[^\s]*(/[^\s]*|\.[A-Za-z0-9]{1,8})$`)

// looksLikeFileName reports whether a --passphrase-file value that names
// no readable file may be shown: it looks like a file name, not like a
// passphrase typed in its place.
func looksLikeFileName(v string) bool { return fileNameRE.MatchString(v) && !looksLikeSecret(v) }

var (
	// An armored private key (OpenPGP, PEM, OpenSSH), whole, or cut
	// short (to the end of the text, or of the JSON string it is in).
	armorWhole    = regexp.MustCompile(`(?s)-----BEGIN ([A-Z0-9 ]*PRIVATE KEY[A-Z0-9 ]*)-----.*?-----END [A-Z0-9 ]*-----`)
	armorCut      = regexp.MustCompile(`(?s)-----BEGIN ([A-Z0-9 ]*PRIVATE KEY[A-Z0-9 ]*)-----.*`)
	armorWholeJS  = regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*PRIVATE KEY[A-Z0-9 ]*)-----(?:[^"\\]|\\.)*?-----END [A-Z0-9 ]*-----`)
	armorCutJS    = regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*PRIVATE KEY[A-Z0-9 ]*)-----(?:[^"\\]|\\.)*`)
	secretEnvVars = []string{envSigningKey, envPassphrase}
)

// redact takes key material and the values of the secrets' environment
// variables out of text printed by report; json says the text is JSON
// (a block ends at the end of its string).
func redact(s string, json bool) string {
	whole, cut := armorWhole, armorCut
	if json {
		whole, cut = armorWholeJS, armorCutJS
	}
	s = whole.ReplaceAllString(s, "[$1 not shown]")
	s = cut.ReplaceAllString(s, "[$1 not shown]")
	for _, name := range secretEnvVars {
		if v := os.Getenv(name); len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "[$"+name+" not shown]")
		}
	}
	return s
}
