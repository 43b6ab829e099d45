package signing

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"

	"github.com/cloud-assembly/assemble/errcode"
)

// GnuPG failures (sign --gpg). Each wraps ErrGPG.
var (
	// ErrGPG: gpg failed to sign; the error carries gpg's own message.
	ErrGPG = errcode.New("gpg_failed", "gpg failed",
		"run the same gpg command by hand to see why it fails (GNUPGHOME is honoured)")
	// ErrGPGNotFound: no gpg program to run.
	ErrGPGNotFound = errcode.Sub(ErrGPG, "gpg_not_found", "gpg not found",
		"install GnuPG (apt-get install gnupg) or name it with $ASSEMBLE_GPG, or sign with a key file (SignerOptions.KeyFile)")
	// ErrGPGUnknownKey: gpg has no usable secret key for a LocalUsers entry
	// (or, without one, no default secret key).
	ErrGPGUnknownKey = errcode.Sub(ErrGPG, "gpg_unknown_key", "gpg has no such secret key",
		"list the keys gpg can sign with: gpg --list-secret-keys (GNUPGHOME chooses the keyring); choose one with GPG.LocalUsers")
	// ErrGPGNoPinentry: the key needs its passphrase and gpg-agent could
	// not run a pinentry to ask for it (no terminal, no display, none
	// installed).
	ErrGPGNoPinentry = errcode.Sub(ErrGPG, "gpg_no_pinentry", "gpg could not ask for the passphrase",
		"unlock the key first: sign once at a terminal (export GPG_TTY=$(tty)) so gpg-agent caches the passphrase, or preset it with gpg-preset-passphrase (allow-preset-passphrase in gpg-agent.conf)")
)

// GPG is a Signer that clear-signs through the local GnuPG: its agent,
// pinentry, smartcards and YubiKeys work as they do for gpg --clearsign.
// The attestation goes to gpg on standard input; GNUPGHOME (or Home) is
// honoured. The signatures gpg makes are checked against the public keys
// it exports, and judged by the trust rule like any other.
type GPG struct {
	// Program is the gpg to run (default "gpg", found on PATH).
	Program string
	// LocalUsers selects the keys, as gpg --local-user does (one signature
	// each); none signs with gpg's default key.
	LocalUsers []string
	// Home, if set, is passed as --homedir; otherwise gpg uses GNUPGHOME
	// or ~/.gnupg.
	Home string
}

// gpgStatus is what gpg said on its status channel (--status-fd).
type gpgStatus struct {
	created  []string // fingerprints of the keys that signed (SIG_CREATED)
	invalid  []string // INV_SGNR: "code name"
	failure  int      // the error code of FAILURE, 0 if none
	pinentry bool     // PINENTRY_LAUNCHED
	messages []string // gpg's own "gpg: ..." lines
	// lapsed lists the keys gpg considered whose subkeys are all expired
	// or revoked (KEY_CONSIDERED, flag 2).
	lapsed  []string
	expired bool // KEYEXPIRED or EXPKEYSIG
	revoked bool // KEYREVOKED or REVKEYSIG
}

func parseGPGStatus(stderr []byte) gpgStatus {
	var st gpgStatus
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "[GNUPG:] ")
		if !ok {
			if line = strings.TrimSpace(line); line != "" {
				st.messages = append(st.messages, line)
			}
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "SIG_CREATED":
			if len(f) >= 7 {
				st.created = append(st.created, f[6])
			}
		case "INV_SGNR":
			st.invalid = append(st.invalid, strings.Join(f[1:], " "))
		case "FAILURE":
			if len(f) >= 3 {
				n, _ := strconv.Atoi(f[2])
				st.failure = n
			}
		case "PINENTRY_LAUNCHED":
			st.pinentry = true
		case "KEY_CONSIDERED":
			if len(f) >= 3 {
				if flags, err := strconv.Atoi(f[2]); err == nil && flags&2 != 0 {
					st.lapsed = append(st.lapsed, f[1])
				}
			}
		case "KEYEXPIRED", "EXPKEYSIG":
			st.expired = true
		case "KEYREVOKED", "REVKEYSIG":
			st.revoked = true
		}
	}
	return st
}

