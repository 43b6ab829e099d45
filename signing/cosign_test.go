package signing

import (
	"bytes"
	"context"
	"crypto"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/cloud-assembly/assemble/assembly"
	"github.com/klauspost/compress/zip"
)

// cosignTime is when the co-signing tests sign: after every fixture key was
// made (2025-01-01), before the "expired" key expired (2026-01-01).
var cosignTime = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func at(t time.Time) *SignOptions {
	return &SignOptions{Now: func() time.Time { return t }, Rand: rand.New(rand.NewSource(t.UnixNano()))}
}

// sealed seals b with opts and the signers, failing the test on error.
func sealed(t testing.TB, b []byte, opts *SignOptions, signers ...Signer) []byte {
	t.Helper()
	var out bytes.Buffer
	if _, err := Seal(t.Context(), &out, reader(t, b), signers, opts); err != nil {
		t.Fatalf("Seal: %v", err)
	}
	return out.Bytes()
}

// cosigned signs the test assembly with the first key at cosignTime, then
// adds each other key's signature one hour after the one before.
func cosigned(t testing.TB, keys ...string) []byte {
	t.Helper()
	b := sealed(t, buildZip(t), at(cosignTime), Keys(signer(t, keys[0])))
	for i, k := range keys[1:] {
		o := at(cosignTime.Add(time.Duration(i+1) * time.Hour))
		o.Add = true
		b = sealed(t, b, o, Keys(signer(t, k)))
	}
	return b
}

func verifyAt(t testing.TB, b []byte, trusted openpgp.EntityList, now time.Time, pol Policy) (*Verified, error) {
	t.Helper()
	return Verify(context.Background(), reader(t, b), trusted, &VerifyOptions{Now: func() time.Time { return now }, Policy: pol})
}

func fpr(t testing.TB, file string) string { return fingerprint(readKeys(t, file)[0]) }

// Two and three co-signers, each adding a signature hours after the first,
// against thresholds and required signers.
func TestCosigners(t *testing.T) {
	trusted := readKeys(t, "trusted.asc")
	later := cosignTime.Add(24 * time.Hour)
	two := cosigned(t, "ed25519.sec.asc", "rsa3072.sec.asc")
	three := cosigned(t, "ed25519.sec.asc", "rsa3072.sec.asc", "subkey.sec.asc")
	withUntrusted := cosigned(t, "ed25519.sec.asc", "untrusted.sec.asc")
	untrustedFirst := cosigned(t, "untrusted.sec.asc", "rsa3072.sec.asc")
	// Seal refuses a key that signed already (TestSealRefusesASignerTwice):
	// the second signature by one key is added without it.
	twiceOneKey := appendRaw(t, cosigned(t, "ed25519.sec.asc"), signer(t, "ed25519.sec.asc").PrivateKey, cosignTime.Add(time.Hour))
	ed, rsa, sub, pass := fpr(t, "ed25519.pub.asc"), fpr(t, "rsa3072.pub.asc"), fpr(t, "subkey.pub.asc"), fpr(t, "passphrase.pub.asc")
	for _, tt := range []struct {
		name    string
		b       []byte
		pol     Policy
		want    error
		signers []string // distinct trusted signers, in order
		sigs    int
	}{
		{"two co-signers, two needed", two, Policy{MinSigners: 2}, nil, []string{ed, rsa}, 2},
		{"three co-signers, three needed", three, Policy{MinSigners: 3}, nil, []string{ed, rsa, sub}, 3},
		{"three co-signers, default policy", three, Policy{}, nil, []string{ed, rsa, sub}, 3},
		{"two co-signers, three needed", two, Policy{MinSigners: 3}, ErrThreshold, nil, 2},
		{"required signers present", three, Policy{Signers: []string{sub, strings.ToLower(ed)}}, nil, []string{ed, rsa, sub}, 3},
		{"required signer missing", two, Policy{MinSigners: 2, Signers: []string{ed, pass}}, ErrRequiredSigner, nil, 2},
		{"untrusted co-signer does not count", withUntrusted, Policy{MinSigners: 2}, ErrThreshold, nil, 2},
		{"untrusted co-signer, one needed", withUntrusted, Policy{}, nil, []string{ed}, 2},
		{"untrusted first signer", untrustedFirst, Policy{}, nil, []string{rsa}, 2},
		{"one key twice counts once", twiceOneKey, Policy{MinSigners: 2}, ErrThreshold, nil, 2},
		{"algorithm allowed", two, Policy{Algorithms: []crypto.Hash{crypto.SHA256, crypto.SHA512}}, nil, []string{ed, rsa}, 2},
		{"algorithm not allowed", two, Policy{Algorithms: []crypto.Hash{crypto.SHA512}}, ErrAlgorithmNotAllowed, nil, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := verifyAt(t, tt.b, trusted, later, tt.pol)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			var sigs []Signature
			var res PolicyResult
			if err != nil {
				if !errors.Is(err, ErrVerification) {
					t.Errorf("%v does not wrap ErrVerification", err)
				}
				var se *SignaturesError
				if !errors.As(err, &se) {
					t.Fatalf("%T is not a *SignaturesError", err)
				}
				sigs, res = se.Signatures, se.Policy
			} else {
				sigs, res = v.Signatures(), v.Policy()
				if !slices.Equal(res.Signers, tt.signers) || !res.Met {
					t.Errorf("signers %v (met %v), want %v", res.Signers, res.Met, tt.signers)
				}
				if v.Fingerprint() != tt.signers[0] {
					t.Errorf("Signer %s, want the first trusted %s", v.Fingerprint(), tt.signers[0])
				}
			}
			if len(sigs) != tt.sigs {
				t.Fatalf("%d signatures reported, want %d", len(sigs), tt.sigs)
			}
			for _, s := range sigs {
				if len(s.KeyID) != 16 || s.Time.IsZero() {
					t.Errorf("signature %+v: no key ID or time", s)
				}
				if s.Trusted != (s.Err == nil) || (s.Trusted && (!s.Valid || s.UserID == "")) {
					t.Errorf("signature %+v: inconsistent", s)
				}
				if !s.Trusted && !errors.Is(s.Err, ErrUnknownSigner) {
					t.Errorf("untrusted signature says %v, want ErrUnknownSigner", s.Err)
				}
			}
		})
	}
}

