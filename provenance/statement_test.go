package provenance

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	slsa "github.com/in-toto/attestation/go/predicates/provenance/v1"
	ita "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// validate checks a statement with the in-toto Go bindings: the statement
// layer, then the SLSA provenance v1 predicate, both read strictly
// (protojson refuses a field the protos do not define).
func validate(t *testing.T, body []byte) error {
	t.Helper()
	var st ita.Statement
	if err := protojson.Unmarshal(body, &st); err != nil {
		return err
	}
	if err := st.Validate(); err != nil {
		return err
	}
	pred, err := protojson.Marshal(st.GetPredicate())
	if err != nil {
		return err
	}
	var p slsa.Provenance
	if err := protojson.Unmarshal(pred, &p); err != nil {
		return err
	}
	return p.Validate()
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestStatementValidatesWithInTotoBindings(t *testing.T) {
	started := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := map[string]Options{
		"local": {NoGit: true},
		"github": {NoGit: true, LookupEnv: env(map[string]string{
			"GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r",
			"GITHUB_WORKFLOW_REF": "o/r/.github/workflows/release.yml@refs/heads/main", "GITHUB_RUN_ID": "42",
			"GITHUB_REF": "refs/heads/main", "GITHUB_SHA": strings.Repeat("a", 40)}),
			StartedOn: started, FinishedOn: started.Add(time.Minute)},
	}
	for name, opts := range cases {
		t.Run(name, func(t *testing.T) {
			st := New(context.Background(), Inputs{Project: "assembly.yaml", Environment: "aws://123456789012/eu-west-1", Target: "a.cloud",
				Dependencies: []Resource{{Name: "modules/m.yaml", Digest: map[string]string{"sha256": strings.Repeat("b", 64)}},
					{Name: "aws-cdk-lib", URI: "pkg:npm/aws-cdk-lib@2.100.0"}}}, opts)
			st.Seal(strings.Repeat("c", 64))
			body, err := st.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if err := validate(t, body); err != nil {
				t.Fatalf("in-toto bindings refuse %s: %v", body, err)
			}
			// The bindings do refuse a broken one: this test can fail.
			st.Predicate.RunDetails.Builder.ID = ""
			bad, _ := st.Marshal()
			if validate(t, bad) == nil {
				t.Fatal("bindings accepted an empty builder.id")
			}
			st.Subject[0].Digest[DirHash] = "xyz"
			bad, _ = st.Marshal()
			if validate(t, bad) == nil {
				t.Fatal("bindings accepted a dirHash that is not hex")
			}
		})
	}
}

// TestLocalIsReproducible: without explicit inputs two statements are the
// same bytes, and say local.
func TestLocalIsReproducible(t *testing.T) {
	mk := func() []byte {
		st := New(context.Background(), Inputs{Project: "p", Dir: t.TempDir()}, Options{LookupEnv: env(nil)})
		st.Seal(strings.Repeat("0", 64))
		b, err := st.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := mk(), mk()
	if string(a) != string(b) {
		t.Fatalf("two local statements differ:\n%s\n%s", a, b)
	}
	var st Statement
	if err := json.Unmarshal(a, &st); err != nil {
		t.Fatal(err)
	}
	if st.Predicate.RunDetails.Builder.ID != LocalBuilder || st.Predicate.RunDetails.Metadata.InvocationID != Local {
		t.Errorf("builder %q invocation %q, want local", st.Predicate.RunDetails.Builder.ID, st.Predicate.RunDetails.Metadata.InvocationID)
	}
	if st.Predicate.RunDetails.Metadata.StartedOn != nil || st.Predicate.RunDetails.Metadata.FinishedOn != nil {
		t.Error("a local statement without times carries times")
	}
}

// TestContentDigestIsDirHash compares ContentDigest with the in-toto
// spec's own definition run by coreutils over extracted random trees:
// find . -type f | cut -c3- | LC_ALL=C sort | xargs -r sha256sum | sha256sum.
func TestContentDigestIsDirHash(t *testing.T) {
	if _, err := exec.LookPath("sha256sum"); err != nil {
		t.Skip("sha256sum (coreutils) not installed")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	segs := []string{"a", "B", "z", "a-b", "a.b", "é", "Z_9", "m"}
	for i := 0; i < 20; i++ {
		dir := t.TempDir()
		sums := map[string][sha256.Size]byte{}
		for j := rng.IntN(12); j >= 0; j-- {
			name := segs[rng.IntN(len(segs))]
			for rng.IntN(3) == 0 {
				name += "/" + segs[rng.IntN(len(segs))]
			}
			name += ".txt"
			data := make([]byte, rng.IntN(300))
			for k := range data {
				data[k] = byte(rng.Uint32())
			}
			os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
			sums[name] = sha256.Sum256(data)
		}
		got, err := ContentDigest(sums)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("sh", "-c", "find . -type f | cut -c3- | LC_ALL=C sort | xargs -r sha256sum | sha256sum | cut -f1 -d' '")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.TrimSpace(string(out)); got != want {
			t.Fatalf("tree %d: ContentDigest %s, coreutils %s", i, got, want)
		}
	}
	if _, err := ContentDigest(map[string][sha256.Size]byte{EntryName: {}}); err == nil {
		t.Error("ContentDigest took the provenance entry")
	}
	if _, err := ContentDigest(map[string][sha256.Size]byte{"signature.asc": {}}); err == nil {
		t.Error("ContentDigest took signature.asc")
	}
}

func TestDetectRun(t *testing.T) {
	sha := strings.Repeat("d", 40)
	cases := []struct {
		name string
		env  map[string]string
		want Run
	}{
		{"none", map[string]string{"CI": "true"}, Run{}},
		{"github", map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://ghe.example.com", "GITHUB_REPOSITORY": "o/r",
			"GITHUB_WORKFLOW_REF": "o/r/.github/workflows/b.yml@refs/tags/v1", "GITHUB_RUN_ID": "7", "GITHUB_RUN_ATTEMPT": "2", "GITHUB_REF": "refs/tags/v1", "GITHUB_SHA": sha},
			Run{System: "github-actions", BuilderID: "https://ghe.example.com/o/r/.github/workflows/b.yml@refs/tags/v1",
				InvocationID: "https://ghe.example.com/o/r/actions/runs/7/attempts/2", Repository: "https://ghe.example.com/o/r", Ref: "refs/tags/v1", Commit: sha}},
		{"gitlab", map[string]string{"GITLAB_CI": "true", "CI_SERVER_URL": "https://gitlab.example.com", "CI_PROJECT_PATH": "g/p", "CI_RUNNER_ID": "12",
			"CI_PROJECT_URL": "https://gitlab-ci-token:SECRET@gitlab.example.com/g/p", "CI_JOB_URL": "https://gitlab.example.com/g/p/-/jobs/5",
			"CI_COMMIT_SHA": sha, "CI_COMMIT_BRANCH": "main", "CI_JOB_STARTED_AT": "2026-01-02T03:04:05Z"},
			Run{System: "gitlab-ci", BuilderID: "https://gitlab.example.com/g/p/-/runners/12", InvocationID: "https://gitlab.example.com/g/p/-/jobs/5",
				Repository: "https://gitlab.example.com/g/p", Ref: "refs/heads/main", Commit: sha, StartedOn: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
		{"codebuild", map[string]string{"CODEBUILD_BUILD_ARN": "arn:aws:codebuild:eu-west-1:123456789012:build/proj:abc-1",
			"CODEBUILD_SOURCE_REPO_URL": "https://git-codecommit.eu-west-1.amazonaws.com/v1/repos/r", "CODEBUILD_RESOLVED_SOURCE_VERSION": sha,
			"CODEBUILD_WEBHOOK_HEAD_REF": "refs/heads/dev"},
			Run{System: "codebuild", BuilderID: "arn:aws:codebuild:eu-west-1:123456789012:project/proj", InvocationID: "arn:aws:codebuild:eu-west-1:123456789012:build/proj:abc-1",
				Repository: "https://git-codecommit.eu-west-1.amazonaws.com/v1/repos/r", Ref: "refs/heads/dev", Commit: sha}},
		{"buildkite", map[string]string{"BUILDKITE": "true", "BUILDKITE_ORGANIZATION_SLUG": "org", "BUILDKITE_PIPELINE_SLUG": "pipe",
			"BUILDKITE_BUILD_URL": "https://buildkite.com/org/pipe/builds/3", "BUILDKITE_JOB_ID": "j1", "BUILDKITE_REPO": "git@github.com:o/r.git",
			"BUILDKITE_COMMIT": sha, "BUILDKITE_TAG": "v2"},
			Run{System: "buildkite", BuilderID: "https://buildkite.com/org/pipe", InvocationID: "https://buildkite.com/org/pipe/builds/3#j1",
				Repository: "git@github.com:o/r.git", Ref: "refs/tags/v2", Commit: sha}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := DetectRun(env(c.env)); got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// TestCleanURLDropsSecrets: no user information reaches a provenance,
// whatever the address looks like.
func TestCleanURLDropsSecrets(t *testing.T) {
	for in, want := range map[string]string{
		"https://x-access-token:SECRET@github.com/o/r": "https://github.com/o/r",
		"https://SECRET@github.com/o/r.git":            "https://github.com/o/r.git",
		"user:SECRET@host.example.com:o/r.git":         "host.example.com:o/r.git",
		"git@github.com:o/r.git":                       "git@github.com:o/r.git",
		"ssh://git:SECRET@host/o/r":                    "ssh://host/o/r",
	} {
		if got := cleanURL(in); got != want || strings.Contains(got, "SECRET") {
			t.Errorf("cleanURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReadGit reads a real checkout made with git, and its source
// round-trips through the statement.
func TestReadGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if _, ok := ReadGit(context.Background(), dir); ok {
		t.Skip("the temporary folder lies inside a git checkout")
	}
	run("init", "-q", "-b", "main")
	if _, ok := ReadGit(context.Background(), dir); ok {
		t.Error("a checkout without a commit has a source")
	}
	os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	run("add", "f")
	run("commit", "-q", "-m", "one")
	run("remote", "add", "origin", "https://user:SECRET@example.com/o/r.git")
	commit := run("rev-parse", "HEAD")
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	src, ok := ReadGit(context.Background(), sub)
	want := Source{Repository: "https://example.com/o/r.git", Ref: "refs/heads/main", Commit: commit}
	if !ok || src != want {
		t.Fatalf("ReadGit = %+v, %v; want %+v", src, ok, want)
	}
	st := New(context.Background(), Inputs{Project: "assembly.yaml", Dir: sub}, Options{})
	if got, ok := SourceOf(st); !ok || got != want {
		t.Errorf("SourceOf = %+v, %v; want %+v", got, ok, want)
	}
}