// GnuPG error codes (libgpg-error), in the low 16 bits of a FAILURE code.
const (
	gpgErrNoSecretKey   = 17
	gpgErrBadPassphrase = 11
	gpgErrNoPinentry    = 85
	gpgErrPinentry      = 86
	gpgErrCanceled      = 99
	gpgErrENOTTY        = 32768 | 102 // GPG_ERR_SYSTEM_ERROR | ENOTTY: pinentry found no terminal
)

// invalidSignerReasons are the INV_SGNR codes (doc/DETAILS in GnuPG).
var invalidSignerReasons = map[string]string{
	"1": "not found", "2": "ambiguous", "3": "wrong key usage", "4": "key revoked", "5": "key expired",
	"9": "no secret key", "10": "key not trusted", "11": "missing certificate", "13": "not usable for signing",
}

func (g *GPG) program() (string, error) {
	prog := g.Program
	if prog == "" {
		prog = "gpg"
	}
	path, err := exec.LookPath(prog)
	if err != nil {
		return "", fmt.Errorf("%w: %v; install GnuPG (apt-get install gnupg) or sign with a key file", ErrGPGNotFound, err)
	}
	return path, nil
}

func (g *GPG) command(ctx context.Context, path string, args ...string) *exec.Cmd {
	base := []string{"--batch", "--no-tty", "--status-fd", "2"}
	if g.Home != "" {
		base = append([]string{"--homedir", g.Home}, base...)
	}
	cmd := exec.CommandContext(ctx, path, append(base, args...)...)
	cmd.Env = os.Environ()
	if os.Getenv("GPG_TTY") == "" {
		// The attestation is gpg's standard input, so gpg cannot tell the
		// agent which terminal a pinentry may use: say it, when there is one.
		if tty := terminalName(); tty != "" {
			cmd.Env = append(cmd.Env, "GPG_TTY="+tty)
		}
	}
	return cmd
}

// terminalName is the name of the terminal on our standard input or
// error, or "" when neither is one.
func terminalName() string {
	for _, fd := range []string{"0", "2"} {
		name, err := os.Readlink("/proc/self/fd/" + fd)
		if err == nil && (strings.HasPrefix(name, "/dev/pts/") || strings.HasPrefix(name, "/dev/tty")) {
			return name
		}
	}
	return ""
}

// ClearSign runs gpg --clearsign over text with opts.Algorithm as digest
// and the LocalUsers keys, then exports the public keys that signed.
func (g *GPG) ClearSign(ctx context.Context, text []byte, opts *SignOptions) ([]byte, openpgp.EntityList, error) {
	path, err := g.program()
	if err != nil {
		return nil, nil, err
	}
	alg, err := opts.algorithm()
	if err != nil {
		return nil, nil, err
	}
	args := []string{"--armor", "--clearsign", "--digest-algo", AlgorithmName(alg)}
	for _, u := range g.LocalUsers {
		args = append(args, "--local-user", u)
	}
	cmd := g.command(ctx, path, args...)
	cmd.Stdin = bytes.NewReader(text)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	st := parseGPGStatus(stderr.Bytes())
	if runErr != nil || len(st.created) == 0 {
		if len(st.invalid) > 0 && (len(st.lapsed) > 0 || st.expired || st.revoked) {
			g.lapse(ctx, path, &st)
		}
		return nil, nil, g.failure(st, runErr)
	}
	// The public keys that signed, to check the signatures and name them.
	exp := g.command(ctx, path, append([]string{"--export"}, st.created...)...)
	var keys bytes.Buffer
	var experr bytes.Buffer
	exp.Stdout, exp.Stderr = &keys, &experr
	if err := exp.Run(); err != nil {
		return nil, nil, fmt.Errorf("%w: gpg --export %s: %v: %s", ErrGPG, strings.Join(st.created, " "), err, lastLine(experr.Bytes()))
	}
	el, err := ReadKeys(&keys)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: gpg --export %s: %w", ErrGPG, strings.Join(st.created, " "), err)
	}
	return stdout.Bytes(), el, nil
}