// A signature by a key in the known (untrusted) keys is named, with its
// user ID and validity, as gpg --verify names a key it does not trust; one
// nobody holds is named by the key ID and fingerprint it carries.
func TestUnknownSignerNamed(t *testing.T) {
	b := cosigned(t, "untrusted.sec.asc")
	trusted := readKeys(t, "ed25519.pub.asc")
	u := readKeys(t, "untrusted.pub.asc")[0]
	_, err := verifyAt(t, b, trusted, cosignTime, Policy{})
	if !errors.Is(err, ErrUnknownSigner) {
		t.Fatalf("got %v, want ErrUnknownSigner", err)
	}
	for _, want := range []string{fmt.Sprintf("key ID %016X", u.PrimaryKey.KeyId), fmt.Sprintf("fingerprint %X", u.PrimaryKey.Fingerprint)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	_, err = Verify(context.Background(), reader(t, b), trusted, &VerifyOptions{Now: func() time.Time { return cosignTime }, Known: readKeys(t, "untrusted.pub.asc")})
	var se *SignaturesError
	if !errors.Is(err, ErrUnknownSigner) || !errors.As(err, &se) {
		t.Fatalf("got %v, want ErrUnknownSigner", err)
	}
	s := se.Signatures[0]
	if !s.Known || !s.Valid || s.Trusted || s.UserID != "Test Untrusted <untrusted@example.test>" || s.Fingerprint != fingerprint(u) {
		t.Errorf("signature %+v", s)
	}
	if !strings.Contains(err.Error(), `"Test Untrusted <untrusted@example.test>"`) {
		t.Errorf("%q does not name the user ID", err)
	}
}

// newKey makes an Ed25519 signing key created at created.
func newKey(t testing.TB, name string, created time.Time) *openpgp.Entity {
	t.Helper()
	e, err := openpgp.NewEntity(name, "", strings.ToLower(name)+"@example.test", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA, Time: func() time.Time { return created }})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// publicOnly returns e's public key, as an export would give it.
func publicOnly(t testing.TB, e *openpgp.Entity) openpgp.EntityList {
	t.Helper()
	var buf bytes.Buffer
	if err := e.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	el, err := openpgp.ReadKeyRing(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return el
}

// appendRaw adds to signed's signature.asc a signature made by k at t over
// the same text, skipping every check Seal makes.
func appendRaw(tb testing.TB, signed []byte, k *packet.PrivateKey, t time.Time) []byte {
	tb.Helper()
	m, err := parseMessage(signatureOf(tb, signed))
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := clearsign.EncodeMulti(&buf, []*packet.PrivateKey{k}, &packet.Config{Time: func() time.Time { return t }})
	if err != nil {
		tb.Fatal(err)
	}
	w.Write(m.plaintext)
	w.Close()
	n, err := parseMessage(buf.Bytes())
	if err != nil {
		tb.Fatal(err)
	}
	all := &message{sigs: append(m.sigs, n.sigs...)}
	msg, err := writeMessage(m.plaintext, all.hashList(), append(m.raw, n.raw...))
	if err != nil {
		tb.Fatal(err)
	}
	return replaceSignature(tb, signed, msg)
}

// The spec's rule that a key be valid at the attestation's timestamp holds
// for co-signers: a co-signature may come hours later, but not from a key
// made after the attestation, nor from a key expired by then; and no
// signature may predate the attestation.
func TestCosignTimes(t *testing.T) {
	ed := signer(t, "ed25519.sec.asc")
	base := sealed(t, buildZip(t), at(cosignTime), Keys(ed))

	// A key created an hour after the attestation, co-signing an hour later.
	young := newKey(t, "Young", cosignTime.Add(time.Hour))
	o := at(cosignTime.Add(2 * time.Hour))
	o.Add = true
	if _, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, base), []Signer{Keys(young)}, o); !errors.Is(err, ErrNoSigningKey) || !strings.Contains(err.Error(), "after the signature time") {
		t.Errorf("Seal --add by a key younger than the attestation: got %v, want ErrNoSigningKey", err)
	}
	forced := appendRaw(t, base, young.PrivateKey, cosignTime.Add(2*time.Hour))
	trusted := append(readKeys(t, "trusted.asc"), publicOnly(t, young)...)
	if _, err := verifyAt(t, forced, trusted, cosignTime.Add(3*time.Hour), Policy{}); !errors.Is(err, ErrKeyNotYetValid) || !strings.Contains(err.Error(), "attestation's timestamp") {
		t.Errorf("Verify: got %v, want ErrKeyNotYetValid at the attestation's timestamp", err)
	}

	// The "expired" key expired on 2026-01-01: an attestation made the day
	// before may be co-signed with it that day, not the day after.
	eve := time.Date(2025, 12, 31, 20, 0, 0, 0, time.UTC)
	old := sealed(t, buildZip(t), at(eve), Keys(ed))
	exp := readKeys(t, "expired.sec.asc")[0]
	o = at(eve.Add(2 * time.Hour))
	o.Add = true
	ok := sealed(t, old, o, Keys(exp))
	if v, err := verifyAt(t, ok, readKeys(t, "trusted.asc"), eve.Add(3*time.Hour), Policy{MinSigners: 2}); err != nil || len(v.Policy().Signers) != 2 {
		t.Errorf("co-signed before expiry: %v", err)
	}
	o = at(eve.Add(6 * time.Hour))
	o.Add = true
	if _, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, old), []Signer{Keys(exp)}, o); !errors.Is(err, ErrSignerExpired) {
		t.Errorf("Seal --add with an expired key: got %v, want ErrSignerExpired", err)
	}
	late := appendRaw(t, old, exp.PrivateKey, eve.Add(6*time.Hour))
	if _, err := verifyAt(t, late, readKeys(t, "trusted.asc"), eve.Add(7*time.Hour), Policy{}); !errors.Is(err, ErrKeyExpired) {
		t.Errorf("Verify of a co-signature after expiry: got %v, want ErrKeyExpired", err)
	}

	// A signature an hour before the attestation.
	early := appendRaw(t, base, readKeys(t, "rsa3072.sec.asc")[0].PrivateKey, cosignTime.Add(-time.Hour))
	if _, err := verifyAt(t, early, readKeys(t, "trusted.asc"), cosignTime, Policy{}); !errors.Is(err, ErrTimestamp) {
		t.Errorf("signature before the attestation: got %v, want ErrTimestamp", err)
	}
	// A signature from the future.
	future := appendRaw(t, base, readKeys(t, "rsa3072.sec.asc")[0].PrivateKey, cosignTime.Add(time.Hour))
	if _, err := verifyAt(t, future, readKeys(t, "trusted.asc"), cosignTime, Policy{}); !errors.Is(err, ErrTimestamp) {
		t.Errorf("signature from the future: got %v, want ErrTimestamp", err)
	}
	// A bad co-signature by a trusted key fails everything, even with the
	// threshold met by the others.
	bad := bytes.Replace(signatureOf(t, cosigned(t, "ed25519.sec.asc", "rsa3072.sec.asc", "subkey.sec.asc")), []byte(`"algorithm": "SHA256"`), []byte(`"algorithm": "SHA512"`), 1)
	if _, err := verifyCleartext(bad, readKeys(t, "trusted.asc"), &VerifyOptions{Now: func() time.Time { return cosignTime.Add(3 * time.Hour) }}); !errors.Is(err, ErrBadSignature) {
		t.Errorf("edited text under three signatures: got %v, want ErrBadSignature", err)
	}
}

