package signing

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// keyFile returns the bytes of a fixture key file.
func keyFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(keysDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readKeyBytes reads keys from the concatenation of the given files, as
// `cat a.asc b.asc >ring.asc` makes a keyring.
func readKeyBytes(t testing.TB, names ...string) openpgp.EntityList {
	t.Helper()
	var all []byte
	for _, n := range names {
		all = append(all, keyFile(t, n)...)
	}
	el, err := ReadKeys(bytes.NewReader(all))
	if err != nil {
		t.Fatalf("%v: %v", names, err)
	}
	return el
}

// signedAt returns the test assembly signed at "at" with the key in file
// (the first key with secret material that may sign), bypassing SelectSigner
// so that a hostile or stale signer can be simulated.
func signedAt(t testing.TB, file string, at time.Time) []byte {
	t.Helper()
	e := readKeys(t, file)[0]
	var k = e.PrivateKey
	for _, sk := range e.Subkeys {
		if sk.PrivateKey != nil && !sk.PrivateKey.Dummy() && sk.Sig.FlagSign {
			k = sk.PrivateKey
		}
	}
	a, err := Attest(t.Context(), reader(t, buildZip(t)), &SignOptions{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	return replaceSignature(t, buildZip(t), rawClearSign(t, a, k, at, crypto.SHA256))
}

// orderings lists the ways a trusted set can be given: each permutation of
// the files as separate keyrings, and the files concatenated into one.
func orderings(t testing.TB, files ...string) map[string]openpgp.EntityList {
	t.Helper()
	out := map[string]openpgp.EntityList{}
	var perm func(prefix, rest []string)
	perm = func(prefix, rest []string) {
		if len(rest) == 0 {
			var el openpgp.EntityList
			for _, f := range prefix {
				el = append(el, readKeys(t, f)...)
			}
			out["--keyring "+strings.Join(prefix, " --keyring ")] = el
			out["cat "+strings.Join(prefix, " ")] = readKeyBytes(t, prefix...)
			return
		}
		for i := range rest {
			next := append(append([]string{}, rest[:i]...), rest[i+1:]...)
			perm(append(append([]string{}, prefix...), rest[i]), next)
		}
	}
	perm(nil, files)
	return out
}

// Issue #11 defect 1: a revoked key (or signing subkey) verified when the
// trusted set also held a copy exported before the revocation, given first.
// The verdict over merged copies is the same in every order and whether the
// copies come in separate keyrings or in one file.
func TestKeyringMergesCopies(t *testing.T) {
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	opts := &VerifyOptions{Now: func() time.Time { return at.Add(time.Hour) }}
	tests := []struct {
		name   string
		signer string   // secret key file, signs at "at"
		alone  string   // the old copy on its own: verifies
		copies []string // every copy: the verdict
		want   error
	}{
		{"revoked key", "revoked-old.sec.asc", "revoked-old.pub.asc", []string{"revoked-old.pub.asc", "revoked.pub.asc"}, ErrKeyRevoked},
		{"revoked key, secret copies", "revoked-old.sec.asc", "revoked-old.sec.asc", []string{"revoked-old.sec.asc", "revoked.sec.asc", "revoked-old.pub.asc"}, ErrKeyRevoked},
		{"revoked subkey", "subrevoked-old.sec.asc", "subrevoked-old.pub.asc", []string{"subrevoked-old.pub.asc", "subrevoked.pub.asc"}, ErrKeyRevoked},
		// expired.pub.asc expired on 2026-01-01; a newer self-signature
		// in another copy moved that to 2027-01-01.
		{"extended expiry", "expired.sec.asc", "expired-extended.pub.asc", []string{"expired.pub.asc", "expired-extended.pub.asc"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			signed := signedAt(t, tt.signer, at)
			if _, err := Verify(context.Background(), reader(t, signed), readKeys(t, tt.alone), opts); err != nil {
				t.Fatalf("the old copy alone: %v", err)
			}
			for how, trusted := range orderings(t, tt.copies...) {
				_, err := Verify(context.Background(), reader(t, signed), trusted, opts)
				if tt.want == nil && err != nil || !errors.Is(err, tt.want) {
					t.Errorf("%s: got %v, want %v", how, err, tt.want)
				}
			}
		})
	}
	// Without the extension the expired key's signature of 2026-06-01 fails.
	if _, err := Verify(context.Background(), reader(t, signedAt(t, "expired.sec.asc", at)), readKeys(t, "expired.pub.asc"), opts); !errors.Is(err, ErrKeyExpired) {
		t.Errorf("expired key without its extension: got %v, want ErrKeyExpired", err)
	}
	// After the extended expiry, every order fails.
	late := at.AddDate(1, 0, 0)
	for how, trusted := range orderings(t, "expired.pub.asc", "expired-extended.pub.asc") {
		_, err := Verify(context.Background(), reader(t, signedAt(t, "expired.sec.asc", late)), trusted, &VerifyOptions{Now: func() time.Time { return late }})
		if !errors.Is(err, ErrKeyExpired) {
			t.Errorf("%s, signed after the extended expiry: got %v, want ErrKeyExpired", how, err)
		}
	}
}

// The signer judges its own key by the same rule over every copy in its
// key file: an old unrevoked copy beside the revoked one does not sign.
func TestSelectSignerMergesCopies(t *testing.T) {
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		copies []string
		want   error
	}{
		{"old copy alone", []string{"revoked-old.sec.asc"}, nil},
		{"revoked key", []string{"revoked-old.sec.asc", "revoked.pub.asc"}, ErrSignerRevoked},
		{"old subkey copy alone", []string{"subrevoked-old.sec.asc"}, nil},
		{"revoked subkey", []string{"subrevoked-old.sec.asc", "subrevoked.pub.asc"}, ErrSignerRevoked},
		{"expired", []string{"expired.sec.asc"}, ErrSignerExpired},
		{"extended expiry", []string{"expired.sec.asc", "expired-extended.pub.asc"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for how, keys := range orderings(t, tt.copies...) {
				e, err := selectSigner(keys, nil, at)
				if tt.want == nil && err != nil || !errors.Is(err, tt.want) {
					t.Fatalf("%s: got %v, want %v", how, err, tt.want)
				}
				if err != nil {
					continue
				}
				// What it picked signs, and the merged copies verify it.
				signed := signZip(t, buildZip(t), e, at, crypto.SHA256)
				if _, err := Verify(context.Background(), reader(t, signed), keys, &VerifyOptions{Now: func() time.Time { return at }}); err != nil {
					t.Errorf("%s: Verify: %v", how, err)
				}
			}
		})
	}
}

// A merged key keeps every user ID, subkey and signature of each copy.
func TestNewKeyringMerge(t *testing.T) {
	kr := NewKeyring(readKeys(t, "subrevoked-old.pub.asc"), readKeys(t, "subrevoked.sec.asc"), readKeys(t, "ed25519.pub.asc"))
	if kr.Len() != 2 {
		t.Fatalf("%d keys, want 2", kr.Len())
	}
	e := kr.Entities()[0]
	if len(e.Subkeys) != 1 || len(e.Subkeys[0].Revocations) != 1 {
		t.Fatalf("merged key has %d subkeys, revocations %v", len(e.Subkeys), e.Subkeys)
	}
	if !usableSecret(e.PrivateKey) || !usableSecret(e.Subkeys[0].PrivateKey) {
		t.Error("merged key lost the secret copy's key material")
	}
	if len(e.Identities) != 1 {
		t.Errorf("%d identities, want 1", len(e.Identities))
	}
	// The inputs are not modified.
	if old := readKeys(t, "subrevoked-old.pub.asc")[0]; len(old.Subkeys[0].Revocations) != 0 {
		t.Error("input changed")
	}
}

// Issue #11 defect 8: a signature dated before its key existed does not say
// "expired"; it has a sentinel of its own.
func TestSignatureBeforeKeyCreated(t *testing.T) {
	before := created.Add(-24 * time.Hour)
	signed := signedAt(t, "ed25519.sec.asc", before)
	_, err := Verify(context.Background(), reader(t, signed), readKeys(t, "trusted.asc"), nil)
	if !errors.Is(err, ErrKeyNotYetValid) || errors.Is(err, ErrKeyExpired) || strings.Contains(err.Error(), "expired") {
		t.Fatalf("got %v, want ErrKeyNotYetValid and no mention of expiry", err)
	}
	if !strings.Contains(err.Error(), "was created on 2025-01-01") {
		t.Errorf("message %q does not say when the key was created", err)
	}
}

// Issue #11 defect 8: MD5 and RIPEMD-160 signatures say "weak hash,
// rejected", not "no signature packet" (go-crypto skips such packets).
func TestWeakSignatureHashNamed(t *testing.T) {
	signed := signZip(t, buildZip(t), signer(t, "ed25519.sec.asc"), time.Now(), crypto.SHA256)
	sig := signatureOf(t, signed)
	for id, name := range map[byte]string{1: "MD5", 2: "SHA-1", 3: "RIPEMD-160"} {
		t.Run(name, func(t *testing.T) {
			weak := setSignatureHash(t, sig, id)
			_, err := Verify(context.Background(), reader(t, replaceSignature(t, buildZip(t), weak)), readKeys(t, "trusted.asc"), nil)
			if !errors.Is(err, ErrWeakSignatureHash) {
				t.Fatalf("got %v, want ErrWeakSignatureHash", err)
			}
			if !strings.Contains(err.Error(), "weak hash, rejected") || !strings.Contains(err.Error(), strings.ReplaceAll(name, "-", "")) && !strings.Contains(err.Error(), name) {
				t.Errorf("message %q", err)
			}
		})
	}
}

// setSignatureHash rewrites the hash algorithm byte of the signature packet
// in a cleartext message (the signature no longer verifies; the hash is
// checked first).
func setSignatureHash(t *testing.T, msg []byte, id byte) []byte {
	t.Helper()
	i := bytes.Index(msg, []byte("-----BEGIN PGP SIGNATURE-----"))
	blk, err := armor.Decode(bytes.NewReader(msg[i:]))
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(blk.Body)
	p := body.Bytes()
	if p[0] != 0xc2 || p[1] >= 192 || p[2] != 4 {
		t.Fatalf("unexpected packet header % x", p[:4])
	}
	p[5] = id
	var out bytes.Buffer
	out.Write(msg[:i])
	w, _ := armor.Encode(&out, "PGP SIGNATURE", nil)
	w.Write(p)
	w.Close()
	out.WriteByte('\n')
	return out.Bytes()
}

// Issue #11 defect 8: a keyring with text before the armor says so, with
// the line, instead of "tag byte does not have MSB set".
func TestReadKeysTextBeforeArmor(t *testing.T) {
	key := keyFile(t, "ed25519.pub.asc")
	for name, in := range map[string][]byte{
		"comment":   append([]byte("Release key of example.test\nfingerprint: ABCD\n\n"), key...),
		"not a key": []byte("hello\n"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadKeys(bytes.NewReader(in))
			if !errors.Is(err, ErrKeyFormat) || strings.Contains(err.Error(), "MSB") {
				t.Fatalf("got %v, want a clear ErrKeyFormat", err)
			}
			if name == "comment" && !strings.Contains(err.Error(), "text before the armored key block (which starts on line 4)") {
				t.Errorf("message %q", err)
			}
		})
	}
}

func ExampleNewKeyring() {
	old, _ := os.Open("../fixtures/keys/revoked-old.pub.asc")
	defer old.Close()
	cur, _ := os.Open("../fixtures/keys/revoked.pub.asc")
	defer cur.Close()
	a, _ := ReadKeys(old)
	b, _ := ReadKeys(cur)
	kr := NewKeyring(a, b)
	fmt.Println(kr.Len(), "key,", len(kr.Entities()[0].Revocations), "revocation")
	// Output: 1 key, 1 revocation
}

// FuzzKeyringOrder: the verdict on a signature depends on which keys the
// trusted set holds, never on their order or on repeated copies.
func FuzzKeyringOrder(f *testing.F) {
	files := []string{"revoked-old.pub.asc", "revoked.pub.asc", "subrevoked-old.pub.asc", "subrevoked.pub.asc",
		"expired.pub.asc", "expired-extended.pub.asc", "ed25519.pub.asc", "revoked-old.sec.asc"}
	keys := make([]openpgp.EntityList, len(files))
	for i, name := range files {
		keys[i] = readKeys(f, name)
	}
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	opts := &VerifyOptions{Now: func() time.Time { return at }}
	var signed [][]byte
	for _, s := range []string{"revoked-old.sec.asc", "subrevoked-old.sec.asc", "expired.sec.asc", "ed25519.sec.asc"} {
		signed = append(signed, signatureOf(f, signedAt(f, s, at)))
	}
	verdict := func(sig []byte, trusted openpgp.EntityList) string {
		_, err := verifyCleartext(sig, trusted, opts)
		for _, s := range []error{ErrKeyRevoked, ErrKeyExpired, ErrKeyNotYetValid, ErrUnknownSigner, ErrBadSignature} {
			if errors.Is(err, s) {
				return s.Error()
			}
		}
		if err != nil {
			return "other: " + err.Error()
		}
		return "ok"
	}
	f.Add([]byte{0, 1})
	f.Add([]byte{1, 0})
	f.Add([]byte{3, 2, 2, 5, 4})
	f.Add([]byte{7, 1, 6})
	f.Fuzz(func(t *testing.T, order []byte) {
		if len(order) == 0 || len(order) > 16 {
			return
		}
		var trusted openpgp.EntityList
		set := map[int]bool{}
		for _, b := range order {
			i := int(b) % len(files)
			trusted = append(trusted, keys[i]...)
			set[i] = true
		}
		var canonical openpgp.EntityList
		for i := range files {
			if set[i] {
				canonical = append(canonical, keys[i]...)
			}
		}
		for i, sig := range signed {
			if got, want := verdict(sig, trusted), verdict(sig, canonical); got != want {
				t.Fatalf("signature %d, keys %v: %s, but %s in file order", i, order, got, want)
			}
		}
	})
}

// poisoned returns the key file's packets with a copy of its first user ID
// certification appended to that user ID, one byte of the copy's signature
// flipped: a packet anyone can add to a key on a keyserver that does not
// check what it stores; then the packets of the key in file also, in the
// same block. armored: as an armored block, else binary.
func poisoned(t testing.TB, name, also string, armored bool) []byte {
	t.Helper()
	blk, err := armor.Decode(bytes.NewReader(keyFile(t, name)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	or := packet.NewOpaqueReader(blk.Body)
	done := false
	prevUID := false
	for {
		op, err := or.Next()
		if err != nil {
			break
		}
		op.Serialize(&out)
		if op.Tag == 2 && prevUID && !done {
			bad := *op
			bad.Contents = append([]byte{}, op.Contents...)
			bad.Contents[len(bad.Contents)-1] ^= 0x55
			bad.Serialize(&out)
			done = true
		}
		prevUID = op.Tag == 13 || prevUID && op.Tag == 2
	}
	if !done {
		t.Fatalf("%s: no user ID certification", name)
	}
	ablk, err := armor.Decode(bytes.NewReader(keyFile(t, also)))
	if err != nil {
		t.Fatal(err)
	}
	out.ReadFrom(ablk.Body)
	if !armored {
		return out.Bytes()
	}
	var a bytes.Buffer
	w, _ := armor.Encode(&a, blk.Type, nil)
	w.Write(out.Bytes())
	w.Close()
	a.WriteByte('\n')
	return a.Bytes()
}

// A copy of a trusted key that cannot be read (here: a forged certification
// appended to the revoked copy) was skipped without a word, so the older,
// unrevoked copy beside it verified: every copy of a key must be read, or
// the keyring is refused, naming the key. Keys whose primary key cannot be
// read at all (no copy of them could verify) are still skipped.
func TestKeyringUnreadableCopyRefused(t *testing.T) {
	at := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	opts := &VerifyOptions{Now: func() time.Time { return at.Add(time.Hour) }}
	signed := signedAt(t, "revoked-old.sec.asc", at)
	for _, armored := range []bool{true, false} {
		bad := poisoned(t, "revoked.pub.asc", "ed25519.pub.asc", armored)
		old := keyFile(t, "revoked-old.pub.asc")
		if !armored {
			blk, _ := armor.Decode(bytes.NewReader(old))
			var b bytes.Buffer
			b.ReadFrom(blk.Body)
			old = b.Bytes()
		}
		for how, ring := range map[string][]byte{"old first": append(append([]byte{}, old...), bad...), "poisoned first": append(append([]byte{}, bad...), old...)} {
			el, err := ReadKeys(bytes.NewReader(ring))
			if err == nil {
				_, err = Verify(context.Background(), reader(t, signed), el, opts)
				t.Errorf("armored %v, %s: the keyring was read and Verify says %v; want ErrKeyFormat", armored, how, err)
				continue
			}
			if !errors.Is(err, ErrKeyFormat) || !strings.Contains(err.Error(), "could not be read") {
				t.Errorf("armored %v, %s: got %v, want ErrKeyFormat naming the unreadable copy", armored, how, err)
			}
		}
	}
}

// FuzzReadKeys: whatever binary keyring ReadKeys accepts, it holds one key
// for each primary key in it that can be read and can sign: no copy of a
// key (which might carry its revocation) is dropped without a word.
func FuzzReadKeys(f *testing.F) {
	binary := func(name string) []byte {
		blk, err := armor.Decode(bytes.NewReader(keyFile(f, name)))
		if err != nil {
			f.Fatal(err)
		}
		var b bytes.Buffer
		b.ReadFrom(blk.Body)
		return b.Bytes()
	}
	for _, n := range []string{"revoked-old.pub.asc", "subrevoked.pub.asc", "ed25519.sec.asc", "rsa3072.pub.asc"} {
		f.Add(binary(n))
	}
	f.Add(append(binary("revoked-old.pub.asc"), binary("revoked.pub.asc")...))
	f.Add(append(binary("revoked-old.pub.asc"), poisoned(f, "revoked.pub.asc", "ed25519.pub.asc", false)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		el, err := ReadKeys(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrKeyFormat) {
				t.Fatalf("error without ErrKeyFormat: %v", err)
			}
			return
		}
		if bytes.HasPrefix(bytes.TrimSpace(data), []byte("-----BEGIN ")) {
			return
		}
		primaries := 0
		pr := packet.NewReader(bytes.NewReader(data))
		for {
			p, err := pr.Next()
			if err != nil {
				break
			}
			switch k := p.(type) {
			case *packet.PublicKey:
				if !k.IsSubkey && k.PubKeyAlgo.CanSign() {
					primaries++
				}
			case *packet.PrivateKey:
				if !k.IsSubkey && k.PubKeyAlgo.CanSign() {
					primaries++
				}
			}
		}
		if len(el) != primaries {
			t.Fatalf("%d keys read, %d readable signing primary keys in the keyring", len(el), primaries)
		}
	})
}
