package signing

import (
	"bytes"
	"context"
	"crypto"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/cloud-assembly/assemble/assembly"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zip"
)

// openAndVerify is what `assemble verify` does: structure, then signature.
func openAndVerify(t *testing.T, b []byte, trusted openpgp.EntityList) error {
	t.Helper()
	r, err := assembly.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	_, err = Verify(context.Background(), r, trusted, nil)
	return err
}

// rebuild copies the entries of b raw, letting edit add, drop or replace
// entries: edit gets each entry and returns false to drop it.
func rebuild(t *testing.T, b []byte, before, after func(*zip.Writer), keep func(*assembly.File) bool) []byte {
	t.Helper()
	r, copyRaw := reader(t, b), rawCopier(t, b)
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	if before != nil {
		before(zw)
	}
	for _, f := range r.Files() {
		if keep != nil && !keep(f) {
			continue
		}
		if err := copyRaw(zw, f.Name()); err != nil {
			t.Fatal(err)
		}
	}
	if after != nil {
		after(zw)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func addFile(name, body string) func(*zip.Writer) {
	return func(zw *zip.Writer) {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
		w.Write([]byte(body))
	}
}

// clearSignBody clear-signs arbitrary text (with the CRC fix), bypassing the
// attestation builder, to make validly signed but bad attestations.
func clearSignBody(t *testing.T, body []byte, e *openpgp.Entity, now time.Time, h crypto.Hash) []byte {
	t.Helper()
	var buf bytes.Buffer
	k, err := selectKey(e, now)
	if err != nil {
		t.Fatal(err)
	}
	w, err := clearsign.Encode(&buf, k.private, &packet.Config{DefaultHash: h, Time: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(body)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out, err := addArmorChecksum(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// centralOffsets returns the offsets of the central directory headers.
func centralOffsets(b []byte) []int {
	var offs []int
	p := int(binary.LittleEndian.Uint32(b[len(b)-6:]))
	for binary.LittleEndian.Uint32(b[p:]) == 0x02014b50 {
		offs = append(offs, p)
		p += 46 + int(binary.LittleEndian.Uint16(b[p+28:])) + int(binary.LittleEndian.Uint16(b[p+30:])) + int(binary.LittleEndian.Uint16(b[p+32:]))
	}
	return offs
}

// TestTamper: one single-defect archive per attack class, each rejected with
// the sentinel for its cause.
func TestTamper(t *testing.T) {
	trusted := readKeys(t, "trusted.asc")
	e := signer(t, "ed25519.sec.asc")
	now := time.Now().UTC().Truncate(time.Second)
	base := buildZip(t)
	good := signZip(t, base, e, now, crypto.SHA256)
	if err := openAndVerify(t, good, trusted); err != nil {
		t.Fatalf("untampered assembly: %v", err)
	}
	att := func(edit func(a *Attestation)) []byte {
		a, err := Attest(t.Context(), reader(t, base), &SignOptions{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		edit(a)
		body, _ := a.Marshal()
		return replaceSignature(t, base, clearSignBody(t, body, e, now, crypto.SHA256))
	}
	withSig := func(edit func(sig []byte) []byte) []byte {
		return replaceSignature(t, base, edit(signatureOf(t, good)))
	}
	mutate := func(edit func(b []byte) []byte) []byte {
		return edit(append([]byte{}, good...))
	}
	onlyContent := func(f *assembly.File) bool { return f.Name() != assembly.SignatureName }

	tests := []struct {
		name string
		b    []byte
		want error
	}{
		// Structure (assembly.NewReader).
		{"duplicate name before original", rebuild(t, good, addFile("manifest.json", "{}"), nil, nil), assembly.ErrDuplicate},
		{"duplicate name after original", rebuild(t, good, nil, addFile("manifest.json", "{}"), nil), assembly.ErrDuplicate},
		{"prepended bytes", append([]byte("#!/bin/sh\n"), good...), assembly.ErrFormat},
		{"appended bytes", append(append([]byte{}, good...), "junk"...), assembly.ErrFormat},
		{"second end record", append(append([]byte{}, good...), good[len(good)-22:]...), assembly.ErrFormat},
		{"local central mismatch", mutate(func(b []byte) []byte { b[8] ^= 8; return b }), assembly.ErrFormat},
		{"path traversal", rebuild(t, good, nil, addFile("../../etc/cron.d/x", "x"), nil), assembly.ErrInsecurePath},
		{"absolute path", rebuild(t, good, nil, addFile("/etc/passwd", "x"), nil), assembly.ErrInsecurePath},
		{"backslash path", rebuild(t, good, nil, addFile(`..\evil`, "x"), nil), assembly.ErrInsecurePath},
		{"drive letter", rebuild(t, good, nil, addFile("C:/evil", "x"), nil), assembly.ErrInsecurePath},
		{"symlink", rebuild(t, good, nil, func(zw *zip.Writer) {
			h := &zip.FileHeader{Name: "link", Method: zip.Store}
			h.SetMode(fs.ModeSymlink | 0o777)
			w, _ := zw.CreateHeader(h)
			w.Write([]byte("/etc/passwd"))
		}, nil), assembly.ErrFormat},
		{"case collision", rebuild(t, good, nil, addFile("MANIFEST.json", "{}"), nil), assembly.ErrDuplicate},
		{"nfc collision", rebuild(t, good, addFile("caf\u00e9.txt", "a"), addFile("cafe\u0301.txt", "b"), nil), assembly.ErrDuplicate},
		{"overlapping entries", mutate(func(b []byte) []byte {
			c := centralOffsets(b)
			binary.LittleEndian.PutUint32(b[c[1]+42:], 0)
			return b
		}), assembly.ErrFormat},
		{"encryption flag", mutate(func(b []byte) []byte {
			b[6] |= 1
			b[centralOffsets(b)[0]+8] |= 1
			return b
		}), assembly.ErrFormat},
		{"understated size", understated(t, base, e, now), assembly.ErrCorrupt},
		// Attestation against the archive.
		{"unlisted entry", rebuild(t, good, nil, addFile("extra.yaml", "x: 1"), nil), ErrUnlisted},
		{"missing entry", rebuild(t, good, nil, nil, func(f *assembly.File) bool { return f.Name() != "stacks/app.yaml" }), ErrMissing},
		{"unsigned", rebuild(t, good, nil, nil, onlyContent), ErrUnsigned},
		{"changed content", mutate(func(b []byte) []byte {
			// A stored entry changed, its CRC-32 fixed in both headers.
			i := bytes.Index(b, []byte{0, 1, 2, 3, 250})
			b[i+2] ^= 0xff
			for _, c := range centralOffsets(b) {
				if string(b[c+46:c+46+15]) == "assets/blob.bin" {
					l := int(binary.LittleEndian.Uint32(b[c+42:]))
					sum := crc32.ChecksumIEEE(b[i : i+15000])
					binary.LittleEndian.PutUint32(b[c+16:], sum)
					binary.LittleEndian.PutUint32(b[l+14:], sum)
					if d := i + 15000; binary.LittleEndian.Uint32(b[d:]) == 0x08074b50 {
						binary.LittleEndian.PutUint32(b[d+4:], sum)
					}
				}
			}
			return b
		}), ErrDigestMismatch},
		// Issue #11 defect 3: the CRC-32 is checked as the content streams.
		{"changed content, stale crc", mutate(func(b []byte) []byte {
			i := bytes.Index(b, []byte{0, 1, 2, 3, 250})
			b[i+2] ^= 0xff
			return b
		}), assembly.ErrCorrupt},
		// The signature block.
		{"edited cleartext", withSig(func(s []byte) []byte {
			return bytes.Replace(s, []byte(`"size": "47"`), []byte(`"size": "48"`), 1)
		}), ErrBadSignature},
		{"text before the cleartext", withSig(func(s []byte) []byte {
			return append([]byte("{\"algorithm\": \"MD5\"}\n"), s...)
		}), ErrUnsignedContent},
		{"text after the cleartext", withSig(func(s []byte) []byte { return append(s, "\nunsigned text\n"...) }), ErrUnsignedContent},
		{"two cleartext messages", withSig(func(s []byte) []byte { return append(append(s, '\n'), s...) }), ErrUnsignedContent},
		{"detached signature", withSig(func(s []byte) []byte {
			var buf bytes.Buffer
			if err := openpgp.ArmoredDetachSignText(&buf, e, bytes.NewReader(s), nil); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}), ErrMalformedSignature},
		{"sha1 signature", func() []byte {
			a, _ := Attest(t.Context(), reader(t, base), &SignOptions{Now: func() time.Time { return now }})
			body, _ := a.Marshal()
			return replaceSignature(t, base, sha1ClearSign(t, bytes.TrimSuffix(body, []byte("\n")), readKeys(t, "rsa3072.sec.asc")[0], now))
		}(), ErrWeakSignatureHash},
		{"hash header lies", withSig(func(s []byte) []byte {
			return bytes.Replace(s, []byte("Hash: SHA256"), []byte("Hash: SHA512"), 1)
		}), ErrMalformedSignature},
		{"untrusted signer", signZip(t, base, signer(t, "untrusted.sec.asc"), now, crypto.SHA256), ErrUnknownSigner},
		// Validly signed, bad attestations.
		{"wrong size", att(func(a *Attestation) { it := a.Items["manifest.json"]; it.Size++; a.Items["manifest.json"] = it }), ErrSizeMismatch},
		{"wrong nonce", att(func(a *Attestation) { a.Nonce = bytes.Repeat([]byte{7}, 32) }), ErrDigestMismatch},
		{"short nonce", att(func(a *Attestation) { a.Nonce = a.Nonce[:16] }), ErrNonce},
		{"md5 attestation", att(func(a *Attestation) { a.Algorithm = crypto.MD5 }), ErrWeakAlgorithm},
		{"sha1 attestation", att(func(a *Attestation) { a.Algorithm = crypto.SHA1 }), ErrWeakAlgorithm},
		{"timestamp after the signature", att(func(a *Attestation) { a.Timestamp = a.Timestamp.Add(MaxClockSkew + time.Second) }), ErrTimestamp},
		{"duplicate attestation key", func() []byte {
			a, _ := Attest(t.Context(), reader(t, base), &SignOptions{Now: func() time.Time { return now }})
			body, _ := a.Marshal()
			body = bytes.Replace(body, []byte(`"algorithm": "SHA256",`), []byte(`"algorithm": "SHA256", "algorithm": "MD5",`), 1)
			return replaceSignature(t, base, clearSignBody(t, body, e, now, crypto.SHA256))
		}(), ErrAttestation},
		// Issue #11 defect 2: "items" hashes another content, "ITEMS" this
		// one; encoding/json matched ITEMS to items and verified it.
		{"case-variant attestation key", func() []byte {
			a, _ := Attest(t.Context(), reader(t, base), &SignOptions{Now: func() time.Time { return now }})
			right, _ := a.Marshal()
			for n, it := range a.Items {
				it.Hash = bytes.Repeat([]byte{1}, len(it.Hash))
				a.Items[n] = it
			}
			wrong, _ := a.Marshal()
			i, j := bytes.Index(right, []byte(`"items"`)), bytes.Index(right, []byte(`"nonce"`))
			body := bytes.Replace(wrong, []byte(`"nonce"`), append([]byte(`"ITEMS"`), right[i+len(`"items"`):j+len(`"nonce"`)]...), 1)
			return replaceSignature(t, base, clearSignBody(t, body, e, now, crypto.SHA256))
		}(), ErrAttestation},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := openAndVerify(t, tt.b, trusted)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			if errors.Is(tt.want, ErrVerification) && !errors.Is(err, ErrVerification) {
				t.Errorf("%v does not wrap ErrVerification", err)
			}
		})
	}
}

// understated signs base, then swaps manifest.json for a deflate stream that
// inflates to more than the size its headers and the attestation state.
func understated(t *testing.T, base []byte, e *openpgp.Entity, now time.Time) []byte {
	signed := signZip(t, base, e, now, crypto.SHA256)
	orig := testFiles[0].body
	big := orig + strings.Repeat(" ", 1<<20)
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	fw.Write([]byte(big))
	fw.Close()
	return rebuild(t, signed, func(zw *zip.Writer) {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: "manifest.json", Method: zip.Deflate, CRC32: crc32.ChecksumIEEE([]byte(orig)),
			CompressedSize64: uint64(comp.Len()), UncompressedSize64: uint64(len(orig))})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(comp.Bytes())
	}, nil, func(f *assembly.File) bool { return f.Name() != "manifest.json" })
}

// sha1ClearSign makes a valid cleartext signature over SHA-1 by hand:
// go-crypto's clearsign refuses to write one.
func sha1ClearSign(t *testing.T, body []byte, e *openpgp.Entity, now time.Time) []byte {
	t.Helper()
	k := e.PrivateKey
	sig := &packet.Signature{Version: 4, SigType: packet.SigTypeText, PubKeyAlgo: k.PubKeyAlgo, Hash: crypto.SHA1,
		CreationTime: now, IssuerKeyId: &k.KeyId, IssuerFingerprint: k.Fingerprint}
	h := crypto.SHA1.New()
	h.Write(bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n")))
	no := false
	if err := sig.Sign(h, k, &packet.Config{NonDeterministicSignaturesViaNotation: &no}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	out.WriteString("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA1\n\n")
	out.Write(body)
	out.WriteString("\n")
	w, _ := armor.Encode(&out, "PGP SIGNATURE", nil)
	if err := sig.Serialize(w); err != nil {
		t.Fatal(err)
	}
	w.Close()
	out.WriteString("\n")
	return out.Bytes()
}
