package signing

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
)

// SignerOptions say how to sign: through the local gpg, or with the secret
// keys of a key file, a reader or an environment variable, chosen by
// LocalUsers and unlocked with a passphrase from a file, an environment
// variable or a prompt. Secrets come only from there: no field holds a key
// or a passphrase, and no message of LoadSigners shows one.
type SignerOptions struct {
	// GPG signs through the local gpg (see GPG), run as GPGProgram
	// (default "gpg" on PATH); LocalUsers choose its keys. It takes no key
	// and no passphrase: gpg-agent asks for that (or has it cached).
	GPG        bool
	GPGProgram string

	// KeyFile names a file of OpenPGP secret keys, armored or binary.
	KeyFile string
	// Key, read when KeyFile is "", holds the keys (standard input, say);
	// KeyName names it in messages.
	Key     io.Reader
	KeyName string
	// KeyEnv names an environment variable holding armored secret keys,
	// read when neither KeyFile nor Key is given.
	KeyEnv string

	// LocalUsers choose the keys to sign with, one signature each, as gpg
	// --local-user does: a fingerprint, a key ID or part of a user ID.
	// None signs with the one usable secret key (ErrAmbiguousKey when
	// there are several).
	LocalUsers []string

	// PassphraseFile names a file whose first line (its line end removed)
	// is the passphrase of a protected key.
	PassphraseFile string
	// PassphraseEnv names an environment variable holding the passphrase,
	// read when PassphraseFile is "".
	PassphraseEnv string
	// Prompt, when neither gave a passphrase and a chosen key needs one, is
	// asked for it, once, naming that key (a terminal prompt, echo off).
	// It returns nil and no error when it cannot ask (no terminal): the
	// error is then ErrPassphraseNeeded.
	Prompt func(key *openpgp.Entity) ([]byte, error)

	// Now is the signing time the keys are judged at (default time.Now).
	Now time.Time
}

// A FileError is a key or passphrase file that could not be read. Option
// is the SignerOptions field that named it ("KeyFile", "PassphraseFile"),
// as in trust.FileError. Its message never shows a passphrase file's name, which may be the
// passphrase itself typed by mistake, nor a key file's name that looks
// like key material.
type FileError struct {
	Option, File string
	Err          error
}

func (e *FileError) Error() string {
	if e.Option == "PassphraseFile" {
		return "the passphrase file: " + e.Err.Error()
	}
	if looksLikeKeyMaterial(e.File) {
		return "the key file (its name is not shown: it looks like a key): " + e.Err.Error()
	}
	return "key file " + e.File + ": " + e.Err.Error()
}

func (e *FileError) Unwrap() error { return e.Err }

// looksLikeKeyMaterial reports whether a name given for a key file is key
// material rather than a name: an armor header, a line break, or more
// than any path holds.
func looksLikeKeyMaterial(v string) bool {
	return strings.Contains(v, "-----BEGIN ") || strings.ContainsAny(v, "\r\n") || len(v) > 4096
}

