package signing

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
)

// binaryKey is a fixture key file, dearmored.
func binaryKey(t testing.TB, name string) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join(keysDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ab, err := armor.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(ab.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// keyCopies is n copies of key, then the extra bytes.
func keyCopies(key []byte, n int, extra ...[]byte) []byte {
	b := bytes.Repeat(key, n)
	for _, e := range extra {
		b = append(b, e...)
	}
	return b
}

// Issue 19 item 11: a keyring file holding one key 69,000 times (16 MiB)
// is read as that one key, in linear time (BenchmarkKeyCopies,
// bench/hostile.sh); a copy that differs (a revocation) still counts
// wherever it is.
func TestKeyCopies(t *testing.T) {
	pub := binaryKey(t, "revoked-old.pub.asc")
	n := maxKeyFileSize/len(pub) - 2
	el, err := ReadKeys(bytes.NewReader(keyCopies(pub, n)))
	if err != nil || len(el) != 1 {
		t.Fatalf("%d copies: %d keys, %v", n, len(el), err)
	}
	revoked := binaryKey(t, "revoked.pub.asc")
	for _, b := range [][]byte{keyCopies(pub, 1000, revoked), append(append([]byte{}, revoked...), keyCopies(pub, 1000)...)} {
		el, err := ReadKeys(bytes.NewReader(b))
		if err != nil || len(el) != 2 {
			t.Fatalf("copies and a revoked copy: %d keys, %v", len(el), err)
		}
		k := NewKeyring(el)
		if k.Len() != 1 || len(k.Entities()[0].Revocations) == 0 {
			t.Fatalf("merged: %d keys, revocations %d", k.Len(), len(k.Entities()[0].Revocations))
		}
		if _, err := selectSigner(readKeys(t, "revoked-old.sec.asc"), nil, created); err != nil {
			t.Fatal(err)
		}
		if _, err := selectSigner(append(readKeys(t, "revoked-old.sec.asc"), el...), nil, created); !errors.Is(err, ErrSignerRevoked) {
			t.Errorf("signing with the revoked key: got %v, want ErrSignerRevoked", err)
		}
	}
	// Merging many copies that are distinct entities (not deduplicated) keeps
	// everything of each.
	one := readKeys(t, "revoked-old.pub.asc")[0]
	list := make(openpgp.EntityList, 20000)
	for i := range list {
		list[i] = one
	}
	k := NewKeyring(list, readKeys(t, "revoked.pub.asc"))
	if k.Len() != 1 || len(k.Entities()[0].Revocations) != 1 {
		t.Fatalf("merged: %d keys, %d revocations", k.Len(), len(k.Entities()[0].Revocations))
	}
}

// BenchmarkKeyCopies reads and merges a keyring file of one key copied up
// to the 16 MiB file bound (69,000 copies of an Ed25519 key), and merges
// as many copies given as distinct entities.
func BenchmarkKeyCopies(b *testing.B) {
	pub := binaryKey(b, "ed25519.pub.asc")
	data := keyCopies(pub, maxKeyFileSize/len(pub))
	one := readKeys(b, "ed25519.pub.asc")[0]
	list := make(openpgp.EntityList, len(data)/len(pub))
	for i := range list {
		list[i] = one
	}
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			if el, err := ReadKeys(bytes.NewReader(data)); err != nil || NewKeyring(el).Len() != 1 {
				b.Fatal(err)
			}
		}
	})
	b.Run("merge", func(b *testing.B) {
		for b.Loop() {
			if NewKeyring(list).Len() != 1 {
				b.Fatal("not merged")
			}
		}
	})
}
