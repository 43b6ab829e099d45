package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	vsa "github.com/in-toto/attestation/go/predicates/vsa/v1"
	ita "github.com/in-toto/attestation/go/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/cloud-assembly/assemble/provenance"
)

// runOK runs assemble with args and fails the test unless it exits with
// want.
func runExpect(t *testing.T, want int, args ...string) string {
	t.Helper()
	var stdout, stderr strings.Builder
	if code := run(context.Background(), append([]string{"assemble"}, args...), strings.NewReader(""), &stdout, &stderr); code != want {
		t.Fatalf("assemble %v: exit %d, want %d\n%s%s", args, code, want, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// readVSA reads a summary and validates it with the in-toto Go bindings:
// the statement layer, then the predicate read strictly into the VSA
// proto (a field the schema does not define is refused).
func readVSA(t *testing.T, file string) *vsa.VerificationSummary {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var st ita.Statement
	if err := protojson.Unmarshal(data, &st); err != nil {
		t.Fatalf("not an in-toto statement: %v\n%s", err, data)
	}
	if err := st.Validate(); err != nil {
		t.Fatalf("in-toto bindings refuse the statement: %v", err)
	}
	if st.GetPredicateType() != provenance.VSAPredicateType {
		t.Fatalf("predicate type %s", st.GetPredicateType())
	}
	pred, _ := protojson.Marshal(st.GetPredicate())
	var p vsa.VerificationSummary
	if err := protojson.Unmarshal(pred, &p); err != nil {
		t.Fatalf("the predicate breaks the VSA schema: %v\n%s", err, pred)
	}
	if p.GetVerifier().GetId() == "" || p.GetTimeVerified() == nil || p.GetResourceUri() == "" || p.GetPolicy().GetUri() == "" {
		t.Fatalf("a required VSA field is empty: %s", pred)
	}
	for _, l := range p.GetVerifiedLevels() {
		if strings.HasPrefix(l, "SLSA_") && l != "SLSA_BUILD_LEVEL_1" {
			t.Errorf("level %s", l)
		}
	}
	return &p
}

// TestVerifyVSA: verify --vsa writes a summary the in-toto VSA schema
// accepts, PASSED with the rules checked, FAILED naming the rule that
// refused; its subject is the file's SHA-256.
func TestVerifyVSA(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "")
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	dir := t.TempDir()
	project := filepath.Join(dir, "p")
	os.MkdirAll(project, 0o755)
	os.WriteFile(filepath.Join(project, "assembly.yaml"), []byte("environment: aws://123456789012/eu-west-1\ndroplets:\n  Site:\n    type: file\n    properties:\n      file: index.html\n      bucketName: b\n      objectKey: index.html\n"), 0o644)
	os.WriteFile(filepath.Join(project, "index.html"), []byte("<h1>hi</h1>\n"), 0o644)
	cloud := filepath.Join(dir, "app.cloud")
	runExpect(t, 0, "build", "-o", cloud, "--provenance-builder", "https://ci.example.com/builders/release", project)
	runExpect(t, 0, "sign", "--key", filepath.Join(root, "fixtures", "keys", "ed25519.sec.asc"), cloud)
	keyring := filepath.Join(root, "fixtures", "keys", "ed25519.pub.asc")
	good := filepath.Join(dir, "good.yaml")
	os.WriteFile(good, []byte("keyrings: ["+keyring+"]\nprovenance:\n  builders: ['https://ci.example.com/builders/*']\n"), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("keyrings: ["+keyring+"]\nprovenance:\n  builders: ['https://other.example.com/*']\n"), 0o644)

	out := filepath.Join(dir, "vsa.json")
	runExpect(t, 0, "verify", "--policy", good, "--vsa", out, cloud)
	p := readVSA(t, out)
	if p.GetVerificationResult() != "PASSED" || !strings.Contains(strings.Join(p.GetVerifiedLevels(), " "), "SLSA_BUILD_LEVEL_1") ||
		!strings.Contains(strings.Join(p.GetVerifiedLevels(), " "), "ASSEMBLE_PROVENANCE_BUILDER") || p.GetPolicy().GetDigest()["sha256"] == "" {
		t.Errorf("passing summary: %v", p)
	}
	if len(p.GetInputAttestations()) != 2 {
		t.Errorf("input attestations %v, want signature.asc and the provenance", p.GetInputAttestations())
	}

	runExpect(t, 1, "verify", "--policy", bad, "--vsa", out, cloud)
	p = readVSA(t, out)
	if p.GetVerificationResult() != "FAILED" || strings.Contains(strings.Join(p.GetVerifiedLevels(), " "), "SLSA_BUILD_LEVEL_1") || strings.Contains(strings.Join(p.GetVerifiedLevels(), " "), "ASSEMBLE_PROVENANCE_BUILDER") {
		t.Errorf("failing summary: %v", p)
	}
	// Without a provenance section the summary still records what passed.
	runExpect(t, 0, "verify", "--keyring", keyring, "--vsa", out, cloud)
	if p = readVSA(t, out); p.GetVerificationResult() != "PASSED" || p.GetPolicy().GetUri() != "assemble:flags" {
		t.Errorf("summary without a policy file: %v", p)
	}
}
