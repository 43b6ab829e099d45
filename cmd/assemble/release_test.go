package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Issue 23, item 1, and issue 30, item 7: scripts/release in snapshot
// mode, with a throwaway release key gpg makes here, builds two targets
// (this machine's, and windows/amd64) with the version stamped in,
// writes SHA256SUMS that match the binaries, SHA256SUMS.asc (a detached
// signature by the key) and a release assembly that `assemble verify`
// accepts with the key; a second run gives the same bytes
// (reproducible). Then scripts/install installs the release from a local
// HTTP server, checking the signature against the key and the checksum,
// and refuses, installing nothing and leaving an installed binary as it
// was: a changed binary, a changed SHA256SUMS, a signature by another key,
// a revoked key, another fingerprint than the one pinned, a secret key
// given as the release key, no key at all, plain HTTP to another host.
// It cross-compiles: minutes on a cold build cache, so -short skips it.
func TestReleaseSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles assemble twice (-short)")
	}
	for _, tool := range []string{"bash", "sh", "gpg", "gpgconf"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	work := t.TempDir()
	key := newReleaseKey(t, filepath.Join(work, "key"), "release-pass")
	out := filepath.Join(work, "dist")
	host := runtime.GOOS + "/" + runtime.GOARCH
	release := func(out, targets string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(root, "scripts", "release"), "--snapshot", "--out", out, "--targets", targets)
		cmd.Env = append(os.Environ(), "RELEASE_KEY="+key.sec, "ASSEMBLE_PASSPHRASE=release-pass", "SOURCE_DATE_EPOCH=1767323045", "RELEASE_GPG_USER=")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("scripts/release: %v\n%s", err, b)
		} else if !strings.Contains(string(b), "signed by "+key.fpr) {
			t.Fatalf("scripts/release does not name the key:\n%s", b)
		}
	}
	release(out, host+" windows/amd64")

	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
	if len(lines) != 2 {
		t.Fatalf("SHA256SUMS has %d lines, want 2:\n%s", len(lines), sums)
	}
	var native, nativeLine, version string
	for _, l := range lines {
		sum, name, ok := strings.Cut(l, "  ")
		if !ok || !strings.HasPrefix(name, "assemble_v0.0.0-snapshot+") {
			t.Fatalf("SHA256SUMS line %q", l)
		}
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: sha256 %x, SHA256SUMS says %s", name, got, sum)
		}
		if suffix := "_" + runtime.GOOS + "_" + runtime.GOARCH; strings.HasSuffix(name, suffix) {
			native, nativeLine = filepath.Join(out, name), l
			version = strings.TrimSuffix(strings.TrimPrefix(name, "assemble_"), suffix)
		}
	}
	if !strings.Contains(string(sums), "_windows_amd64.exe\n") {
		t.Errorf("no windows binary in SHA256SUMS:\n%s", sums)
	}

	// The stamped version, commit and date.
	v, err := exec.Command(native, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(v), "assemble version v0.0.0-snapshot+") || !strings.Contains(string(v), "2026-01-02T03:04:05Z") {
		t.Errorf("%s --version: %v\n%s", native, err, v)
	}

	// The release assembly verifies with the release key, and holds the
	// binaries and sums.
	clouds, _ := filepath.Glob(filepath.Join(out, "*.cloud"))
	if len(clouds) != 1 {
		t.Fatalf("release assemblies: %v", clouds)
	}
	var stdout, stderr strings.Builder
	code := run(context.Background(), []string{"assemble", "verify", "--keyring", key.pub, clouds[0]},
		strings.NewReader(""), &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), "verified 5 files") {
		t.Errorf("assemble verify: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	// The public key written beside a snapshot is the release key's.
	if b, err := os.ReadFile(filepath.Join(out, "release-key.asc")); err != nil || !strings.Contains(gpgShow(t, filepath.Join(out, "release-key.asc")), key.fpr) {
		t.Errorf("release-key.asc: %v\n%s", err, b)
	}

	// Reproducible: built again, the same binary.
	again := filepath.Join(work, "again")
	release(again, host)
	if b, _ := os.ReadFile(filepath.Join(again, "SHA256SUMS")); strings.TrimSpace(string(b)) != nativeLine {
		t.Errorf("a second build differs:\n%s\nwant %s", b, nativeLine)
	}

	testInstall(t, root, out, version, native, key)
}

// releaseKey is a throwaway OpenPGP key: its secret and public halves as
// files, its fingerprint.
type releaseKey struct{ sec, pub, fpr string }

// newReleaseKey makes an Ed25519 signing key with gpg in dir (its gpg
// home; the agent is stopped when the test ends), protected by pass.
func newReleaseKey(t *testing.T, dir, pass string) releaseKey {
	t.Helper()
	home := filepath.Join(dir, "gnupg")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { exec.Command("gpgconf", "--homedir", home, "--kill", "gpg-agent").Run() })
	g := func(stdin string, args ...string) []byte {
		t.Helper()
		cmd := exec.Command("gpg", append([]string{"--homedir", home, "--batch", "--pinentry-mode", "loopback", "--passphrase-fd", "0"}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		b, err := cmd.Output()
		if err != nil {
			t.Fatalf("gpg %v: %v\n%s", args, err, errb.String())
		}
		return b
	}
	g(pass, "--quick-gen-key", "assemble test release <release@example.test>", "ed25519", "sign", "1d")
	k := releaseKey{sec: filepath.Join(dir, "release.sec.asc"), pub: filepath.Join(dir, "release.asc")}
	if err := os.WriteFile(k.sec, g(pass, "--armor", "--export-secret-keys"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.pub, g("", "--armor", "--export"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(g("", "--with-colons", "--list-keys")), "\n") {
		if f := strings.Split(l, ":"); len(f) > 9 && f[0] == "fpr" {
			k.fpr = f[9]
			break
		}
	}
	if len(k.fpr) != 40 {
		t.Fatalf("no fingerprint for the key made")
	}
	return k
}

// gpgShow is gpg's listing of the keys in a file.
func gpgShow(t *testing.T, file string) string {
	home := t.TempDir()
	b, _ := exec.Command("gpg", "--homedir", home, "--batch", "--with-colons", "--show-keys", file).CombinedOutput()
	return string(b)
}

// testInstall runs scripts/install against the release in out, served
// over HTTP on loopback.
func testInstall(t *testing.T, root, out, version, native string, key releaseKey) {
	script := filepath.Join(root, "scripts", "install")
	nativeName := filepath.Base(native)
	binary, err := os.ReadFile(native)
	if err != nil {
		t.Fatal(err)
	}
	// What the server answers in place of a file, by name.
	replace := map[string][]byte{}
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b, ok := replace[path.Base(r.URL.Path)]
		mu.Unlock()
		if ok {
			w.Write(b)
			return
		}
		http.FileServer(http.Dir(out)).ServeHTTP(w, r)
	}))
	defer srv.Close()
	install := func(dir string, args ...string) (string, error) {
		cmd := exec.Command("sh", append([]string{script, "--dir", dir, "--base-url", srv.URL}, args...)...)
		cmd.Env = append(os.Environ(), "ASSEMBLE_RELEASE_KEY=", "ASSEMBLE_RELEASE_FINGERPRINT=", "ASSEMBLE_RELEASE_URL=")
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	exe := "assemble"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}

	// Installed: the pinned version, checked against key and checksum.
	dir := filepath.Join(t.TempDir(), "bin")
	msg, err := install(dir, "--key", key.pub, "--fingerprint", spaced(key.fpr), version)
	if err != nil || !strings.Contains(msg, "signed by key "+key.fpr) {
		t.Fatalf("install: %v\n%s", err, msg)
	}
	if v, err := exec.Command(filepath.Join(dir, exe), "--version").CombinedOutput(); err != nil || !strings.Contains(string(v), version) {
		t.Fatalf("the installed assemble: %v\n%s", err, v)
	}

	sums, _ := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	changed := append([]byte(nil), binary...)
	changed[len(changed)/2] ^= 1
	changedSum := sha256.Sum256(changed)
	forged := strings.Replace(string(sums), hex.EncodeToString(sha256Of(binary)), hex.EncodeToString(changedSum[:]), 1)
	other := signWith(t, filepath.Join(root, "fixtures", "keys", "ed25519.sec.asc"), sums)
	revokedKey := filepath.Join(root, "fixtures", "keys", "revoked.pub.asc")
	byRevoked := signWith(t, filepath.Join(root, "fixtures", "keys", "revoked-old.sec.asc"), sums)
	noKey := "no release key"
	if _, err := os.Stat(filepath.Join(root, "keys", "release.asc")); err == nil {
		noKey = "good signature" // a real key is committed: it did not sign this release
	}
	for _, tc := range []struct {
		name    string
		replace map[string][]byte
		args    []string
		want    string
	}{
		{"a changed binary", map[string][]byte{nativeName: changed}, []string{"--key", key.pub}, "the download was changed"},
		{"a changed SHA256SUMS", map[string][]byte{nativeName: changed, "SHA256SUMS": []byte(forged)}, []string{"--key", key.pub}, "SHA256SUMS was changed after it was signed"},
		{"another key's signature", map[string][]byte{"SHA256SUMS.asc": other}, []string{"--key", key.pub}, "which is not the release key"},
		{"a revoked key", map[string][]byte{"SHA256SUMS.asc": byRevoked}, []string{"--key", revokedKey}, "signed by a revoked key"},
		{"another fingerprint pinned", nil, []string{"--key", key.pub, "--fingerprint", "0123456789ABCDEF0123456789ABCDEF01234567"}, "not 0123456789ABCDEF0123456789ABCDEF01234567"},
		{"a secret key", nil, []string{"--key", key.sec}, "holds a secret key"},
		{"no key", nil, nil, noKey},
		{"an empty fingerprint pinned", nil, []string{"--key", key.pub, "--fingerprint", ""}, "--fingerprint is empty"},
		{"plain HTTP elsewhere", nil, []string{"--key", key.pub, "--base-url", "http://203.0.113.9/r"}, "only https"},
		{"latest", nil, []string{"--key", key.pub, "latest"}, "not vMAJOR.MINOR.PATCH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			replace = tc.replace
			mu.Unlock()
			dir := filepath.Join(t.TempDir(), "bin")
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, exe), []byte("the assemble installed before"), 0o755)
			args := tc.args
			if len(args) == 0 || args[len(args)-1] != "latest" {
				args = append(args, version)
			}
			msg, err := install(dir, args...)
			if err == nil || !strings.Contains(msg, tc.want) {
				t.Fatalf("want a refusal saying %q, got %v:\n%s", tc.want, err, msg)
			}
			entries, _ := os.ReadDir(dir)
			if b, _ := os.ReadFile(filepath.Join(dir, exe)); len(entries) != 1 || string(b) != "the assemble installed before" {
				t.Fatalf("the refusal changed %s (%d entries)", dir, len(entries))
			}
		})
	}
}

