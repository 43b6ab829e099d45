package provenance_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/provenance"
)

// statement is a bundle statement about a .cloud file with these bytes.
func statement(t *testing.T, file []byte) ([]byte, digest.Digest) {
	t.Helper()
	d := digest.Of(file)
	st := provenance.NewBundleStatement("app.cloud", d, provenance.SLSAPredicate{
		BuildDefinition: provenance.BuildDefinition{BuildType: provenance.BuildType, ExternalParameters: provenance.ExternalParameters{Project: "assembly.yaml"}},
		RunDetails:      provenance.RunDetails{Builder: provenance.Builder{ID: provenance.LocalBuilder}, Metadata: provenance.BuildMetadata{InvocationID: provenance.Local}},
	})
	body, err := st.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return body, d
}

// sigstoreVerify verifies a bundle offline with sigstore-go, trusting the
// public key only: no transparency log, no timestamps, no certificate.
func sigstoreVerify(t *testing.T, data []byte, pub crypto.PublicKey, file digest.Digest) error {
	t.Helper()
	var b bundle.Bundle
	if err := b.UnmarshalJSON(data); err != nil {
		return err
	}
	sv, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	tm := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
		return root.NewExpiringKey(sv, time.Time{}, time.Time{}), nil
	})
	v, err := verify.NewVerifier(tm, verify.WithNoObserverTimestamps())
	if err != nil {
		t.Fatal(err)
	}
	sum := file.Sum()
	_, err = v.Verify(&b, verify.NewPolicy(verify.WithArtifactDigest("sha256", sum[:]), verify.WithKey()))
	return err
}

// TestSigstoreGoVerifiesOurBundle: sigstore-go v1.3 verifies the bundles
// SignBundle makes, offline with the public key, for Ed25519 and ECDSA
// P-256 keys; and refuses another key and another file.
func TestSigstoreGoVerifiesOurBundle(t *testing.T) {
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for name, key := range map[string]crypto.Signer{"ed25519": edKey, "ecdsa-p256": ecKey} {
		t.Run(name, func(t *testing.T) {
			body, d := statement(t, []byte("the .cloud file"))
			data, err := provenance.SignBundle(body, key)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), provenance.BundleMediaType) {
				t.Fatalf("no media type in %s", data)
			}
			if err := sigstoreVerify(t, data, key.Public(), d); err != nil {
				t.Fatalf("sigstore-go refuses our bundle: %v\n%s", err, data)
			}
			if sigstoreVerify(t, data, otherKey.Public(), d) == nil {
				t.Error("sigstore-go accepted our bundle with another key")
			}
			if sigstoreVerify(t, data, key.Public(), digest.Of([]byte("another file"))) == nil {
				t.Error("sigstore-go accepted our bundle for another file")
			}
			// And we verify our own, with the rules named.
			keys := []provenance.BundleKey{{File: "k.pem", Key: key.Public()}}
			if _, err := provenance.VerifyBundle("b.json", data, d, keys); err != nil {
				t.Fatal(err)
			}
			var re *provenance.RuleError
			if _, err := provenance.VerifyBundle("b.json", data, d, []provenance.BundleKey{{File: "o.pem", Key: otherKey.Public()}}); !errors.As(err, &re) || re.Rule != provenance.RuleBundleKey {
				t.Errorf("another key: %v", err)
			}
			if _, err := provenance.VerifyBundle("b.json", data, digest.Of([]byte("x")), keys); !errors.As(err, &re) || re.Rule != provenance.RuleBundleSubject {
				t.Errorf("another file: %v", err)
			}
		})
	}
}

// TestWeVerifySigstoreGoBundle: a bundle sigstore-go signed (DSSE, an
// ephemeral ECDSA P-256 key) verifies with VerifyBundle and its key.
func TestWeVerifySigstoreGoBundle(t *testing.T) {
	body, d := statement(t, []byte("the .cloud file"))
	kp, err := sign.NewEphemeralKeypair(nil)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := sign.Bundle(&sign.DSSEData{Data: body, PayloadType: provenance.PayloadType}, kp, sign.BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	res, err := provenance.VerifyBundle("sigstore-go.json", data, d, []provenance.BundleKey{{File: "k.pem", Key: kp.GetPublicKey()}})
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if res.Statement.Predicate.RunDetails.Builder.ID != provenance.LocalBuilder {
		t.Errorf("statement %+v", res.Statement)
	}
	// One byte of the payload changed: the signature no longer holds.
	tampered := strings.Replace(string(data), `"payload":"`, `"payload":"A`, 1)
	if _, err := provenance.VerifyBundle("t.json", []byte(tampered), d, []provenance.BundleKey{{File: "k.pem", Key: kp.GetPublicKey()}}); err == nil {
		t.Error("a tampered bundle verified")
	}
}