// The verdict on a message holding several signature packets is a rule:
// the distinct trusted keys among the signers, compared with the policy;
// it does not depend on the order of the packets.
func TestCosignRule(t *testing.T) {
	files := []string{"ed25519", "rsa3072", "subkey", "passphrase", "untrusted"}
	secret := map[string]*openpgp.Entity{}
	public := map[string]openpgp.EntityList{}
	for _, f := range files {
		secret[f] = signer(t, f+".sec.asc")
		public[f] = readKeys(t, f+".pub.asc")
	}
	a, err := Attest(t.Context(), reader(t, buildZip(t)), at(cosignTime))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := a.Marshal()
	text := bytes.TrimSuffix(body, []byte("\n"))
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 150; i++ {
		var ents []*openpgp.Entity
		signed := map[string]bool{}
		for n := 1 + r.Intn(4); n > 0; n-- {
			f := files[r.Intn(len(files))]
			ents = append(ents, secret[f])
			signed[f] = true
		}
		var trusted openpgp.EntityList
		isTrusted := map[string]bool{}
		for _, f := range files[:4] {
			if r.Intn(2) == 0 {
				trusted = append(trusted, public[f]...)
				isTrusted[f] = true
			}
		}
		if len(trusted) == 0 {
			trusted, isTrusted["ed25519"] = public["ed25519"], true
		}
		pol := Policy{MinSigners: 1 + r.Intn(3)}
		var want []string
		for _, f := range files {
			if signed[f] && isTrusted[f] {
				want = append(want, fingerprint(public[f][0]))
			}
		}
		msg, _, err := Keys(ents...).ClearSign(t.Context(), text, at(cosignTime))
		if err != nil {
			t.Fatal(err)
		}
		m, err := parseMessage(msg)
		if err != nil {
			t.Fatal(err)
		}
		for _, perm := range [][]int{identity(len(m.raw)), r.Perm(len(m.raw))} {
			var raw [][]byte
			for _, j := range perm {
				raw = append(raw, m.raw[j])
			}
			msg, _ := writeMessage(m.plaintext, m.hashList(), raw)
			v, err := verifyCleartext(msg, trusted, &VerifyOptions{Now: func() time.Time { return cosignTime }, Policy: pol})
			switch {
			case len(want) == 0:
				if !errors.Is(err, ErrUnknownSigner) {
					t.Fatalf("case %d: no trusted signer: got %v, want ErrUnknownSigner", i, err)
				}
			case len(want) < pol.MinSigners:
				if !errors.Is(err, ErrThreshold) {
					t.Fatalf("case %d: %d trusted signers, %d needed: got %v, want ErrThreshold", i, len(want), pol.MinSigners, err)
				}
			default:
				if err != nil {
					t.Fatalf("case %d: %v", i, err)
				}
				got := slices.Clone(v.Policy().Signers)
				slices.Sort(got)
				slices.Sort(want)
				if !slices.Equal(got, want) || len(v.Signatures()) != len(ents) {
					t.Fatalf("case %d: signers %v, want %v (%d signatures of %d)", i, got, want, len(v.Signatures()), len(ents))
				}
			}
		}
	}
}

