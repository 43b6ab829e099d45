package signing

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/cloud-assembly/assemble/internal/gpgtest"
)

// Issue 19 item 5: what other tools write. A signed message that is not
// cleartext (gpg --sign --armor: the literal data inside, compressed or
// not, binary or text signatures, one signer or two) verifies; a detached
// signature stays refused, and so does a changed text. A timestamp without
// a zone (the spec's own example form) is read as UTC and flagged; other
// forms are refused. All made by a real gpg.
func TestOtherToolsSignatures(t *testing.T) {
	h := gpgtest.New(t, "", filepath.Join(keysDir, "ed25519.sec.asc"), filepath.Join(keysDir, "rsa3072.sec.asc"))
	trusted := readKeys(t, "trusted.asc")
	b := buildZip(t)
	now := time.Now().UTC().Truncate(time.Second)
	opts := &VerifyOptions{Now: func() time.Time { return now.Add(time.Minute) }}
	a, err := Attest(t.Context(), reader(t, b), &SignOptions{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := a.Marshal()
	gpg := func(text []byte, args ...string) []byte {
		t.Helper()
		out, err := h.Run(text, append([]string{"--armor"}, args...)...)
		if err != nil {
			t.Fatalf("gpg %v: %v", args, err)
		}
		return out
	}
	ed := []string{"--local-user", "ed25519@example.test"}
	for _, tt := range []struct {
		name    string
		args    []string
		signers int
	}{
		{"gpg --sign", append([]string{"--sign"}, ed...), 1},
		{"gpg --sign --textmode", append([]string{"--sign", "--textmode"}, ed...), 1},
		{"gpg --sign -z 0", append([]string{"--sign", "-z", "0"}, ed...), 1},
		{"gpg --sign, two keys", append([]string{"--sign", "--local-user", "rsa3072@example.test"}, ed...), 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sig := gpg(body, tt.args...)
			if !bytes.Contains(sig, []byte("-----BEGIN PGP MESSAGE-----")) {
				t.Fatalf("gpg wrote %s", sig)
			}
			vc, err := verifyCleartext(sig, trusted, opts)
			if err != nil || !bytes.Equal(vc.att.Nonce, a.Nonce) {
				t.Fatalf("verifyCleartext: %v", err)
			}
			v, err := Verify(context.Background(), reader(t, replaceSignature(t, b, sig)), trusted, opts)
			if err != nil || len(v.Signatures()) != tt.signers {
				t.Fatalf("Verify: %v", err)
			}
			if _, err := v.ReadFile("manifest.json"); err != nil {
				t.Fatal(err)
			}
			// Co-signing it, or attaching it, is refused saying why.
			if _, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, replaceSignature(t, b, sig)), []Signer{Keys(signer(t, "subkey.sec.asc"))}, &SignOptions{Add: true}); !errors.Is(err, ErrMalformedSignature) {
				t.Errorf("co-signing an inline message: got %v, want ErrMalformedSignature", err)
			}
			if _, err := Seal(t.Context(), &bytes.Buffer{}, reader(t, b), nil, &SignOptions{Signature: sig}); !errors.Is(err, ErrMalformedSignature) {
				t.Errorf("attaching an inline message: got %v, want ErrMalformedSignature", err)
			}
		})
	}
	// The literal data changed (uncompressed, one byte, armored again):
	// a bad signature.
	good := gpg(body, append([]string{"--sign"}, ed...)...)
	ab, err := armor.Decode(bytes.NewReader(gpg(body, append([]string{"--sign", "-z", "0"}, ed...)...)))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(ab.Body)
	i := bytes.Index(raw, []byte(`"SHA256"`))
	if i < 0 {
		t.Fatal("no literal text")
	}
	raw[i+1] = 's'
	var changed bytes.Buffer
	w, _ := armor.Encode(&changed, "PGP MESSAGE", nil)
	w.Write(raw)
	w.Close()
	if _, err := verifyCleartext(changed.Bytes(), trusted, opts); !errors.Is(err, ErrBadSignature) {
		t.Errorf("changed literal data: got %v, want ErrBadSignature", err)
	}
	// A detached signature, text around the message, a damaged block.
	for _, tt := range []struct {
		name string
		sig  []byte
		want error
	}{
		{"detached", gpg(body, append([]string{"--detach-sign"}, ed...)...), ErrMalformedSignature},
		{"text before", append([]byte("hello\n"), good...), ErrUnsignedContent},
		{"text after", append(append([]byte{}, good...), "hello\n"...), ErrUnsignedContent},
		{"damaged", bytes.Replace(good, []byte("\n"), []byte("\nA"), 3), ErrMalformedSignature},
	} {
		if _, err := verifyCleartext(tt.sig, trusted, opts); !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
		}
	}

	// A timestamp without a zone, clear-signed by gpg: read as UTC.
	stamp := now.Format("2006-01-02T15:04:05")
	zoneless := bytes.Replace(body, []byte(now.Format(time.RFC3339)), []byte(stamp), 1)
	if bytes.Equal(zoneless, body) {
		t.Fatal("no timestamp replaced")
	}
	v, err := verifyCleartext(gpg(zoneless, append([]string{"--clearsign"}, ed...)...), trusted, opts)
	var att *Attestation
	if v != nil {
		att = v.att
	}
	if err != nil || !att.Zoneless || !att.Timestamp.Equal(now) {
		t.Fatalf("zoneless timestamp: %v (zoneless %v)", err, att != nil && att.Zoneless)
	}
	// An hour of one digit is refused; now's own 12-hour hour has two
	// digits from 10 to 12 o'clock, when it is a valid stamp, so the
	// one-digit case is a fixed one.
	for _, bad := range []string{now.Format("2006-01-02 15:04:05"), now.Format("20060102T150405"), now.Format("2006-01-02"), now.Format("2006-01-02T15:04"), "2026-01-02T3:04:05", stamp + "+0100"} {
		text := bytes.Replace(body, []byte(now.Format(time.RFC3339)), []byte(bad), 1)
		if _, err := verifyCleartext(gpg(text, append([]string{"--clearsign"}, ed...)...), trusted, opts); !errors.Is(err, ErrAttestation) {
			t.Errorf("timestamp %q: got %v, want ErrAttestation", bad, err)
		}
	}
}

