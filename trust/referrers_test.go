package trust

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/testenv/ocireg"
	"github.com/cloud-assembly/assemble/provenance"
	"github.com/cloud-assembly/assemble/remote"
)

// bundleKey makes an Ed25519 key, writes its public half beside a
// policy whose provenance section allows it, and returns the trust and
// the private key.
func bundleKey(t *testing.T) (*Trust, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(pub)
	file := filepath.Join(t.TempDir(), "bundle.pub")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return load(t, Options{PolicyFile: writePolicy(t, "provenance:\n  bundle-keys: ["+file+"]\n")}), priv
}

// attest signs a provenance bundle about b (attest --provenance).
func attest(t *testing.T, b []byte, tr *Trust, key ed25519.PrivateKey) []byte {
	t.Helper()
	res, err := Verify(context.Background(), "app.cloud", bytes.NewReader(b), int64(len(b)), tr, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bundle, err := provenance.AttestBundle("app.cloud", res.SHA256, res.Provenance, key)
	if err != nil {
		t.Fatal(err)
	}
	return bundle
}

func TestBundleArtifactTypeIsTheBundleMediaType(t *testing.T) {
	if remote.BundleArtifactType != provenance.BundleMediaType {
		t.Fatalf("referrers are attached as %s, bundles are %s", remote.BundleArtifactType, provenance.BundleMediaType)
	}
}

// TestOpenFindsReferrerBundles: an assembly opened from a registry has
// the provenance bundles attached to it there judged by the policy's
// bundle-keys, as given bundles are: one signed by an allowed key
// verifies, one by another key is refused naming the rule, one whose
// bytes the registry changed is refused as such. Without bundle-keys
// they are not read.
func TestOpenFindsReferrerBundles(t *testing.T) {
	ctx := context.Background()
	b := provenanceAssembly(t, provenance.Options{})
	tr, key := bundleKey(t)
	good := attest(t, b, tr, key)
	_, keyOther := bundleKey(t)
	foreign := attest(t, b, tr, keyOther)

	var tamper atomic.Pointer[string] // a blob digest whose bytes the registry changes
	var listings atomic.Int64
	srv := ocireg.InProcess(false, func(w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.URL.Path, "/referrers/") {
			listings.Add(1)
		}
		if d := tamper.Load(); d != nil && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/blobs/"+*d) {
			w.Write(bytes.Replace(good, []byte("dsse"), []byte("DSSE"), 1))
			return true
		}
		return false
	})
	defer srv.Close()
	host := ocireg.Host(srv)
	push := func(tag string, bundles ...[]byte) string {
		f := remote.File{R: bytes.NewReader(b), Size: int64(len(b)), SHA256: digest.Of(b), Title: "app.cloud"}
		for _, bd := range bundles {
			f.Referrers = append(f.Referrers, remote.Referrer{ArtifactType: remote.BundleArtifactType, Data: bd})
		}
		if _, err := remote.Push(ctx, "oci://"+host+"/team/app:"+tag, f, nil); err != nil {
			t.Fatal(err)
		}
		return "oci://" + host + "/team/app:" + tag
	}

	a, err := Open(ctx, push("good", good), tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bs := a.Result().Bundles; len(bs) != 1 || !strings.HasPrefix(bs[0].Name, "oci://"+host+"/team/app@sha256:") || !bytes.Equal(bs[0].Data, good) {
		t.Fatalf("bundles found: %+v", bs)
	}
	// What a push of it attaches (a promotion): the bundle once (found
	// there, and verified), and the signature.
	refs, err := a.Referrers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for _, r := range refs {
		types[r.ArtifactType]++
	}
	if len(refs) != 2 || types[remote.BundleArtifactType] != 1 || types[remote.SignatureArtifactType] != 1 {
		t.Errorf("referrers to attach: %v", types)
	}
	a.Close()

	loc := push("foreign", good, foreign)
	var re *provenance.RuleError
	if _, err := Open(ctx, loc, tr, nil); !errors.Is(err, provenance.ErrPolicy) || !errors.As(err, &re) || re.Rule != provenance.RuleBundleKey || !strings.Contains(re.Detail, "oci://") {
		t.Errorf("a bundle by another key: %v", err)
	}
	var ve *VerifyError
	if _, err := Open(ctx, loc, tr, nil); !errors.As(err, &ve) || ve.Result == nil || ve.Result.Provenance == nil || ve.Result.Provenance.Failed == nil {
		t.Errorf("the refusal does not carry the verdict: %v", err)
	}

	// Without bundle-keys nothing is asked of the referrers API.
	n := listings.Load()
	plain := load(t, Options{PolicyFile: writePolicy(t, "provenance: {}\n")})
	if a, err := Open(ctx, loc, plain, nil); err != nil || listings.Load() != n {
		t.Errorf("no bundle-keys: %v, %d referrers requests", err, listings.Load()-n)
	} else {
		a.Close()
	}

	loc = push("tampered", good)
	d := remote.Referrer{Data: good}.Digest()
	tamper.Store(&d)
	if _, err := Open(ctx, loc, tr, nil); !errors.Is(err, remote.ErrDigestMismatch) {
		t.Errorf("a bundle the registry changed: %v, want remote.ErrDigestMismatch", err)
	}
}