func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// extSign clear-signs a's text as gpg --clearsign signs a file holding
// it: the final newline is not part of the signed text.
func extSign(t testing.TB, a *Attestation, k *packet.PrivateKey, now time.Time) []byte {
	t.Helper()
	body, err := a.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := clearsign.Encode(&buf, k, &packet.Config{Time: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(bytes.TrimSuffix(body, []byte("\n")))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// changeFile rebuilds the test assembly with one file's content changed.
func changeFile(t testing.TB, b []byte, name, body string) []byte {
	t.Helper()
	r, copyRaw := reader(t, b), rawCopier(t, b)
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range contentFiles(r) {
		if f.Name() == name {
			w, _ := zw.Create(name)
			w.Write([]byte(body))
			continue
		}
		if err := copyRaw(zw, f.Name()); err != nil {
			t.Fatal(err)
		}
	}
	zw.Close()
	return out.Bytes()
}

// An attestation signed elsewhere is attached when it matches the archive
// file for file, and refused, saying which check failed, when it does not.
func TestAttachExternalSignature(t *testing.T) {
	b := buildZip(t)
	a, err := Attest(t.Context(), reader(t, b), at(cosignTime))
	if err != nil {
		t.Fatal(err)
	}
	rsa := readKeys(t, "rsa3072.sec.asc")[0]
	ext := rawClearSign(t, a, rsa.PrivateKey, cosignTime, crypto.SHA256)
	trusted := readKeys(t, "trusted.asc")

	o := at(cosignTime)
	o.Signature = ext
	s := sealed(t, b, o)
	if v, err := verifyAt(t, s, trusted, cosignTime, Policy{}); err != nil || v.Fingerprint() != fingerprint(rsa) {
		t.Fatalf("attached: %v", err)
	}
	o.Keyring = readKeys(t, "rsa3072.pub.asc")
	sealed(t, b, o)

	stale := changeFile(t, b, "stacks/app.yaml", "Resources:\n  Bucket:\n    Type: AWS::SQS::Queue\n")
	other := changeFile(t, replaceSignature(t, b, nil), "assets/empty.txt", "")
	other = rebuild(t, other, nil, addFile("extra.yaml", "x: 1"), nil)
	for _, tt := range []struct {
		name string
		b    []byte
		opts func(*SignOptions)
		want []error
	}{
		{"stale attestation", stale, nil, []error{ErrAttestationMismatch, ErrDigestMismatch}},
		{"another archive", other, nil, []error{ErrAttestationMismatch, ErrUnlisted}},
		{"untrusted under the keyring", b, func(o *SignOptions) { o.Keyring = readKeys(t, "ed25519.pub.asc") }, []error{ErrUnknownSigner}},
		{"detached signature", b, func(o *SignOptions) {
			var buf bytes.Buffer
			openpgp.ArmoredDetachSignText(&buf, rsa, bytes.NewReader(ext), nil)
			o.Signature = buf.Bytes()
		}, []error{ErrMalformedSignature}},
		{"text around", b, func(o *SignOptions) { o.Signature = append([]byte("hello\n"), ext...) }, []error{ErrUnsignedContent}},
		{"signed before the attestation", b, func(o *SignOptions) {
			o.Signature = rawClearSign(t, a, rsa.PrivateKey, a.Timestamp.Add(-MaxClockSkew-time.Second), crypto.SHA256)
		}, []error{ErrTimestamp}},
		{"add on an unsigned assembly", b, func(o *SignOptions) { o.Add = true }, []error{ErrNotSigned}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := at(cosignTime)
			o.Signature = ext
			if tt.opts != nil {
				tt.opts(o)
			}
			_, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, tt.b), nil, o)
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("got %v, want %v", err, w)
				}
			}
		})
	}

	// Issue 19 item 4: the first signature may come any time after the
	// attestation (attested in CI, signed days later, offline).
	for _, later := range []time.Duration{MaxClockSkew + time.Second, time.Hour, 30 * 24 * time.Hour} {
		o := at(cosignTime.Add(later))
		o.Signature = rawClearSign(t, a, rsa.PrivateKey, cosignTime.Add(later), crypto.SHA256)
		s := sealed(t, b, o)
		if _, err := verifyAt(t, s, trusted, cosignTime.Add(later), Policy{}); err != nil {
			t.Errorf("signed %v after the attestation: %v", later, err)
		}
	}

	// With Add, an external co-signature over the same attestation joins the
	// signatures; one over another attestation is refused.
	signed := sealed(t, b, at(cosignTime), Keys(signer(t, "ed25519.sec.asc")))
	m, _ := parseMessage(signatureOf(t, signed))
	a2, _ := ParseAttestation(m.plaintext)
	o = at(cosignTime.Add(time.Hour))
	o.Add, o.Signature = true, extSign(t, a2, rsa.PrivateKey, cosignTime.Add(time.Hour))
	both := sealed(t, signed, o)
	if v, err := verifyAt(t, both, trusted, cosignTime.Add(time.Hour), Policy{MinSigners: 2}); err != nil || len(v.Signatures()) != 2 {
		t.Fatalf("external co-signature: %v", err)
	}
	a3, err := Attest(t.Context(), reader(t, b), at(cosignTime.Add(time.Minute)))
	if err != nil || bytes.Equal(a3.Nonce, a2.Nonce) {
		t.Fatalf("another attestation: %v", err)
	}
	o.Signature = extSign(t, a3, rsa.PrivateKey, cosignTime.Add(time.Hour))
	if _, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, signed), nil, o); !errors.Is(err, ErrAttestationMismatch) {
		t.Errorf("co-signature over another attestation: got %v, want ErrAttestationMismatch", err)
	}
}