// LoadSigners returns the signers opts describe: the local gpg with the
// LocalUsers keys, or the chosen keys of the key file, decrypted with the
// passphrase (from PassphraseFile, else PassphraseEnv, else Prompt when a
// chosen key needs one). Each key is judged by the trust rule at opts.Now
// as Seal judges it, so a revoked or expired key fails here, before
// anything is read or written.
//
// The errors say which: ErrNoKey when no key is given (or the keys are
// none), ErrKeyFormat for unreadable keys, ErrNoSigningKey,
// ErrSignerRevoked or ErrSignerExpired for a key that cannot sign,
// ErrNoMatchingKey or ErrAmbiguousKey for LocalUsers that choose no key
// or several, ErrPassphraseNeeded when a protected key gets no passphrase,
// ErrWrongPassphrase when it does not decrypt the key, *FileError when a
// file cannot be read, ErrSignerOptions for GPG with a key or passphrase.
// Key errors are prefixed with the key's source (the file name, KeyName or
// $KeyEnv).
func LoadSigners(opts *SignerOptions) ([]Signer, error) {
	if opts == nil {
		opts = &SignerOptions{}
	}
	if opts.GPG {
		switch {
		case opts.KeyFile != "":
			return nil, fmt.Errorf("%w: SignerOptions.KeyFile and SignerOptions.GPG are two ways to sign: choose one", ErrSignerOptions)
		case opts.Key != nil:
			return nil, fmt.Errorf("%w: SignerOptions.Key and SignerOptions.GPG are two ways to sign: choose one", ErrSignerOptions)
		case opts.PassphraseFile != "":
			return nil, fmt.Errorf("%w: SignerOptions.PassphraseFile is for key files: with SignerOptions.GPG, gpg-agent asks for the passphrase (or has it cached)", ErrSignerOptions)
		}
		return []Signer{&GPG{Program: opts.GPGProgram, LocalUsers: opts.LocalUsers}}, nil
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	keys, name, err := opts.readKeys()
	if err != nil {
		return nil, err
	}
	pass, err := opts.passphrase()
	if err != nil {
		return nil, err
	}
	chosen, err := selectSigners(keys, opts.LocalUsers, pass, now)
	if errors.Is(err, ErrPassphraseNeeded) && len(pass) == 0 && opts.PassphraseFile == "" && opts.Prompt != nil {
		p, perr := opts.Prompt(needsPassphrase(keys, opts.LocalUsers, now))
		switch {
		case perr != nil:
			return nil, fmt.Errorf("%s: reading the passphrase: %w", name, perr)
		case p != nil:
			chosen, err = selectSigners(keys, opts.LocalUsers, p, now)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return []Signer{Keys(chosen...)}, nil
}

// readKeys reads the keys of KeyFile, Key or $KeyEnv, and names their
// source for messages.
func (o *SignerOptions) readKeys() (openpgp.EntityList, string, error) {
	var r io.Reader
	var name string
	switch {
	case o.KeyFile != "":
		f, err := os.Open(o.KeyFile)
		if err != nil {
			return nil, "", &FileError{Option: "KeyFile", File: o.KeyFile, Err: unwrapPath(err)}
		}
		defer f.Close()
		r, name = f, o.KeyFile
	case o.Key != nil:
		r, name = o.Key, o.KeyName
		if name == "" {
			name = "the key"
		}
	case o.KeyEnv != "" && os.Getenv(o.KeyEnv) != "":
		r, name = strings.NewReader(os.Getenv(o.KeyEnv)), "$"+o.KeyEnv
	default:
		return nil, "", fmt.Errorf("%w: no key file, key or key in the environment given", ErrNoKey)
	}
	keys, err := ReadKeys(r)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	return keys, name, nil
}

// unwrapPath is the cause of a *fs.PathError (FileError holds the file name).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// passphrase reads PassphraseFile (its first line) or $PassphraseEnv.
func (o *SignerOptions) passphrase() ([]byte, error) {
	if o.PassphraseFile != "" {
		b, err := os.ReadFile(o.PassphraseFile)
		if err != nil {
			return nil, &FileError{Option: "PassphraseFile", File: o.PassphraseFile, Err: unwrapPath(err)}
		}
		line, _, _ := bytes.Cut(b, []byte("\n"))
		return bytes.TrimSuffix(line, []byte("\r")), nil
	}
	if o.PassphraseEnv != "" {
		return []byte(os.Getenv(o.PassphraseEnv)), nil
	}
	return nil, nil
}

// needsPassphrase returns the key selectSigners would use with ids that
// needs a passphrase, or nil: the key a prompt names.
func needsPassphrase(keys openpgp.EntityList, ids []string, now time.Time) *openpgp.Entity {
	candidates := keys
	if len(ids) > 0 {
		candidates = nil
		for _, id := range ids {
			candidates = append(candidates, matchKeys(keys, id)...)
		}
	}
	for _, e := range candidates {
		_, err := selectSigners(openpgp.EntityList{e}, nil, nil, now)
		if errors.Is(err, ErrPassphraseNeeded) {
			return e
		}
	}
	return nil
}
