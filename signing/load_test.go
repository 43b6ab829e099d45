package signing

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/quick"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
)

// keyPath is the path of a fixture key file.
func keyPath(name string) string { return filepath.Join(keysDir, name) }

// writeFile writes data to a new file in a test folder and returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// bothKeys is a key file holding the Ed25519 and the RSA secret keys.
func bothKeys(t *testing.T) string {
	t.Helper()
	var b []byte
	for _, n := range []string{"ed25519.sec.asc", "rsa3072.sec.asc"} {
		d, err := os.ReadFile(keyPath(n))
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, d...)
	}
	return writeFile(t, "both.asc", b)
}

// signedBy seals the test assembly with signers and returns the primary
// key fingerprints of the new signatures.
func signedBy(t *testing.T, signers []Signer) []string {
	t.Helper()
	s, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, buildZip(t)), signers, nil)
	if err != nil {
		t.Fatal(err)
	}
	var fps []string
	for _, sig := range s.New() {
		fps = append(fps, sig.Fingerprint)
	}
	return fps
}

func TestLoadSignersPassphrase(t *testing.T) {
	protected := keyPath("passphrase.sec.asc")
	good := writeFile(t, "pass", []byte(testPassphrase+"\r\nsecond line ignored\n"))
	bad := writeFile(t, "bad", []byte("not the passphrase\n"))
	t.Setenv("TEST_ASSEMBLE_PASS", "")
	for _, tt := range []struct {
		name   string
		opts   SignerOptions
		env    string
		prompt func(*openpgp.Entity) ([]byte, error)
		want   error // nil: signs
	}{
		{name: "file", opts: SignerOptions{PassphraseFile: good}},
		{name: "wrong file", opts: SignerOptions{PassphraseFile: bad}, want: ErrWrongPassphrase},
		{name: "env", opts: SignerOptions{PassphraseEnv: "TEST_ASSEMBLE_PASS"}, env: testPassphrase},
		{name: "wrong env", opts: SignerOptions{PassphraseEnv: "TEST_ASSEMBLE_PASS"}, env: "wrong", want: ErrWrongPassphrase},
		{name: "no source", want: ErrPassphraseNeeded},
		{name: "empty env", opts: SignerOptions{PassphraseEnv: "TEST_ASSEMBLE_PASS"}, want: ErrPassphraseNeeded},
		{name: "prompt", prompt: func(*openpgp.Entity) ([]byte, error) { return []byte(testPassphrase), nil }},
		{name: "wrong prompt", prompt: func(*openpgp.Entity) ([]byte, error) { return []byte("nope"), nil }, want: ErrWrongPassphrase},
		{name: "prompt cannot ask", prompt: func(*openpgp.Entity) ([]byte, error) { return nil, nil }, want: ErrPassphraseNeeded},
		{name: "prompt fails", prompt: func(*openpgp.Entity) ([]byte, error) { return nil, errTestPrompt }, want: errTestPrompt},
		// A passphrase file given (even empty) or a wrong passphrase in the
		// environment is the answer: the prompt is not asked.
		{name: "wrong env, no prompt", opts: SignerOptions{PassphraseEnv: "TEST_ASSEMBLE_PASS"}, env: "wrong", prompt: promptNever(t), want: ErrWrongPassphrase},
		{name: "empty file, no prompt", opts: SignerOptions{PassphraseFile: writeFile(t, "empty", nil)}, prompt: promptNever(t), want: ErrPassphraseNeeded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TEST_ASSEMBLE_PASS", tt.env)
			opts := tt.opts
			opts.KeyFile, opts.Prompt = protected, tt.prompt
			signers, err := LoadSigners(&opts)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if err != nil {
				if !strings.HasPrefix(err.Error(), protected+": ") {
					t.Errorf("%q does not start with the key file's name", err)
				}
				return
			}
			if got := signedBy(t, signers); len(got) != 1 || got[0] != "929535FCDD3D1324CAC212F6F5B7D718B388A81A" {
				t.Errorf("signed by %v", got)
			}
		})
	}
}

// flagRE matches a command-line flag's name in a message.
var flagRE = regexp.MustCompile(`(^|[\s(])--[a-z]`)

var errTestPrompt = errors.New("terminal gone")

func promptNever(t *testing.T) func(*openpgp.Entity) ([]byte, error) {
	return func(*openpgp.Entity) ([]byte, error) {
		t.Error("the prompt was asked")
		return nil, nil
	}
}