// A seal adds signatures by other keys only: a key (or another subkey of
// its primary key) that already signed the attestation, earlier or in the
// same seal, is refused whichever way it signs. Its second signature would not count, yet "2 signatures" reads as two
// signers.
func TestSealRefusesASignerTwice(t *testing.T) {
	ed := signer(t, "ed25519.sec.asc")
	rsa := signer(t, "rsa3072.sec.asc")
	one := cosigned(t, "ed25519.sec.asc")
	m, err := parseMessage(signatureOf(t, one))
	if err != nil {
		t.Fatal(err)
	}
	a, err := ParseAttestation(m.plaintext)
	if err != nil {
		t.Fatal(err)
	}
	later := cosignTime.Add(time.Hour)
	twice := func(k *packet.PrivateKey) []byte {
		var buf bytes.Buffer
		w, err := clearsign.EncodeMulti(&buf, []*packet.PrivateKey{k, k}, &packet.Config{Time: func() time.Time { return cosignTime }})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := a.Marshal()
		w.Write(bytes.TrimSuffix(body, []byte("\n")))
		w.Close()
		return buf.Bytes()
	}
	for _, tt := range []struct {
		name    string
		b       []byte
		signers []Signer
		opts    func(*SignOptions)
	}{
		{"add by the key that signed", one, []Signer{Keys(ed)}, func(o *SignOptions) { o.Add = true }},
		{"add by it among others", one, []Signer{Keys(rsa, ed)}, func(o *SignOptions) { o.Add = true }},
		{"add it from a second signer", one, []Signer{Keys(rsa), Keys(rsa)}, func(o *SignOptions) { o.Add = true }},
		{"add an external signature by it", one, nil, func(o *SignOptions) { o.Add, o.Signature = true, extSign(t, a, ed.PrivateKey, later) }},
		{"add an external signature by it, its key at hand", one, nil, func(o *SignOptions) {
			o.Add, o.Signature, o.Keyring = true, extSign(t, a, ed.PrivateKey, later), readKeys(t, "ed25519.pub.asc")
		}},
		{"one key twice in one seal", buildZip(t), []Signer{Keys(ed, ed)}, nil},
		{"an external message signed twice by one key", buildZip(t), nil, func(o *SignOptions) {
			o.Signature, o.Now = twice(rsa.PrivateKey), func() time.Time { return cosignTime }
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := at(later)
			if tt.opts != nil {
				tt.opts(o)
			}
			var out bytes.Buffer
			if _, err := Seal(t.Context(), &out, reader(t, tt.b), tt.signers, o); !errors.Is(err, ErrAlreadySigned) {
				t.Errorf("got %v, want ErrAlreadySigned", err)
			}
		})
	}
	// Another key still co-signs.
	o := at(later)
	o.Add = true
	sealed(t, one, o, Keys(rsa))
}