func sha256Of(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// signWith is a detached armored signature of data by the secret key in
// file, made by gpg in a home of its own.
func signWith(t *testing.T, secret string, data []byte) []byte {
	t.Helper()
	home := filepath.Join(t.TempDir(), "g")
	os.Mkdir(home, 0o700)
	t.Cleanup(func() { exec.Command("gpgconf", "--homedir", home, "--kill", "gpg-agent").Run() })
	if b, err := exec.Command("gpg", "--homedir", home, "--batch", "--import", secret).CombinedOutput(); err != nil {
		t.Fatalf("gpg --import %s: %v\n%s", secret, err, b)
	}
	f := filepath.Join(home, "data")
	os.WriteFile(f, data, 0o644)
	cmd := exec.Command("gpg", "--homedir", home, "--batch", "--yes", "--pinentry-mode", "loopback", "--passphrase", "", "--armor", "--detach-sign", "--output", f+".asc", f)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gpg --detach-sign with %s: %v\n%s", secret, err, b)
	}
	b, _ := os.ReadFile(f + ".asc")
	return b
}

// spaced writes a fingerprint in groups of four, as SECURITY.md does.
func spaced(fpr string) string {
	var b strings.Builder
	for i := 0; i < len(fpr); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fpr[i:min(i+4, len(fpr))])
	}
	return b.String()
}