// The prompt names the key that needs the passphrase: the one LocalUsers
// chose, among keys that need none.
func TestLoadSignersPromptNamesKey(t *testing.T) {
	var b []byte
	for _, n := range []string{"ed25519.sec.asc", "passphrase.sec.asc"} {
		d, _ := os.ReadFile(keyPath(n))
		b = append(b, d...)
	}
	var asked []string
	signers, err := LoadSigners(&SignerOptions{Key: bytes.NewReader(b), KeyName: "standard input",
		LocalUsers: []string{"ed25519@example.test", "929535FCDD3D1324CAC212F6F5B7D718B388A81A"},
		Prompt: func(e *openpgp.Entity) ([]byte, error) {
			asked = append(asked, fingerprint(e))
			return []byte(testPassphrase), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != "929535FCDD3D1324CAC212F6F5B7D718B388A81A" {
		t.Errorf("prompted for %v", asked)
	}
	if got := signedBy(t, signers); len(got) != 2 {
		t.Errorf("signed by %v, want both keys", got)
	}
	// Unprotected keys: no prompt.
	if _, err := LoadSigners(&SignerOptions{KeyFile: keyPath("ed25519.sec.asc"), Prompt: promptNever(t)}); err != nil {
		t.Fatal(err)
	}
}

// LocalUsers choose among the keys of one file: by fingerprint (spaced as
// gpg prints it too), key ID or user ID part; a file of several keys needs
// a choice; a choice that names none, or several, says which.
func TestLoadSignersKeyChoice(t *testing.T) {
	both := bothKeys(t)
	const rsa, ed = "E8F5780F54B841A446EB49E6B3CEA6693DD2270D", "ED626527FC3F1051786A51E0557D46D2FE0495B7"
	for _, tt := range []struct {
		ids  []string
		want []string
		err  error
	}{
		{ids: []string{rsa}, want: []string{rsa}},
		{ids: []string{ed}, want: []string{ed}},
		{ids: []string{strings.ToLower(ed)}, want: []string{ed}},
		{ids: []string{"ED62 6527 FC3F 1051 786A  51E0 557D 46D2 FE04 95B7"}, want: []string{ed}},
		{ids: []string{"0x" + rsa[24:]}, want: []string{rsa}},
		{ids: []string{"<rsa3072@example.test>"}, want: []string{rsa}},
		{ids: []string{ed, rsa}, want: []string{ed, rsa}},
		{ids: []string{ed, ed[24:]}, want: []string{ed}},
		{ids: nil, err: ErrAmbiguousKey},
		{ids: []string{"Test Signer"}, err: ErrAmbiguousKey},
		{ids: []string{"0000000000000000000000000000000000000000"}, err: ErrNoMatchingKey},
		{ids: []string{" "}, err: ErrNoMatchingKey},
	} {
		t.Run(fmt.Sprint(tt.ids), func(t *testing.T) {
			signers, err := LoadSigners(&SignerOptions{KeyFile: both, LocalUsers: tt.ids})
			if !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Fatalf("got %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if got := signedBy(t, signers); !slicesEqual(got, tt.want) {
				t.Errorf("signed by %v, want %v", got, tt.want)
			}
		})
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// Which error for which source: no key, an unreadable file, a key that
// cannot sign, two ways to sign at once.
func TestLoadSignersErrors(t *testing.T) {
	t.Setenv("TEST_ASSEMBLE_KEY", "")
	missing := filepath.Join(t.TempDir(), "missing.asc")
	for _, tt := range []struct {
		name string
		opts SignerOptions
		want error
	}{
		{"nothing", SignerOptions{}, ErrNoKey},
		{"empty env", SignerOptions{KeyEnv: "TEST_ASSEMBLE_KEY"}, ErrNoKey},
		{"missing key file", SignerOptions{KeyFile: missing}, fs.ErrNotExist},
		{"missing passphrase file", SignerOptions{KeyFile: keyPath("passphrase.sec.asc"), PassphraseFile: missing}, fs.ErrNotExist},
		{"public key", SignerOptions{KeyFile: keyPath("ed25519.pub.asc")}, ErrNoSigningKey},
		{"expired", SignerOptions{KeyFile: keyPath("expired.sec.asc")}, ErrSignerExpired},
		{"revoked", SignerOptions{KeyFile: keyPath("revoked.sec.asc")}, ErrSignerRevoked},
		{"not a key", SignerOptions{Key: strings.NewReader("hello"), KeyName: "standard input"}, ErrKeyFormat},
		{"gpg and key", SignerOptions{GPG: true, KeyFile: keyPath("ed25519.sec.asc")}, ErrSignerOptions},
		{"gpg and passphrase", SignerOptions{GPG: true, PassphraseFile: missing}, ErrSignerOptions},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadSigners(&tt.opts)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if flagRE.MatchString(err.Error()) {
				t.Errorf("%q names a flag", err)
			}
		})
	}
	// A file that cannot be read is a *FileError naming the field; a
	// passphrase file's name is never shown.
	_, err := LoadSigners(&SignerOptions{KeyFile: keyPath("passphrase.sec.asc"), PassphraseFile: "s3cret passphrase"})
	var fe *FileError
	if !errors.As(err, &fe) || fe.Field != "PassphraseFile" || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("missing passphrase file: %v", err)
	}
	_, err = LoadSigners(&SignerOptions{KeyFile: missing})
	if !errors.As(err, &fe) || fe.Field != "KeyFile" || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing key file: %v", err)
	}
	armored, _ := os.ReadFile(keyPath("ed25519.sec.asc"))
	_, err = LoadSigners(&SignerOptions{KeyFile: string(armored)})
	if !errors.As(err, &fe) || strings.Contains(err.Error(), "PRIVATE KEY") {
		t.Errorf("key material as the key file's name: %v", err)
	}
}

// Keys come from the environment when no file or reader is given, named
// by the variable, never by its value.
func TestLoadSignersEnv(t *testing.T) {
	armored, err := os.ReadFile(keyPath("passphrase.sec.asc"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_ASSEMBLE_KEY", string(armored))
	t.Setenv("TEST_ASSEMBLE_PASS", "wrong horse")
	_, err = LoadSigners(&SignerOptions{KeyEnv: "TEST_ASSEMBLE_KEY", PassphraseEnv: "TEST_ASSEMBLE_PASS"})
	if !errors.Is(err, ErrWrongPassphrase) || !strings.HasPrefix(err.Error(), "$TEST_ASSEMBLE_KEY: ") ||
		strings.Contains(err.Error(), "BEGIN PGP") || strings.Contains(err.Error(), "wrong horse") {
		t.Fatalf("got %v", err)
	}
	t.Setenv("TEST_ASSEMBLE_PASS", testPassphrase)
	signers, err := LoadSigners(&SignerOptions{KeyEnv: "TEST_ASSEMBLE_KEY", PassphraseEnv: "TEST_ASSEMBLE_PASS"})
	if err != nil || len(signedBy(t, signers)) != 1 {
		t.Fatalf("got %v", err)
	}
	// A key file wins over the environment.
	signers, err = LoadSigners(&SignerOptions{KeyFile: keyPath("ed25519.sec.asc"), KeyEnv: "TEST_ASSEMBLE_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	if got := signedBy(t, signers); len(got) != 1 || got[0] != "ED626527FC3F1051786A51E0557D46D2FE0495B7" {
		t.Errorf("signed by %v", got)
	}
}

// Property: any passphrase but the right one fails with
// ErrWrongPassphrase (never another error, never a signer), and no message
// shows it.
func TestLoadSignersWrongPassphraseProperty(t *testing.T) {
	armored, err := os.ReadFile(keyPath("passphrase.sec.asc"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	f := func(p []byte) bool {
		if len(p) == 0 || bytes.Equal(p, []byte(testPassphrase)) {
			return true
		}
		_, err := LoadSigners(&SignerOptions{Key: bytes.NewReader(armored), KeyName: "key", Now: now,
			Prompt: func(*openpgp.Entity) ([]byte, error) { return p, nil }})
		return errors.Is(err, ErrWrongPassphrase) && (len(p) < 4 || !strings.Contains(err.Error(), string(p)))
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 6, Rand: rand.New(rand.NewSource(1))}); err != nil {
		t.Error(err)
	}
}

// GPG takes its keys from gpg: LoadSigners only describes it.
func TestLoadSignersGPG(t *testing.T) {
	signers, err := LoadSigners(&SignerOptions{GPG: true, GPGProgram: "/usr/bin/gpg", LocalUsers: []string{"a@b"}, PassphraseEnv: "IGNORED"})
	if err != nil {
		t.Fatal(err)
	}
	g, ok := signers[0].(*GPG)
	if len(signers) != 1 || !ok || g.Program != "/usr/bin/gpg" || len(g.LocalUsers) != 1 {
		t.Errorf("got %#v", signers)
	}
}
