package packager

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/provenance"
)

// TestProvenanceReproducible: a build in a git checkout, in CI, twice
// with the same inputs, is byte-identical; its provenance names the
// checkout's commit and its subject is the content's dirHash; another run
// ID changes the provenance entry and nothing else.
func TestProvenanceReproducible(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	t.Setenv("SOURCE_DATE_EPOCH", "")
	dir := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	os.WriteFile(filepath.Join(dir, ProjectFile), []byte("environment: aws://123456789012/eu-west-1\ndroplets:\n  Site:\n    type: file\n    properties:\n      file: site/index.html\n      bucketName: b\n      objectKey: index.html\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "site"), 0o755)
	os.WriteFile(filepath.Join(dir, "site", "index.html"), []byte("<h1>hi</h1>\n"), 0o644)
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "one")
	commit := git("rev-parse", "HEAD")
	env := func(run string) func(string) (string, bool) {
		m := map[string]string{"BUILDKITE": "true", "BUILDKITE_ORGANIZATION_SLUG": "acme", "BUILDKITE_PIPELINE_SLUG": "app",
			"BUILDKITE_BUILD_URL": "https://buildkite.com/acme/app/builds/" + run, "BUILDKITE_COMMIT": commit, "BUILDKITE_BRANCH": "main",
			"BUILDKITE_REPO": "https://github.com/acme/app.git"}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	build := func(run string) []byte {
		out := filepath.Join(t.TempDir(), "a.cloud")
		if _, err := Build(context.Background(), dir, out, BuildOptions{Provenance: provenance.Options{LookupEnv: env(run)}}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := build("1"), build("1")
	if !bytes.Equal(a, b) {
		t.Fatal("two builds with the same inputs differ")
	}
	entries := func(data []byte) map[string][]byte {
		r, err := assembly.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]byte{}
		for _, f := range r.Files() {
			rc, _ := f.Open()
			out[f.Name()], _ = io.ReadAll(rc)
			rc.Close()
		}
		return out
	}
	ea := entries(a)
	var st provenance.Statement
	if err := json.Unmarshal(ea[provenance.EntryName], &st); err != nil {
		t.Fatal(err)
	}
	sums := map[string][sha256.Size]byte{}
	for name, body := range ea {
		if name != provenance.EntryName {
			sums[name] = sha256.Sum256(body)
		}
	}
	want, _ := provenance.ContentDigest(sums)
	if st.Subject[0].Digest[provenance.DirHash] != want {
		t.Errorf("subject %v, content %s", st.Subject, want)
	}
	src, ok := provenance.SourceOf(&st)
	if !ok || src.Commit != commit || src.Repository != "https://github.com/acme/app.git" || src.Ref != "refs/heads/main" {
		t.Errorf("source %+v, want commit %s", src, commit)
	}
	if st.Predicate.RunDetails.Builder.ID != "https://buildkite.com/acme/app" {
		t.Errorf("builder %q", st.Predicate.RunDetails.Builder.ID)
	}
	eb := entries(build("2"))
	for name := range ea {
		if same := bytes.Equal(ea[name], eb[name]); same == (name == provenance.EntryName) {
			t.Errorf("%s: same %v after another run ID", name, same)
		}
	}
}
