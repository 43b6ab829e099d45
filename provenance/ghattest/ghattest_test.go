package ghattest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// sigstoreExamples is sigstore-go's examples folder in the module cache:
// a real GitHub Actions provenance bundle (sigstore-js 1.3.0 on npm,
// Fulcio certificate, Rekor entry) and the public-good trusted root of
// its day. Go downloads the module for this package's build, so it is
// there whenever the test builds.
func sigstoreExamples(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/sigstore/sigstore-go").Output()
	dir := filepath.Join(strings.TrimSpace(string(out)), "examples")
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Skipf("sigstore-go's module folder is not in the module cache (go list: %v)", err)
	}
	return dir
}

// The npm package's SHA-512, the bundle's subject.
const npmDigest = "76176ffa33808b54602c7c35de5c6e9a4deb96066dba6533f50ac234f4f1f4c6b3527515dc17c06fbe2860030f410eee69ea20079bd3a2c6f3dcf3b329b10751"

func read(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestVerifyGitHubAttestationOffline(t *testing.T) {
	dir := sigstoreExamples(t)
	bundleJSON, rootJSON := read(t, dir, "bundle-provenance.json"), read(t, dir, "trusted-root-public-good.json")
	good := Options{Algorithm: "sha512", Digest: npmDigest, Repository: "sigstore/sigstore-js"}
	res, err := Verify(bundleJSON, rootJSON, good)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !strings.HasPrefix(res.Workflow, "https://github.com/sigstore/sigstore-js/") || res.Issuer != GitHubIssuer || res.PredicateType != "https://slsa.dev/provenance/v0.2" {
		t.Errorf("result = %+v", res)
	}

	otherDigest := strings.Repeat("0", len(npmDigest))
	for _, c := range []struct {
		name   string
		bundle []byte
		root   []byte
		opts   Options
		want   error
	}{
		{"another artifact", bundleJSON, rootJSON, Options{Algorithm: "sha512", Digest: otherDigest, Repository: "sigstore/sigstore-js"}, ErrNotVerified},
		{"another repository", bundleJSON, rootJSON, Options{Algorithm: "sha512", Digest: npmDigest, Repository: "sigstore/cosign"}, ErrNotVerified},
		{"a repository prefix", bundleJSON, rootJSON, Options{Algorithm: "sha512", Digest: npmDigest, Repository: "sigstore/sigstore-j"}, ErrNotVerified},
		{"another host", bundleJSON, rootJSON, Options{Algorithm: "sha512", Digest: npmDigest, Repository: "sigstore/sigstore-js", Host: "ghe.example.com"}, ErrNotVerified},
		{"no repository", bundleJSON, rootJSON, Options{Algorithm: "sha512", Digest: npmDigest}, ErrNotVerified},
		{"digest not hex", bundleJSON, rootJSON, Options{Algorithm: "sha512", Digest: "xyz", Repository: "sigstore/sigstore-js"}, ErrNotVerified},
		{"a root that does not vouch", bundleJSON, []byte(`{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`), good, ErrNotVerified},
		{"not a root", bundleJSON, []byte(`{`), good, ErrTrustedRoot},
		{"not a bundle", []byte(`{"mediaType":"x"}`), rootJSON, good, ErrBundle},
	} {
		if _, err := Verify(c.bundle, c.root, c.opts); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
		}
	}
}

// Any change to the signed statement is refused.
func TestVerifyRefusesAnyChangedPayloadByte(t *testing.T) {
	dir := sigstoreExamples(t)
	bundleJSON, rootJSON := read(t, dir, "bundle-provenance.json"), read(t, dir, "trusted-root-public-good.json")
	s := string(bundleJSON)
	i := strings.Index(s, `"payload": "`)
	if i < 0 {
		i = strings.Index(s, `"payload":"`)
	}
	if i < 0 {
		t.Fatal("no payload in the example bundle")
	}
	start := strings.Index(s[i:], `"ey`) + i + 1
	for _, off := range []int{10, 200, 1000} {
		b := []byte(s)
		if b[start+off] == 'A' {
			b[start+off] = 'B'
		} else {
			b[start+off] = 'A'
		}
		if _, err := Verify(b, rootJSON, Options{Algorithm: "sha512", Digest: npmDigest, Repository: "sigstore/sigstore-js"}); err == nil {
			t.Errorf("payload changed at %d: verified", off)
		}
	}
}

// What `gh attestation download` saves: JSON lines, a bundle or an object
// holding one per line; one line verifying is enough.
func TestVerifyFileJSONLines(t *testing.T) {
	dir := sigstoreExamples(t)
	bundleJSON, rootJSON := read(t, dir, "bundle-provenance.json"), read(t, dir, "trusted-root-public-good.json")
	var compact bytes.Buffer
	if err := json.Compact(&compact, bundleJSON); err != nil {
		t.Fatal(err)
	}
	opts := Options{Algorithm: "sha512", Digest: npmDigest, Repository: "sigstore/sigstore-js"}
	other := read(t, dir, "bundle-publish.json")
	var otherCompact bytes.Buffer
	if err := json.Compact(&otherCompact, other); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"one bundle, indented": string(bundleJSON),
		"lines":                otherCompact.String() + "\n" + compact.String() + "\n",
		"wrapped lines":        `{"bundle":` + otherCompact.String() + "}\n" + `{"bundle":` + compact.String() + `,"bundle_url":"x"}` + "\n",
	} {
		if _, err := VerifyFile([]byte(data), rootJSON, opts); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := VerifyFile([]byte(otherCompact.String()+"\n"), rootJSON, opts); !errors.Is(err, ErrNotVerified) {
		t.Errorf("only another artifact's bundle: err = %v, want ErrNotVerified", err)
	}
	if _, err := VerifyFile([]byte("\n\n"), rootJSON, opts); !errors.Is(err, ErrBundle) {
		t.Errorf("empty file: err = %v, want ErrBundle", err)
	}
}