// Issue 30, item 7: a tagged release (not a snapshot) is made only with
// the published key. In a copy of this repository as a git checkout of
// its own, tagged v9.9.9, scripts/release refuses, before building
// anything: no keys/release.asc; a key committed but SECURITY.md not
// naming its fingerprint; a key other than the committed one; a tree with
// uncommitted changes. With the key committed and its fingerprint in
// SECURITY.md (the maintainers' steps, SECURITY.md), it builds, signs and
// installs the release with scripts/install (the check it ends with).
func TestReleaseTagged(t *testing.T) {
	if testing.Short() {
		t.Skip("builds assemble (-short)")
	}
	for _, tool := range []string{"bash", "sh", "gpg", "gpgconf", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	work := t.TempDir()
	repo := filepath.Join(work, "repo")
	files, err := exec.Command("git", "-C", root, "ls-files", "-co", "--exclude-standard").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	for _, f := range strings.Split(strings.TrimSpace(string(files)), "\n") {
		src := filepath.Join(root, f)
		st, err := os.Lstat(src)
		if err != nil || !st.Mode().IsRegular() || f == "keys/release.asc" {
			continue // deleted in the work tree, a link, or the real key
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(repo, f)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, b, st.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.test", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	commitAndTag := func(msg string) {
		git("add", "-A")
		git("commit", "-q", "--allow-empty", "-m", msg)
		git("tag", "-f", "v9.9.9")
	}
	git("init", "-q")
	commitAndTag("the tree")

	// No passphrase: the last release signs through the key's gpg home
	// (RELEASE_GPG_USER), as a maintainer's keyring or smartcard would.
	key := newReleaseKey(t, filepath.Join(work, "key"), "")
	n := 0
	release := func(secret, pass string, env ...string) (string, error) {
		n++
		cmd := exec.Command(filepath.Join(repo, "scripts", "release"), "--out", filepath.Join(work, fmt.Sprintf("dist%d", n)), "--targets", runtime.GOOS+"/"+runtime.GOARCH, "v9.9.9")
		cmd.Env = append(os.Environ(), "RELEASE_KEY="+secret, "ASSEMBLE_PASSPHRASE="+pass, "RELEASE_GPG_USER=", "SOURCE_DATE_EPOCH=1767323045")
		cmd.Env = append(cmd.Env, env...)
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	refused := func(want string, secret, pass string) {
		t.Helper()
		msg, err := release(secret, pass)
		if err == nil || !strings.Contains(msg, want) {
			t.Fatalf("want a refusal saying %q, got %v:\n%s", want, err, msg)
		}
		if strings.Contains(msg, "release: building") {
			t.Fatalf("built before refusing:\n%s", msg)
		}
	}
	refused("keys/release.asc is not committed", key.sec, "")

	pub, _ := os.ReadFile(key.pub)
	os.WriteFile(filepath.Join(repo, "keys", "release.asc"), pub, 0o644)
	commitAndTag("the release key")
	refused("SECURITY.md does not name the release key's fingerprint "+key.fpr, key.sec, "")

	sec, _ := os.ReadFile(filepath.Join(repo, "SECURITY.md"))
	os.WriteFile(filepath.Join(repo, "SECURITY.md"), append(sec, "\nThe release key is "+spaced(key.fpr)+".\n"...), 0o644)
	commitAndTag("the release key's fingerprint")
	refused("is not in keys/release.asc", filepath.Join(root, "fixtures", "keys", "ed25519.sec.asc"), "")

	os.WriteFile(filepath.Join(repo, "stray.txt"), []byte("x"), 0o644)
	refused("uncommitted changes", key.sec, "")
	os.Remove(filepath.Join(repo, "stray.txt"))

	msg, err := release("", "", "RELEASE_GPG_USER="+key.fpr, "GNUPGHOME="+filepath.Join(work, "key", "gnupg"))
	if err != nil || !strings.Contains(msg, "install: assemble v9.9.9") || !strings.Contains(msg, "signed by key "+key.fpr) {
		t.Fatalf("scripts/release v9.9.9: %v\n%s", err, msg)
	}
	for _, f := range []string{"SHA256SUMS", "SHA256SUMS.asc", "assemble_v9.9.9.cloud"} {
		if _, err := os.Stat(filepath.Join(work, fmt.Sprintf("dist%d", n), f)); err != nil {
			t.Errorf("the release has no %s", f)
		}
	}
}
