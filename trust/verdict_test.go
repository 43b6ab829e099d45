package trust

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/provenance"
	"github.com/cloud-assembly/assemble/signing"
)

// schemaBase is where docs/json's schemas say they live ($id).
const schemaBase = "https://github.com/cloud-assembly/assemble/docs/json/"

// verifySchema compiles docs/json/NAME (error.json beside it, for its
// $defs).
func verifySchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	for _, n := range []string{"error.json", name} {
		b, err := os.ReadFile(filepath.Join("..", "docs", "json", n))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.AddResource(schemaBase+n, doc); err != nil {
			t.Fatal(err)
		}
	}
	s, err := c.Compile(schemaBase + name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// validJSON marshals v and checks it against s; failed, the error is
// added as a command adds it ("error": {...}).
func validJSON(t *testing.T, s *jsonschema.Schema, v any, failed error) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	doc := map[string]any{}
	for k, v := range obj {
		doc[k] = v
	}
	if failed != nil {
		code := errcode.Of(failed)
		if code == "" {
			code = "failure"
		}
		doc["error"] = map[string]any{"code": code, "message": failed.Error(), "file": nil, "line": nil, "column": nil, "hint": nil}
	}
	if err := s.Validate(doc); err != nil {
		t.Errorf("%s does not match the schema: %v", b, err)
	}
	return obj
}

