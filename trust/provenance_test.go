package trust

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/provenance"
	"github.com/cloud-assembly/assemble/signing"
)

// provenanceAssembly is a small assembly with a provenance entry (as
// build writes it), signed with the ed25519 test key.
func provenanceAssembly(t *testing.T, opts provenance.Options) []byte {
	t.Helper()
	w := assembly.NewWriter(assembly.WriterOptions{})
	w.AddBytes("manifest.json", []byte(`{"schema":"cloud-assembly/1.0","droplets":{"Site":{"type":"npm://@aws-cdk/assets.FileDroplet","environment":"aws://123456789012/us-east-1","properties":{"file":"site/index.html","bucketName":"b"}}}}`))
	w.AddBytes("site/index.html", []byte("<h1>hello</h1>\n"))
	opts.NoGit = true
	st := provenance.New(context.Background(), provenance.Inputs{Project: "assembly.yaml"}, opts)
	if err := w.SetTrailer(provenance.EntryName, func(sums map[string][sha256.Size]byte) ([]byte, error) {
		d, err := provenance.ContentDigest(sums)
		if err != nil {
			return nil, err
		}
		st.Seal(d)
		return st.Marshal()
	}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	r, err := assembly.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
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

func writePolicy(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "policy.yaml")
	keyring, _ := filepath.Abs(filepath.Join(keysDir, "ed25519.pub.asc"))
	if err := os.WriteFile(file, []byte("keyrings: ["+keyring+"]\n"+body), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestVerifyProvenancePolicy: the policy file's provenance section is
// applied by Verify, the one verdict every command calls; a refusal names
// its rule.
func TestVerifyProvenancePolicy(t *testing.T) {
	ci := provenance.Options{FinishedOn: time.Now().Add(-time.Hour), LookupEnv: func(k string) (string, bool) {
		v, ok := map[string]string{"GITLAB_CI": "true", "CI_PROJECT_URL": "https://gitlab.example.com/g/p", "CI_COMMIT_SHA": strings.Repeat("e", 40),
			"CI_COMMIT_TAG": "v1.2.0", "CI_SERVER_URL": "https://gitlab.example.com", "CI_PROJECT_PATH": "g/p", "CI_RUNNER_ID": "7", "CI_JOB_URL": "https://gitlab.example.com/g/p/-/jobs/1"}[k]
		return v, ok
	}}
	b := provenanceAssembly(t, ci)
	for _, c := range []struct {
		section, rule string
	}{
		{"provenance: {}\n", ""},
		{"provenance:\n  builders: ['https://gitlab.example.com/g/p/-/runners/*']\n  repositories: ['https://gitlab.example.com/g/*']\n  refs: ['refs/tags/v*']\n  max-age: 2h\n", ""},
		{"provenance:\n  builders: ['" + provenance.LocalBuilder + "']\n", provenance.RuleBuilder},
		{"provenance:\n  repositories: ['https://github.com/*/*']\n", provenance.RuleRepository},
		{"provenance:\n  refs: [refs/heads/main]\n", provenance.RuleRef},
		{"provenance:\n  max-age: 30m\n", provenance.RuleMaxAge},
		{"provenance:\n  predicate-type: https://slsa.dev/provenance/v0.2\n", provenance.RulePredicateType},
	} {
		tr := load(t, Options{PolicyFile: writePolicy(t, c.section)})
		res, err := Verify(context.Background(), "a.cloud", bytes.NewReader(b), int64(len(b)), tr, VerifyOptions{})
		if c.rule == "" {
			if err != nil || res.Provenance == nil || res.Provenance.Failed != nil {
				t.Errorf("%q: %v", c.section, err)
			}
			continue
		}
		var re *provenance.RuleError
		if !errors.Is(err, provenance.ErrPolicy) || !errors.As(err, &re) || re.Rule != c.rule {
			t.Errorf("%q: got %v, want rule %s", c.section, err, c.rule)
		}
		if res.Provenance == nil || res.Provenance.Failed == nil || res.Provenance.Failed.Rule != c.rule {
			t.Errorf("%q: the result does not carry the failed rule", c.section)
		}
	}
	// Without a provenance section nothing is required: an assembly
	// without provenance verifies, and with one it is only recorded.
	plain := signedAssembly(t)
	tr := load(t, Options{PolicyFile: writePolicy(t, "")})
	if _, err := Verify(context.Background(), "a.cloud", bytes.NewReader(plain), int64(len(plain)), tr, VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := Verify(context.Background(), "a.cloud", bytes.NewReader(plain), int64(len(plain)), tr, VerifyOptions{Provenance: true})
	if err != nil || res.Provenance == nil || res.Provenance.Failed == nil || res.Provenance.Failed.Rule != provenance.RulePresent {
		t.Fatalf("recorded verdict without a policy: %+v, %v", res.Provenance, err)
	}
	// With one, an assembly without provenance is refused.
	tr = load(t, Options{PolicyFile: writePolicy(t, "provenance: {}\n")})
	if _, err := Verify(context.Background(), "a.cloud", bytes.NewReader(plain), int64(len(plain)), tr, VerifyOptions{}); !errors.Is(err, provenance.ErrPolicy) {
		t.Fatalf("no provenance under a provenance policy: %v", err)
	}
}

func TestReadPolicyProvenanceRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		body, want string
		line, col  int
	}{
		{"provenance: [a]\n", "provenance must be a mapping", 1, 13},
		{"provenance:\n  builder: [x]\n", `unknown key provenance.builder`, 2, 3},
		{"provenance:\n  refs: ['refs/[']\n", "provenance.refs", 2, 10},
		{"provenance:\n  max-age: soon\n", "provenance.max-age must be a positive duration", 2, 12},
		{"provenance:\n  max-age: -1h\n", "provenance.max-age must be a positive duration", 2, 12},
		{"provenance:\n  bundle-keys: [missing.pem]\n", "provenance.bundle-keys", 2, 17},
		{"provenance:\n  refs: [a]\n  refs: [b]\n", "provenance.refs is given twice", 3, 3},
	} {
		file := filepath.Join(dir, "policy.yaml")
		if err := os.WriteFile(file, []byte(tt.body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadPolicy(file)
		var pe *PolicyError
		if !errors.As(err, &pe) || pe.Line != tt.line || pe.Column != tt.col || !strings.Contains(pe.Msg, tt.want) {
			t.Errorf("%q: got %v, want %q at %d:%d", tt.body, err, tt.want, tt.line, tt.col)
		}
	}
}
