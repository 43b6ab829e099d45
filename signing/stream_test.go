package signing

import (
	"bytes"
	"crypto"
	"errors"
	"math/rand"
	"testing"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
)

// streamFiles are the entries of the one-pass tests: small ones, an empty
// one, and two larger than the writer's 1 MiB chunk (their sizes go in a
// data descriptor, the last one's written when the archive ends).
func streamFiles() map[string][]byte {
	r := rand.New(rand.NewSource(7))
	big := make([]byte, 3<<20+17)
	r.Read(big)
	text := bytes.Repeat([]byte("Resources:\n  Bucket:\n    Type: AWS::S3::Bucket\n"), 40000)
	return map[string][]byte{
		assembly.ManifestName: []byte(`{"schema":"cloud-assembly/1.0","droplets":{}}`),
		"a/empty.txt":         nil,
		"a/small.yaml":        []byte("x: 1\n"),
		"b/blob.bin":          big,
		"z/text.yaml":         text,
	}
}

func streamWriter(t testing.TB, files map[string][]byte, sealer assembly.Sealer) []byte {
	t.Helper()
	w := assembly.NewWriter(assembly.WriterOptions{ModTime: time.Date(2024, 5, 6, 7, 8, 10, 0, time.UTC), Sealer: sealer})
	for name, body := range files {
		if err := w.AddBytes(name, body); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(t.Context(), &buf); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	return buf.Bytes()
}

// One pass (the writer with a StreamSigner) writes, byte for byte, what
// the writer followed by Sign writes with the same nonce, time and
// randomness; and it verifies.
func TestStreamSignerMatchesSign(t *testing.T) {
	files := streamFiles()
	for _, tt := range []struct {
		name string
		keys []string
		alg  crypto.Hash
	}{
		{"ed25519", []string{"ed25519.sec.asc"}, crypto.SHA256},
		{"rsa sha512", []string{"rsa3072.sec.asc"}, crypto.SHA512},
		{"two keys", []string{"subkey.sec.asc", "passphrase.sec.asc"}, crypto.SHA384},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var ents []Signer
			for _, k := range tt.keys {
				ents = append(ents, Keys(signer(t, k)))
			}
			opts := func() *SignOptions {
				o := at(cosignTime)
				o.Algorithm = tt.alg
				return o
			}
			twoPass := sealed(t, streamWriter(t, files, nil), opts(), ents...)
			ss, err := NewStreamSigner(t.Context(), ents, opts())
			if err != nil {
				t.Fatal(err)
			}
			onePass := streamWriter(t, files, ss)
			if !bytes.Equal(onePass, twoPass) {
				t.Fatalf("one pass (%d bytes) differs from build then sign (%d bytes)", len(onePass), len(twoPass))
			}
			v, err := verifyAt(t, onePass, readKeys(t, "trusted.asc"), cosignTime, Policy{MinSigners: len(tt.keys)})
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if len(v.Files()) != len(files) || ss.Sealed() == nil || len(ss.Sealed().New()) != len(tt.keys) {
				t.Errorf("%d files verified, sealed %+v", len(v.Files()), ss.Sealed())
			}
		})
	}
}

// One pass refuses what Sign refuses: an invalid assembly (the check on
// what was written), a revoked key (before anything is written).
func TestStreamSignerRefuses(t *testing.T) {
	files := streamFiles()
	files[assembly.ManifestName] = []byte(`{"schema":"cloud-assembly/1.0","droplets":{"A":{"type":"x://y","environment":"x://y","dependsOn":["A"]}}}`)
	ss, err := NewStreamSigner(t.Context(), []Signer{Keys(signer(t, "ed25519.sec.asc"))}, at(cosignTime))
	if err != nil {
		t.Fatal(err)
	}
	w := assembly.NewWriter(assembly.WriterOptions{Sealer: ss})
	for name, body := range files {
		w.AddBytes(name, body)
	}
	if _, err := w.WriteTo(t.Context(), &bytes.Buffer{}); !errors.Is(err, assembly.ErrCycle) {
		t.Errorf("invalid assembly: got %v, want assembly.ErrCycle", err)
	}
	if _, err := NewStreamSigner(t.Context(), []Signer{Keys(readKeys(t, "revoked.sec.asc")[0])}, nil); !errors.Is(err, ErrSignerRevoked) {
		t.Errorf("revoked key: got %v, want ErrSignerRevoked", err)
	}
}