// Seal --add keeps every entry and the earlier signatures byte for byte.
func TestAddKeepsEntriesAndSignatures(t *testing.T) {
	one := cosigned(t, "ed25519.sec.asc")
	two := cosigned(t, "ed25519.sec.asc", "rsa3072.sec.asc")
	r1 := reader(t, one)
	for _, f := range contentFiles(r1) {
		if !bytes.Equal(rawBytes(t, one, f.Name()), rawBytes(t, two, f.Name())) {
			t.Errorf("%s changed", f.Name())
		}
	}
	m1, _ := parseMessage(signatureOf(t, one))
	m2, _ := parseMessage(signatureOf(t, two))
	if len(m2.raw) != 2 || !bytes.Equal(m1.raw[0], m2.raw[0]) || !bytes.Equal(m1.plaintext, m2.plaintext) {
		t.Errorf("the first signature or the attestation changed")
	}
}

// A key file holding several secret keys needs a choice, made as gpg
// --local-user makes it; an ambiguous or unmatched choice is refused.
func TestSelectSigners(t *testing.T) {
	keys := readKeyBytes(t, "ed25519.sec.asc", "rsa3072.sec.asc", "subkey.sec.asc", "passphrase.sec.asc")
	now := cosignTime
	if _, err := selectSigners(keys, nil, nil, now); !errors.Is(err, ErrAmbiguousKey) {
		t.Errorf("no choice among four keys: got %v, want ErrAmbiguousKey", err)
	}
	if _, err := selectSigner(keys, nil, now); !errors.Is(err, ErrAmbiguousKey) {
		t.Errorf("SelectSigner among four keys: got %v, want ErrAmbiguousKey", err)
	}
	for _, f := range []string{"ed25519", "rsa3072", "subkey", "passphrase"} {
		e := readKeys(t, f+".pub.asc")[0]
		ids := []string{fingerprint(e), strings.ToLower(fingerprint(e)), "0x" + fingerprint(e),
			fmt.Sprintf("%016X", e.PrimaryKey.KeyId), fmt.Sprintf("%08X", uint32(e.PrimaryKey.KeyId)),
			"<" + f + "@example.test>", "@" + f, UserID(e), "=" + UserID(e), strings.ToUpper(f + "@EXAMPLE.test"),
			spacedFingerprint(fingerprint(e))}
		for _, sk := range e.Subkeys {
			ids = append(ids, fmt.Sprintf("%X", sk.PublicKey.Fingerprint), fmt.Sprintf("%016X!", sk.PublicKey.KeyId))
		}
		for _, id := range ids {
			got, err := selectSigners(keys, []string{id}, []byte(testPassphrase), now)
			if err != nil || len(got) != 1 || fingerprint(got[0]) != fingerprint(e) {
				t.Errorf("--local-user %q: got %v, %v; want %s", id, got, err, fingerprint(e))
			}
		}
	}
	keys = readKeyBytes(t, "ed25519.sec.asc", "rsa3072.sec.asc", "subkey.sec.asc", "passphrase.sec.asc")
	for _, tt := range []struct {
		ids  []string
		want error
	}{
		{[]string{"Test Signer"}, ErrAmbiguousKey},
		{[]string{"example.test"}, ErrAmbiguousKey},
		{[]string{"nobody@example.test"}, ErrNoMatchingKey},
		{[]string{"DEADBEEF"}, ErrNoMatchingKey},
		{[]string{"=Test Signer RSA"}, ErrNoMatchingKey},
		// gpg: "Invalid user ID"; a substring "" would match every key.
		{[]string{""}, ErrNoMatchingKey},
		{[]string{" "}, ErrNoMatchingKey},
		{[]string{"passphrase@example.test"}, ErrPassphraseNeeded},
	} {
		if _, err := selectSigners(keys, tt.ids, nil, now); !errors.Is(err, tt.want) {
			t.Errorf("--local-user %q: got %v, want %v", tt.ids, err, tt.want)
		}
	}
	got, err := selectSigners(keys, []string{"rsa3072", "ed25519", "RSA"}, nil, now)
	if err != nil || len(got) != 2 || UserID(got[0]) != "Test Signer RSA <rsa3072@example.test>" {
		t.Errorf("two choices (one repeated): %v, %v", got, err)
	}
	// One usable key among unusable ones needs no choice.
	if e, err := selectSigner(readKeyBytes(t, "expired.sec.asc", "ed25519.sec.asc", "rsa3072.pub.asc"), nil, time.Now()); err != nil || !strings.Contains(UserID(e), "Ed25519") {
		t.Errorf("one usable key: %v, %v", e, err)
	}
}