// Timestamps: RFC 3339, and ISO 8601 extended date-times without a zone
// (read as UTC); nothing else.
func TestParseTimestamp(t *testing.T) {
	for _, tt := range []struct {
		in       string
		zoneless bool
		ok       bool
	}{
		{"2018-11-15T11:08:52Z", false, true},
		{"2018-11-15T11:08:52+01:00", false, true},
		{"2018-11-15T11:08:52.5Z", false, true},
		{"2018-11-15T11:08:52", true, true},
		{"2018-11-15T11:08:52.123", true, true},
		{"2018-11-15 11:08:52", false, false},
		{"2018-11-15T11:08", false, false},
		{"2018-11-15T1:08:52", false, false},
		{"20181115T110852", false, false},
		{"2018-11-15", false, false},
		{"2018-11-15T11:08:52+0100", false, false},
		{"2018-13-15T11:08:52", false, false},
		{"2018-11-15T11:08:52.", false, false},
	} {
		ts, zoneless, err := parseTimestamp(tt.in)
		if (err == nil) != tt.ok || zoneless != tt.zoneless || err != nil && !errors.Is(err, ErrAttestation) {
			t.Errorf("%q: %v, zoneless %v, err %v", tt.in, ts, zoneless, err)
		}
		if tt.zoneless && ts.Location() != time.UTC {
			t.Errorf("%q: read in %v, want UTC", tt.in, ts.Location())
		}
	}
}
