package trust

import (
	"bytes"
	"context"
	"errors"
	"github.com/cloud-assembly/assemble/errcode"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/hint"
	"github.com/cloud-assembly/assemble/signing"
)

var keysDir = filepath.Join("..", "fixtures", "keys")

// unsignedAssembly is a small valid unsigned assembly.
func unsignedAssembly(t testing.TB) []byte {
	t.Helper()
	w := assembly.NewWriter(assembly.WriterOptions{})
	w.AddBytes("manifest.json", []byte(`{"schema":"cloud-assembly/1.0","droplets":{"Site":{"type":"npm://@aws-cdk/assets.FileDroplet","environment":"aws://123456789012/us-east-1","properties":{"file":"site/index.html","bucketName":"b"}}}}`))
	w.AddBytes("site/index.html", []byte("<h1>hello</h1>\n"))
	var buf bytes.Buffer
	if _, err := w.WriteTo(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// signedAssembly is it, signed with the ed25519 test key.
func signedAssembly(t testing.TB) []byte {
	t.Helper()
	b := unsignedAssembly(t)
	r, err := assembly.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	signers, err := signing.LoadSigners(&signing.SignerOptions{KeyFile: filepath.Join(keysDir, "ed25519.sec.asc")})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := signing.Seal(context.Background(), &out, r, signers, nil); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func load(t testing.TB, opts Options) *Trust {
	t.Helper()
	tr, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestVerifySigned(t *testing.T) {
	b := signedAssembly(t)
	tr := load(t, Options{Keyrings: []string{filepath.Join(keysDir, "ed25519.pub.asc")}})
	res, err := Verify(context.Background(), "app.cloud", bytes.NewReader(b), int64(len(b)), tr, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.SHA256 != digest.Of(b) || !res.Signed || !res.Authenticated || res.Verified == nil {
		t.Fatalf("result %+v", res)
	}
	if res.Files() != 2 || len(res.Manifest.Droplets) != 1 || len(res.Signatures) != 1 || !res.PolicyResult.Met {
		t.Fatalf("files %d droplets %d signatures %d", res.Files(), len(res.Manifest.Droplets), len(res.Signatures))
	}
	if got, err := res.Verified.ReadFile("site/index.html"); err != nil || string(got) != "<h1>hello</h1>\n" {
		t.Fatalf("ReadFile: %q, %v", got, err)
	}
	res, err = Verify(context.Background(), "app.cloud", bytes.NewReader(b), int64(len(b)), tr, VerifyOptions{SkipDigest: true})
	if err != nil || !res.SHA256.IsZero() {
		t.Fatalf("SkipDigest: %s, %v", res.SHA256, err)
	}
}

func TestVerifyRefuses(t *testing.T) {
	signed, unsigned := signedAssembly(t), unsignedAssembly(t)
	tr := load(t, Options{Keyrings: []string{filepath.Join(keysDir, "ed25519.pub.asc")}})
	other := load(t, Options{Keyrings: []string{filepath.Join(keysDir, "rsa3072.pub.asc")}})
	for _, tt := range []struct {
		name string
		b    []byte
		tr   *Trust
		opts VerifyOptions
		want error
	}{
		{"unsigned", unsigned, tr, VerifyOptions{}, signing.ErrUnsigned},
		{"no keyring", signed, nil, VerifyOptions{}, ErrNoKeyring},
		{"unknown signer", signed, other, VerifyOptions{}, signing.ErrUnknownSigner},
		{"not a zip", []byte("hello"), tr, VerifyOptions{}, assembly.ErrFormat},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Verify(context.Background(), "x.cloud", bytes.NewReader(tt.b), int64(len(tt.b)), tt.tr, tt.opts)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if res == nil || res.Authenticated || !res.SHA256.IsZero() {
				t.Fatalf("a refused assembly reported %+v", res)
			}
		})
	}
	res, err := Verify(context.Background(), "x.cloud", bytes.NewReader(unsigned), int64(len(unsigned)), nil, VerifyOptions{AllowUnsigned: true})
	if err != nil || res.Signed || res.Authenticated || res.Verified != nil || res.Files() != 2 || res.SHA256.IsZero() {
		t.Fatalf("AllowUnsigned: %+v, %v", res, err)
	}
}

func TestLoadOptions(t *testing.T) {
	ed := filepath.Join(keysDir, "ed25519.pub.asc")
	// Each option is checked here, once, and said in the library's terms:
	// the field (errcode.FieldError) a command line names by its flag.
	for _, tt := range []struct {
		name  string
		opts  Options
		want  error
		field string
		msg   string
	}{
		{"no keyring", Options{}, ErrNoKeyring, "", "no trusted keyring"},
		{"min signers", Options{Keyrings: []string{ed}, MinSigners: ptr(2)}, ErrOption, "", "the policy can never be met"},
		{"zero", Options{Keyrings: []string{ed}, MinSigners: ptr(0)}, ErrOption, "MinSigners", "MinSigners 0: at least 1 signature is always needed"},
		{"negative", Options{Keyrings: []string{ed}, MinSigners: ptr(-1)}, ErrOption, "MinSigners", "MinSigners -1: at least 1"},
		{"required not trusted", Options{Keyrings: []string{ed}, RequireSigners: []string{"E8F5780F54B841A446EB49E6B3CEA6693DD2270D"}}, ErrOption, "RequireSigners", "no such key"},
		{"required malformed", Options{Keyrings: []string{ed}, RequireSigners: []string{"1234"}}, ErrOption, "RequireSigners", `"1234" is not a key fingerprint`},
		{"algorithm", Options{Keyrings: []string{ed}, Algorithms: []string{"MD5"}}, ErrOption, "Algorithms", `Algorithms "MD5": use SHA256, SHA384 or SHA512`},
		{"missing keyring", Options{Keyrings: []string{"nope.asc"}}, os.ErrNotExist, "", "nope.asc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.opts)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("got %v, want %v saying %q", err, tt.want, tt.msg)
			}
			var fe *errcode.FieldError
			if got := errors.As(err, &fe); got != (tt.field != "") || got && fe.Field != tt.field {
				t.Fatalf("field error %v (%#v), want field %q", got, fe, tt.field)
			}
			for _, flag := range []string{"--keyring", "--min-signers", "--require-signer", "--allow-algorithm", "--policy"} {
				if strings.Contains(err.Error(), flag) {
					t.Fatalf("the library names the flag %s: %v", flag, err)
				}
			}
		})
	}
	// The policy file's settings, and a flag replacing one of them.
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	abs, _ := filepath.Abs(ed)
	os.WriteFile(pol, []byte("keyrings: ["+abs+"]\nalgorithms: [SHA512]\n"), 0o644)
	tr := load(t, Options{PolicyFile: pol})
	if len(tr.Trusted) != 1 || len(tr.Policy.Algorithms) != 1 || tr.PolicyFile == nil {
		t.Fatalf("policy not applied: %+v", tr)
	}
	tr = load(t, Options{PolicyFile: pol, Algorithms: []string{"SHA256", "SHA384"}})
	if len(tr.Policy.Algorithms) != 2 {
		t.Fatalf("the option did not replace the policy's algorithms: %v", tr.Policy.Algorithms)
	}
}

// Issue #19 item 11: a FIFO in a --keyring folder made verify hang.
// Every folder entry must be a regular file (or a link to one); others
// are refused by name, before anything is read.
func TestReadKeyringsFolderRegularFilesOnly(t *testing.T) {
	key, err := os.ReadFile(filepath.Join(keysDir, "ed25519.pub.asc"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.asc"), key, 0o644)
	os.Symlink("a.asc", filepath.Join(dir, "link.asc"))
	if _, _, err := ReadKeyrings("--keyring", []string{dir}); err != nil {
		t.Fatalf("a folder of a key and a link to it: %v", err)
	}
	fifo := filepath.Join(dir, "b.asc")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := ReadKeyrings("--keyring", []string{dir})
		done <- err
	}()
	select {
	case err := <-done:
		var fe *FileError
		if !errors.Is(err, ErrKeyringFile) || !errors.As(err, &fe) || fe.File != fifo || !strings.Contains(err.Error(), "FIFO") {
			t.Fatalf("got %v, want ErrKeyringFile naming %s", err, fifo)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a keyring folder holding a FIFO hangs")
	}
	os.Remove(fifo)
	// A link to a FIFO is refused too.
	other := filepath.Join(t.TempDir(), "fifo")
	syscall.Mkfifo(other, 0o644)
	os.Symlink(other, filepath.Join(dir, "c.asc"))
	if _, _, err := ReadKeyrings("--keyring", []string{dir}); !errors.Is(err, ErrKeyringFile) {
		t.Fatalf("a link to a FIFO: got %v", err)
	}
}

// The key files an option names add up to a bound: a folder of many
// large key files is refused once the total passes it.
func TestReadKeyringsTotalBound(t *testing.T) {
	key, err := os.ReadFile(filepath.Join(keysDir, "ed25519.pub.asc"))
	if err != nil {
		t.Fatal(err)
	}
	defer func(old int64) { maxKeyringsSize = old }(maxKeyringsSize)
	maxKeyringsSize = int64(len(key))*3 + 10
	dir := t.TempDir()
	for _, n := range []string{"a.asc", "b.asc", "c.asc"} {
		os.WriteFile(filepath.Join(dir, n), key, 0o644)
	}
	if _, _, err := ReadKeyrings("--keyring", []string{dir}); err != nil {
		t.Fatalf("three keys under the bound: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "d.asc"), key, 0o644)
	_, _, err = ReadKeyrings("--keyring", []string{dir})
	var fe *FileError
	if !errors.Is(err, ErrKeyringFile) || !errors.As(err, &fe) || fe.File != filepath.Join(dir, "d.asc") {
		t.Fatalf("got %v, want ErrKeyringFile naming d.asc", err)
	}
}

// Issue 23, item 9: a GnuPG keybox given as a keyring is named as such,
// with the gpg --export line that makes a keyring of it (go-crypto's
// reader said "openpgp: invalid data: tag byte does not have MSB set").
func TestReadKeyringsKeybox(t *testing.T) {
	dir := t.TempDir()
	kbx := filepath.Join(dir, "pubring.kbx")
	if gpg, err := exec.LookPath("gpg"); err == nil {
		home := filepath.Join(dir, "gnupg")
		os.Mkdir(home, 0o700)
		out, err := exec.Command(gpg, "--homedir", home, "--batch", "--import", filepath.Join("..", "fixtures", "keys", "ed25519.pub.asc")).CombinedOutput()
		if err != nil {
			t.Fatalf("gpg --import: %v\n%s", err, out)
		}
		kbx = filepath.Join(home, "pubring.kbx")
	} else {
		// The header blob GnuPG writes: length, type 1, version 1, flags,
		// "KBXf".
		os.WriteFile(kbx, append([]byte{0, 0, 0, 32, 1, 1, 0, 2, 'K', 'B', 'X', 'f'}, make([]byte, 20)...), 0o644)
	}
	_, _, err := ReadKeyrings("--keyring", []string{kbx})
	var fe *FileError
	if !errors.Is(err, ErrKeyringFile) || !errors.As(err, &fe) || fe.File != kbx || !strings.Contains(err.Error(), "keyboxes are not read") {
		t.Fatalf("got %v, want ErrKeyringFile saying keyboxes are not read", err)
	}
	if h := hint.Of(err); !strings.Contains(h, "gpg --export --armor") {
		t.Errorf("hint %q does not show the gpg --export line", h)
	}
}

func ptr[T any](v T) *T { return &v }