// spacedFingerprint writes a v4 fingerprint as gpg --fingerprint prints
// it: "ED62 6527 FC3F 1051 786A  51E0 557D 46D2 FE04 95B7".
func spacedFingerprint(fp string) string {
	var b strings.Builder
	for i := 0; i < len(fp); i += 4 {
		if i == len(fp)/2 {
			b.WriteByte(' ')
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fp[i:min(i+4, len(fp))])
	}
	return b.String()
}

// Signing with several keys at once writes one block with a signature
// packet per key, as gpg --clearsign -u A -u B does.
func TestSignWithSeveralKeys(t *testing.T) {
	b := sealed(t, buildZip(t), at(cosignTime), Keys(signer(t, "ed25519.sec.asc"), signer(t, "rsa3072.sec.asc")))
	v, err := verifyAt(t, b, readKeys(t, "trusted.asc"), cosignTime, Policy{MinSigners: 2})
	if err != nil || len(v.Signatures()) != 2 {
		t.Fatalf("%v", err)
	}
	if n := bytes.Count(signatureOf(t, b), []byte("-----BEGIN PGP SIGNATURE-----")); n != 1 {
		t.Errorf("%d signature blocks, want 1", n)
	}
}

// What writeMessage writes, parseMessage reads back: the same text, the
// same canonical signed bytes (canonicalText), the same packets.
func TestWriteMessageRoundTrip(t *testing.T) {
	m, err := parseMessage(signatureOf(t, cosigned(t, "ed25519.sec.asc", "rsa3072.sec.asc")))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{string(m.plaintext), "a\n- b\n-----BEGIN PGP SIGNATURE-----\nc  \t\nd", "x"} {
		msg, err := writeMessage([]byte(text), m.hashList(), m.raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseMessage(msg)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		want := strings.TrimRight(strings.ReplaceAll(text, "  \t\n", "\n"), " \t")
		if string(got.plaintext) != want || !bytes.Equal(got.text, canonicalText([]byte(text))) || len(got.raw) != 2 {
			t.Errorf("%q: read back %q (%q)", text, got.plaintext, got.text)
		}
	}
}

// An armor checksum line, when there is one, must match the signature
// block (RFC 4880 §6.2; gpg says "CRC error" and finds no signature):
// every one-character change of the block's body or of its checksum is
// refused as malformed, whether the message is attached or verified, so a
// damaged block is never re-armored with a fresh, matching checksum.
func TestArmorChecksumChecked(t *testing.T) {
	b := cosigned(t, "ed25519.sec.asc", "rsa3072.sec.asc")
	msg := signatureOf(t, b)
	if _, err := parseMessage(msg); err != nil {
		t.Fatal(err)
	}
	start := bytes.Index(msg, []byte("-----BEGIN PGP SIGNATURE-----\n"))
	end := bytes.Index(msg, []byte("-----END PGP SIGNATURE-----"))
	if start < 0 || end < 0 {
		t.Fatal("no signature block")
	}
	body := start + len("-----BEGIN PGP SIGNATURE-----\n\n")
	changed := 0
	for i := body; i < end; i++ {
		c := msg[i]
		if c == '\n' || c == '=' {
			continue
		}
		bad := bytes.Clone(msg)
		bad[i] = 'A'
		if c == 'A' {
			bad[i] = 'B'
		}
		changed++
		if _, err := parseMessage(bad); !errors.Is(err, ErrMalformedSignature) {
			t.Fatalf("character %d changed from %q: got %v, want ErrMalformedSignature", i-body, c, err)
		}
	}
	if changed < 100 {
		t.Fatalf("only %d characters tried", changed)
	}
	// Attached, then verified.
	m, _ := parseMessage(msg)
	a, _ := ParseAttestation(m.plaintext)
	ext, err := addArmorChecksum(extSign(t, a, readKeys(t, "rsa3072.sec.asc")[0].PrivateKey, cosignTime))
	if err != nil {
		t.Fatal(err)
	}
	crc := bytes.LastIndex(ext, []byte("\n=")) + 2
	ext[crc] ^= 1
	o := at(cosignTime)
	o.Signature = ext
	if _, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, replaceSignature(t, b, nil)), nil, o); !errors.Is(err, ErrMalformedSignature) || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("attaching a message with a wrong checksum: got %v, want ErrMalformedSignature", err)
	}
	bad := bytes.Clone(msg)
	bad[bytes.LastIndex(bad, []byte("\n="))+2] ^= 1
	if _, err := verifyAt(t, replaceSignature(t, b, bad), readKeys(t, "trusted.asc"), cosignTime.Add(2*time.Hour), Policy{}); !errors.Is(err, ErrMalformedSignature) {
		t.Errorf("verifying a signature.asc with a wrong checksum: got %v, want ErrMalformedSignature", err)
	}
}