// The verdict of a signed assembly is verify's --json: authenticated, its
// signer, signatures and policy, counted files, the file's SHA-256.
func TestVerdictSigned(t *testing.T) {
	b := signedAssembly(t)
	p := writeFile(t, b)
	a, err := Open(context.Background(), p, load(t, Options{Keyrings: []string{filepath.Join(keysDir, "ed25519.pub.asc")}}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	v := a.Verdict()
	if !v.Valid || !v.Authenticated || !v.Signed || v.File != p || v.SHA256 != digest.Of(b) || v.Size != int64(len(b)) {
		t.Fatalf("verdict %+v", v)
	}
	if v.Files != 2 || v.Bytes != a.Result().Bytes() || v.Droplets != 1 || v.Algorithm != "SHA256" {
		t.Errorf("counts %d files %d bytes %d droplets %s", v.Files, v.Bytes, v.Droplets, v.Algorithm)
	}
	if v.Signer == nil || !strings.Contains(v.Signer.UserID, "ed25519@example.test") || v.Signer.Fingerprint == "" || v.Timestamp == "" {
		t.Errorf("signer %+v at %q", v.Signer, v.Timestamp)
	}
	if len(v.Signatures) != 1 || !v.Signatures[0].Trusted || v.Signatures[0].Code != "" || v.Policy == nil || !v.Policy.Met || v.Policy.MinSigners != 1 {
		t.Errorf("signatures %+v policy %+v", v.Signatures, v.Policy)
	}
	obj := validJSON(t, verifySchema(t, "verify.json"), v, nil)
	if _, ok := obj["warnings"].([]any); !ok {
		t.Errorf("warnings is not a list: %v", obj["warnings"])
	}
}

// Unsigned: refused (signing.ErrUnsigned) with a verdict that says it is
// not signed; with the loud opt-out valid but not authenticated, and no
// signer, timestamp, signatures or policy in its JSON.
func TestVerdictUnsignedOptOut(t *testing.T) {
	p := writeFile(t, unsignedAssembly(t))
	s := verifySchema(t, "verify.json")
	_, err := Open(context.Background(), p, nil, nil)
	var ve *VerifyError
	if !errors.Is(err, signing.ErrUnsigned) || !errors.As(err, &ve) {
		t.Fatalf("unsigned without the opt-out: %v", err)
	}
	if v := ve.Verdict(); v.Valid || v.Authenticated || v.Signed || v.File != p {
		t.Errorf("refusal's verdict %+v", v)
	}
	validJSON(t, s, ve, err)

	a, err := Open(context.Background(), p, nil, &OpenOptions{InsecureAllowUnsigned: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	v := a.Verdict()
	if !v.Valid || v.Authenticated || v.Signed || v.Signer != nil || v.Files != 2 {
		t.Errorf("opt-out verdict %+v", v)
	}
	obj := validJSON(t, s, v, nil)
	for _, k := range []string{"signer", "timestamp", "algorithm", "signatures", "policy"} {
		if _, ok := obj[k]; ok {
			t.Errorf("an unsigned verdict reports %s", k)
		}
	}
}

// Another file than the digest asked for: ErrWrongDigest, and a verdict
// that is neither valid nor authenticated.
func TestVerdictDigestMismatch(t *testing.T) {
	p := writeFile(t, signedAssembly(t))
	tr := load(t, Options{Keyrings: []string{filepath.Join(keysDir, "ed25519.pub.asc")}})
	_, err := Open(context.Background(), p, tr, &OpenOptions{Digest: digest.Of([]byte("another file"))})
	var ve *VerifyError
	if !errors.Is(err, ErrWrongDigest) || !errors.As(err, &ve) {
		t.Fatalf("another digest: %v", err)
	}
	v := ve.Verdict()
	if v.Valid || v.Authenticated || !v.Signed || v.File != p {
		t.Errorf("verdict %+v", v)
	}
	obj := validJSON(t, verifySchema(t, "verify.json"), ve, err)
	if obj["valid"] != false || obj["authenticated"] != false {
		t.Errorf("failure JSON %v", obj)
	}
}

// A signature policy not met fails with its sentinel, and the verdict
// carries why: every signature, and the policy not met with what is
// missing; a key outside the trusted ones is reported with its code.
func TestVerdictPolicyRefusal(t *testing.T) {
	p := writeFile(t, signedAssembly(t))
	s := verifySchema(t, "verify.json")
	rsa := filepath.Join(keysDir, "rsa3072.pub.asc")
	ed := filepath.Join(keysDir, "ed25519.pub.asc")
	for _, c := range []struct {
		name    string
		opts    Options
		want    error
		missing bool
	}{
		{"two signers", Options{Keyrings: []string{ed, rsa}, MinSigners: ptr(2)}, signing.ErrThreshold, false},
		{"required signer", Options{Keyrings: []string{ed, rsa}, RequireSigners: []string{fingerprintOf(t, rsa)}}, signing.ErrRequiredSigner, true},
		{"another key", Options{Keyrings: []string{rsa}}, signing.ErrUnknownSigner, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(context.Background(), p, load(t, c.opts), nil)
			var ve *VerifyError
			if !errors.Is(err, c.want) || !errors.As(err, &ve) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			obj := validJSON(t, s, ve, err)
			pol, _ := obj["policy"].(map[string]any)
			sigs, _ := obj["signatures"].([]any)
			if pol == nil || pol["met"] != false || len(sigs) != 1 {
				t.Fatalf("failure JSON %v", obj)
			}
			if missing, _ := pol["missing"].([]any); (len(missing) > 0) != c.missing {
				t.Errorf("missing %v", pol["missing"])
			}
			if c.want == signing.ErrUnknownSigner {
				sig := sigs[0].(map[string]any)
				if sig["trusted"] != false || sig["code"] != "unknown_signer" || sig["error"] == "" {
					t.Errorf("signature %v", sig)
				}
			}
		})
	}
}

// fingerprintOf is the primary fingerprint of the key in file.
func fingerprintOf(t *testing.T, file string) string {
	t.Helper()
	tr := load(t, Options{Keyrings: []string{file}})
	if len(tr.Trusted) != 1 {
		t.Fatalf("%s holds %d keys", file, len(tr.Trusted))
	}
	return fmt.Sprintf("%X", tr.Trusted[0].PrimaryKey.Fingerprint)
}

// A provenance rule's refusal is in the verdict's JSON: the rule that
// refused, and the file's SHA-256 it refused.
func TestVerdictProvenanceRefusal(t *testing.T) {
	b := provenanceAssembly(t, provenance.Options{FinishedOn: time.Now().Add(-time.Hour)})
	p := writeFile(t, b)
	tr := load(t, Options{PolicyFile: writePolicy(t, "provenance:\n  repositories: ['https://github.com/*/*']\n")})
	_, err := Open(context.Background(), p, tr, nil)
	var ve *VerifyError
	if !errors.Is(err, provenance.ErrPolicy) || !errors.As(err, &ve) {
		t.Fatalf("provenance refusal: %v", err)
	}
	v := ve.Verdict()
	if v.Provenance == nil || v.Provenance.Met || v.Provenance.Rule == "" || v.SHA256 != digest.Of(b) {
		t.Fatalf("verdict %+v", v)
	}
	obj := validJSON(t, verifySchema(t, "verify.json"), ve, err)
	if pv, _ := obj["provenance"].(map[string]any); pv == nil || pv["rule"] != v.Provenance.Rule || pv["met"] != false {
		t.Errorf("failure JSON %v", obj)
	}
}

// Nothing opened: the verdict names the file and says nothing else.
func TestVerdictNotOpened(t *testing.T) {
	p := filepath.Join(t.TempDir(), "none.cloud")
	_, err := Open(context.Background(), p, nil, nil)
	var ve *VerifyError
	if !errors.Is(err, os.ErrNotExist) || !errors.As(err, &ve) {
		t.Fatalf("no file: %v", err)
	}
	obj := validJSON(t, verifySchema(t, "verify.json"), ve, err)
	if obj["file"] != p || obj["signed"] != false || len(obj) != 4 {
		t.Errorf("failure JSON %v", obj)
	}
}

// A location is named redacted, in messages and in the verdict.
func TestOpenRedactsLocation(t *testing.T) {
	_, err := Open(context.Background(), "https://user:secret@127.0.0.1:1/app.cloud", nil, nil)
	var ve *VerifyError
	if !errors.As(err, &ve) || strings.Contains(ve.Name, "secret") || strings.Contains(ve.Verdict().File, "secret") {
		t.Fatalf("name %q (%v)", ve.Name, err)
	}
}