// lapse finds whether the keys gpg found lapsed (every signing key
// expired or revoked: KEY_CONSIDERED flag 2) are expired or revoked, from
// their validity in gpg --list-keys --with-colons (doc/DETAILS: field 2,
// "e" expired, "r" revoked), since gpg 2.2 reports only INV_SGNR 9, "no
// secret key", for them.
func (g *GPG) lapse(ctx context.Context, path string, st *gpgStatus) {
	for _, fpr := range st.lapsed {
		cmd := g.command(ctx, path, "--with-colons", "--fixed-list-mode", "--list-keys", fpr)
		var out bytes.Buffer
		cmd.Stdout = &out
		if cmd.Run() != nil {
			continue
		}
		primary := ""
		var subs []string // validity of the subkeys that may sign
		for _, line := range strings.Split(out.String(), "\n") {
			f := strings.Split(line, ":")
			if len(f) < 12 {
				continue
			}
			switch f[0] {
			case "pub":
				primary = f[1]
				if strings.Contains(f[11], "s") {
					subs = append(subs, f[1])
				}
			case "sub":
				if strings.Contains(f[11], "s") {
					subs = append(subs, f[1])
				}
			}
		}
		switch {
		case primary == "r":
			st.revoked = true
		case primary == "e":
			st.expired = true
		case len(subs) > 0 && !slices.ContainsFunc(subs, func(v string) bool { return v != "e" && v != "r" }):
			if slices.Contains(subs, "r") {
				st.revoked = true
			} else {
				st.expired = true
			}
		}
	}
}

// failure explains why gpg did not sign.
func (g *GPG) failure(st gpgStatus, runErr error) error {
	said := strings.Join(st.messages, "; ")
	if said == "" && runErr != nil {
		said = runErr.Error()
	}
	who := "its default key"
	if len(g.LocalUsers) > 0 {
		who = strings.Join(g.LocalUsers, ", ")
	}
	if len(st.invalid) > 0 {
		var why []string
		for _, inv := range st.invalid {
			code, name, _ := strings.Cut(inv, " ")
			switch {
			case code == "4" || code != "5" && st.revoked:
				return &twoCauses{fmt.Sprintf("%v: gpg's key for %q is revoked (gpg: %s)", ErrSignerRevoked, name, said), [2]error{ErrSignerRevoked, ErrGPG}}
			case code == "5" || st.expired:
				return &twoCauses{fmt.Sprintf("%v: gpg's key for %q has expired (gpg: %s)", ErrSignerExpired, name, said), [2]error{ErrSignerExpired, ErrGPG}}
			}
			reason := invalidSignerReasons[code]
			if reason == "" {
				reason = "unusable (code " + code + ")"
			}
			why = append(why, fmt.Sprintf("%q: %s", name, reason))
		}
		return fmt.Errorf("%w: %s (gpg: %s)", ErrGPGUnknownKey, strings.Join(why, ", "), said)
	}
	switch code := st.failure & 0xffff; {
	case code == gpgErrNoPinentry, code == gpgErrPinentry, code == gpgErrENOTTY,
		st.pinentry && code != gpgErrBadPassphrase && code != gpgErrCanceled && code != 0:
		return fmt.Errorf("%w: the key needs its passphrase and gpg-agent could not run a pinentry (gpg: %s)", ErrGPGNoPinentry, said)
	case code == gpgErrNoSecretKey || strings.Contains(said, "no default secret key"):
		return fmt.Errorf("%w: no usable secret key for %s (gpg: %s)", ErrGPGUnknownKey, who, said)
	case code == gpgErrBadPassphrase:
		return fmt.Errorf("%w: bad passphrase (gpg: %s)", ErrGPG, said)
	case code == gpgErrCanceled:
		return fmt.Errorf("%w: the passphrase entry was cancelled (gpg: %s)", ErrGPG, said)
	}
	if said == "" {
		said = "it made no signature"
	}
	return fmt.Errorf("%w: %s", ErrGPG, said)
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