// A co-signature is added only over an attestation that still matches the
// archive: a file changed, added or removed since the first signature is
// refused, saying which, whichever way the co-signer signs.
func TestAddChecksTheArchive(t *testing.T) {
	one := cosigned(t, "ed25519.sec.asc")
	m, err := parseMessage(signatureOf(t, one))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := ParseAttestation(m.plaintext)
	later := cosignTime.Add(time.Hour)
	rsa := signer(t, "rsa3072.sec.asc")
	for _, tt := range []struct {
		name string
		b    []byte
		want error
	}{
		{"file changed", replaceSignature(t, changeFile(t, one, "stacks/app.yaml", "Resources:\n  Bucket:\n    Type: AWS::S4::Bucket\n"), signatureOf(t, one)), ErrDigestMismatch},
		{"file added", rebuild(t, one, addFile("extra.yaml", "x: 1\n"), nil, nil), ErrUnlisted},
		{"file removed", rebuild(t, one, nil, nil, func(f *assembly.File) bool { return f.Name() != "stacks/app.yaml" }), ErrMissing},
	} {
		for _, way := range []string{"key", "external"} {
			t.Run(tt.name+", "+way, func(t *testing.T) {
				o := at(later)
				o.Add = true
				var signers []Signer
				if way == "key" {
					signers = []Signer{Keys(rsa)}
				} else {
					o.Signature = extSign(t, a, rsa.PrivateKey, later)
				}
				_, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, tt.b), signers, o)
				if !errors.Is(err, ErrAttestationMismatch) || !errors.Is(err, tt.want) {
					t.Errorf("got %v, want ErrAttestationMismatch and %v", err, tt.want)
				}
			})
		}
	}
}
