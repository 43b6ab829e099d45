package signing

import (
	"bytes"
	"crypto"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	pgperrors "github.com/ProtonMail/go-crypto/openpgp/errors"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/cloud-assembly/assemble/assembly"
)

// MaxSignatures bounds the signature packets of one signature.asc: more
// co-signers than any release needs, few enough that checking them all
// stays cheap.
const MaxSignatures = 64

// A message is a parsed signature.asc: one cleartext-signed message whose
// signature block holds one or more signature packets (one per signer, as
// `gpg --clearsign -u A -u B` writes). Nothing in it is verified yet.
type message struct {
	plaintext []byte              // the text, dash-escaping removed, LF line ends
	text      []byte              // the signed text: canonical, CRLF line ends
	sigs      []*packet.Signature // in the order of the block
	raw       [][]byte            // each packet's bytes, as found
	// inline: an armored OpenPGP message (gpg --sign --armor) whose
	// literal data is the text, not a cleartext-signed one; text is then
	// the literal data as signed, and its signatures may be binary (0x00)
	// or text (0x01) signatures.
	inline bool
}

// parseMessage reads a cleartext-signed message, strictly: nothing but
// white space around exactly one message; only signature packets, each a
// text signature that names its issuer and does not use a weak hash; a
// Hash header, when present, listing exactly the signatures' hashes. It
// does not check any signature.
func parseMessage(data []byte) (*message, error) { return parseMessageOf(assembly.SignatureName, data) }

// parseMessageOf is parseMessage, its errors naming the message what.
func parseMessageOf(what string, data []byte) (*message, error) {
	const begin = "-----BEGIN PGP SIGNED MESSAGE-----"
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if bytes.HasPrefix(trimmed, []byte(inlineBegin)) {
		return parseInline(what, trimmed)
	}
	if !bytes.HasPrefix(trimmed, []byte(begin)) {
		if bytes.Contains(data, []byte(begin)) || bytes.Contains(data, []byte(inlineBegin)) {
			return nil, fmt.Errorf("%w: text before the signed message", ErrUnsignedContent)
		}
		if bytes.Contains(data, []byte("-----BEGIN PGP SIGNATURE-----")) {
			return nil, fmt.Errorf("%w: %s must be a signed message (cleartext, as gpg --clearsign writes, or inline, gpg --sign --armor), not a detached signature: the spec does not allow one", ErrMalformedSignature, what)
		}
		return nil, fmt.Errorf("%w: %s is not a cleartext-signed message", ErrMalformedSignature, what)
	}
	b, rest := clearsign.Decode(trimmed)
	if b == nil {
		return nil, fmt.Errorf("%w: %s is not a well-formed cleartext-signed message", ErrMalformedSignature, what)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the signature block", ErrUnsignedContent, len(rest))
	}
	body, err := io.ReadAll(io.LimitReader(b.ArmoredSignature.Body, assembly.MaxSignatureSize))
	if err != nil {
		return nil, fmt.Errorf("%w: signature armor: %v", ErrMalformedSignature, err)
	}
	if err := checkArmorChecksum(trimmed[:len(trimmed)-len(rest)], "PGP SIGNATURE", body); err != nil {
		return nil, err
	}
	m := &message{plaintext: b.Plaintext, text: b.Bytes}
	if m.raw, err = splitPackets(body); err != nil {
		return nil, err
	}
	for i, raw := range m.raw {
		sig, err := parseSignature(raw)
		if err != nil {
			if len(m.raw) > 1 {
				return nil, fmt.Errorf("signature %d of %d: %w", i+1, len(m.raw), err)
			}
			return nil, err
		}
		m.sigs = append(m.sigs, sig)
	}
	if hs := b.Headers.Values("Hash"); len(hs) > 0 {
		// go-crypto does not check the Hash: header; we do. It lists the
		// hashes the signatures use (RFC 4880 §7), each once.
		want := m.hashNames()
		got := slices.Clone(hs)
		slices.Sort(got)
		if got = slices.Compact(got); !slices.Equal(got, want) || len(got) != len(hs) {
			return nil, fmt.Errorf("%w: Hash header %q does not match the signatures' %s", ErrMalformedSignature, strings.Join(hs, ","), strings.Join(want, ","))
		}
	}
	return m, nil
}

// checkArmorChecksum checks the checksum line of the signature block at the
// end of msg, when it has one, against body, the bytes the block decodes
// to: go-crypto skips it, but gpg refuses a block whose checksum does not
// match ("CRC error"), and a damaged block must not be armored again with
// a checksum that matches. The checksum wanted is the one go-crypto's armor
// encoder writes for body.
func checkArmorChecksum(msg []byte, blockType string, body []byte) error {
	i := bytes.LastIndex(msg, []byte("-----BEGIN "+blockType+"-----"))
	if i < 0 {
		return nil
	}
	line := checksumLine(msg[i:])
	if line == nil {
		return nil
	}
	if sum, err := base64.StdEncoding.DecodeString(string(line[1:])); err != nil || len(sum) != 3 {
		return fmt.Errorf("%w: unreadable armor checksum line %q", ErrMalformedSignature, line)
	}
	var want bytes.Buffer
	w, err := armor.Encode(&want, blockType, nil)
	if err != nil {
		return err
	}
	if _, err := w.Write(body); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	if !bytes.Equal(line, checksumLine(want.Bytes())) {
		return fmt.Errorf("%w: the signature block's armor checksum does not match it (the block was damaged; gpg says CRC error)", ErrMalformedSignature)
	}
	return nil
}

// checksumLine returns the checksum line ("=" and four base64 characters)
// of an armored block, or nil when it has none.
func checksumLine(block []byte) []byte {
	for _, line := range bytes.Split(block, []byte("\n")) {
		if line = bytes.TrimRight(line, " \t\r"); len(line) > 0 && line[0] == '=' {
			return line
		}
	}
	return nil
}

// hashNames lists the Hash header names of m's signature hashes, sorted,
// each once.
func (m *message) hashNames() []string {
	var names []string
	for _, s := range m.sigs {
		names = append(names, hashHeaderName(s.Hash))
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// hashList is the Hash header value for m's signatures: each hash once, in
// the order of first use (as go-crypto and GnuPG write it).
func (m *message) hashList() string {
	var names []string
	for _, s := range m.sigs {
		if n := hashHeaderName(s.Hash); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

// splitPackets cuts an armored signature block's body into its packets,
// each a signature packet (tag 2), at most MaxSignatures of them. It reads
// the packet framing itself: go-crypto's reader silently skips a packet it
// cannot parse (a signature over MD5 or RIPEMD-160), which would hide it.
func splitPackets(body []byte) ([][]byte, error) {
	var out [][]byte
	for len(body) > 0 {
		n, tag, err := packetLength(body)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformedSignature, err)
		}
		if tag != 2 {
			return nil, fmt.Errorf("%w: unexpected packet (tag %d) in the signature block", ErrMalformedSignature, tag)
		}
		if len(out) == MaxSignatures {
			return nil, fmt.Errorf("%w: more than %d signatures", ErrMalformedSignature, MaxSignatures)
		}
		out = append(out, body[:n])
		body = body[n:]
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no signature packet", ErrMalformedSignature)
	}
	return out, nil
}

// packetLength reads the header of the OpenPGP packet at the start of b
// (RFC 9580 §4.2) and returns the whole packet's length and its tag.
// Partial body lengths, which a signature packet never uses, are refused.
func packetLength(b []byte) (n int, tag byte, err error) {
	if len(b) < 2 || b[0]&0x80 == 0 {
		return 0, 0, errors.New("not an OpenPGP packet")
	}
	var hdr, body int
	if b[0]&0x40 != 0 { // new format: one-byte tag, then the length
		tag = b[0] & 0x3f
		switch l := int(b[1]); {
		case l < 192:
			hdr, body = 2, l
		case l < 224:
			if len(b) < 3 {
				return 0, 0, errors.New("truncated packet header")
			}
			hdr, body = 3, (l-192)<<8+int(b[2])+192
		case l == 255:
			if len(b) < 6 {
				return 0, 0, errors.New("truncated packet header")
			}
			hdr, body = 6, int(b[2])<<24|int(b[3])<<16|int(b[4])<<8|int(b[5])
		default:
			return 0, 0, errors.New("partial body length in a signature block")
		}
	} else { // old format: tag and length type in one byte
		tag = b[0] >> 2 & 0x0f
		switch b[0] & 3 {
		case 0:
			hdr, body = 2, int(b[1])
		case 1:
			if len(b) < 3 {
				return 0, 0, errors.New("truncated packet header")
			}
			hdr, body = 3, int(b[1])<<8|int(b[2])
		case 2:
			if len(b) < 5 {
				return 0, 0, errors.New("truncated packet header")
			}
			hdr, body = 5, int(b[1])<<24|int(b[2])<<16|int(b[3])<<8|int(b[4])
		default:
			return 0, 0, errors.New("indeterminate packet length")
		}
	}
	if body < 0 || body > len(b)-hdr {
		return 0, 0, errors.New("truncated packet")
	}
	return hdr + body, tag, nil
}

// parseSignature parses one signature packet: a text signature (0x01)
// that names its issuer, over SHA-256 or stronger.
func parseSignature(raw []byte) (*packet.Signature, error) { return parseSignatureOf(raw, false) }

// parseSignatureOf is parseSignature; with binary, a binary signature
// (0x00) is allowed too (an inline message's).
func parseSignatureOf(raw []byte, binary bool) (*packet.Signature, error) {
	if name, ok := weakSignatureHash(raw); ok {
		return nil, fmt.Errorf("%w: the signature uses %s, a weak hash, rejected; sign with SHA256 or stronger", ErrWeakSignatureHash, name)
	}
	p, err := packet.Read(bytes.NewReader(raw))
	var unsupported pgperrors.UnsupportedError
	if errors.As(err, &unsupported) && strings.Contains(string(unsupported), "critical") {
		// go-crypto refuses a critical subpacket of a type it does not know.
		return nil, &twoCauses{fmt.Sprintf("%v: %v: the signature is invalid (gpg says BADSIG)", ErrUnknownCritical, err), [2]error{ErrUnknownCritical, ErrBadSignature}}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedSignature, err)
	}
	sig, ok := p.(*packet.Signature)
	if !ok {
		return nil, fmt.Errorf("%w: unexpected %T packet in the signature block", ErrMalformedSignature, p)
	}
	switch sig.Hash {
	case crypto.MD5, crypto.SHA1, crypto.RIPEMD160:
		return nil, fmt.Errorf("%w: the signature uses %v, a weak hash, rejected; sign with SHA256 or stronger", ErrWeakSignatureHash, sig.Hash)
	}
	if sig.SigType != packet.SigTypeText && !(binary && sig.SigType == packet.SigTypeBinary) {
		return nil, fmt.Errorf("%w: signature type %#x, want a text signature (0x01)", ErrMalformedSignature, sig.SigType)
	}
	if sig.IssuerKeyId == nil {
		return nil, fmt.Errorf("%w: signature names no issuer", ErrMalformedSignature)
	}
	if name, ok := criticalNotation(sig); ok {
		return nil, &twoCauses{fmt.Sprintf("%v: the signature carries the critical notation %q, which we do not know: the signature is invalid (RFC 4880 §5.2.3.16; gpg says BADSIG)", ErrUnknownCritical, name), [2]error{ErrUnknownCritical, ErrBadSignature}}
	}
	return sig, nil
}

// criticalNotation returns the name of the first critical notation of the
// signatures (nil ones skipped): this package knows none, so each makes its
// signature invalid. (go-crypto refuses a critical subpacket of a type it
// does not know when it parses one, and skips such a self-signature when
// it reads a key; it checks notations only in its own verification
// functions, which this package does not call.)
func criticalNotation(sigs ...*packet.Signature) (string, bool) {
	for _, s := range sigs {
		if s == nil {
			continue
		}
		for _, n := range s.Notations {
			if n.IsCritical {
				return n.Name, true
			}
		}
	}
	return "", false
}

// checkTimes applies the timestamp rule to a message's signatures and the
// attestation they sign, at time now:
//
//   - no signature is from the future (after now plus MaxClockSkew);
//   - no signature was made before the attestation (less MaxClockSkew).
//
// So a signature may come any time after the attestation: real release
// processes attest in CI and sign hours or days later, offline or on a
// smartcard, and co-signers later still. Each signer's key is judged both
// at its own signature's time and at the attestation's timestamp (see
// judge), so it must have been valid when the attestation was made.
func checkTimes(sigs []*packet.Signature, att *Attestation, now time.Time) error {
	for _, s := range sigs {
		if t := s.CreationTime; t.After(now.Add(MaxClockSkew)) {
			return fmt.Errorf("%w: signature made in the future (%s)", ErrTimestamp, day(t))
		}
	}
	if att == nil {
		return nil
	}
	for _, s := range sigs {
		if d := att.Timestamp.Sub(s.CreationTime); d > MaxClockSkew {
			return fmt.Errorf("%w: a signature was made %s, before the attestation (%s)", ErrTimestamp, day(s.CreationTime), day(att.Timestamp))
		}
	}
	return nil
}

// canonicalText is the text a cleartext signature signs, for plaintext as
// parseMessage returns it: each line without trailing spaces and tabs,
// lines joined by CRLF (RFC 4880 §7.1), as clearsign.Decode makes it.
func canonicalText(plaintext []byte) []byte {
	lines := bytes.Split(plaintext, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " \t")
	}
	return bytes.Join(lines, []byte("\r\n"))
}

// writeMessage writes a cleartext-signed message of plaintext (LF line
// ends, no trailing white space on a line, as parseMessage returns it)
// signed by the given signature packets (their bytes as made or found),
// with a Hash header listing their hashes and an armor checksum line.
func writeMessage(plaintext []byte, hashes string, packets [][]byte) ([]byte, error) {
	var out bytes.Buffer
	out.WriteString("-----BEGIN PGP SIGNED MESSAGE-----\n")
	if hashes != "" {
		fmt.Fprintf(&out, "Hash: %s\n", hashes)
	}
	out.WriteString("\n")
	for _, line := range bytes.Split(plaintext, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("-")) {
			out.WriteString("- ") // dash-escaping (RFC 4880 §7.1)
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	w, err := armor.Encode(&out, "PGP SIGNATURE", nil)
	if err != nil {
		return nil, err
	}
	for _, p := range packets {
		if _, err := w.Write(p); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

const inlineBegin = "-----BEGIN PGP MESSAGE-----"

// parseInline reads an armored signed message (gpg --sign --armor: the
// spec allows a signature that is not cleartext, as long as it is not
// detached), strictly: one armor block with nothing but white space after
// it, its checksum right when it has one; inside (compressed or not), one
// or more one-pass signature packets, one literal data packet, the text,
// at most the attestation bound, and as many signature packets as one-pass
// ones (go-crypto's reader skips a signature it cannot parse: none may go
// missing); each signature a binary or text one, as parseSignature has it.
func parseInline(what string, data []byte) (*message, error) {
	const endMark = "-----END PGP MESSAGE-----"
	i := bytes.Index(data, []byte(endMark))
	if i < 0 {
		return nil, fmt.Errorf("%w: %s: armored message without an END line", ErrMalformedSignature, what)
	}
	block, rest := data[:i+len(endMark)], data[i+len(endMark):]
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the signed message", ErrUnsignedContent, len(rest))
	}
	ab, err := armor.Decode(bytes.NewReader(block))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformedSignature, what, err)
	}
	body, err := io.ReadAll(io.LimitReader(ab.Body, assembly.MaxSignatureSize+1))
	if err != nil || len(body) > assembly.MaxSignatureSize {
		return nil, fmt.Errorf("%w: %s: armor: %v (at most %d bytes)", ErrMalformedSignature, what, err, assembly.MaxSignatureSize)
	}
	if err := checkArmorChecksum(block, "PGP MESSAGE", body); err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrMalformedSignature, what, fmt.Sprintf(format, args...))
	}
	m := &message{inline: true}
	onePass, literal, compressed := 0, false, false
	pr := packet.NewReader(bytes.NewReader(body))
	for {
		p, err := pr.Next()
		if err == io.EOF {
			break
		}
		var unsupported pgperrors.UnsupportedError
		if errors.As(err, &unsupported) && strings.Contains(string(unsupported), "critical") {
			return nil, &twoCauses{fmt.Sprintf("%v: %v: the signature is invalid (gpg says BADSIG)", ErrUnknownCritical, err), [2]error{ErrUnknownCritical, ErrBadSignature}}
		}
		if err != nil {
			return nil, bad("%v", err)
		}
		switch p := p.(type) {
		case *packet.Compressed:
			if compressed || onePass > 0 || literal || len(m.sigs) > 0 {
				return nil, bad("a compressed packet where the signed message has none")
			}
			compressed = true
			// Bounded: the text, and room for the signatures; what the
			// reader skips (unknown packets) counts too.
			if err := pr.Push(io.LimitReader(p.Body, maxAttestationSize+assembly.MaxSignatureSize)); err != nil {
				return nil, bad("%v", err)
			}
		case *packet.OnePassSignature:
			if literal {
				return nil, bad("a one-pass signature packet after the literal data")
			}
			onePass++
		case *packet.LiteralData:
			if literal || onePass == 0 {
				return nil, bad("want one-pass signature packets, then one literal data packet")
			}
			literal = true
			if m.text, err = io.ReadAll(io.LimitReader(p.Body, maxAttestationSize+1)); err != nil {
				return nil, bad("literal data: %v", err)
			}
			if len(m.text) > maxAttestationSize {
				return nil, fmt.Errorf("%w: the signed text is more than %d bytes", ErrAttestation, maxAttestationSize)
			}
		case *packet.Signature:
			if !literal {
				return nil, bad("a signature packet before the literal data")
			}
			if len(m.sigs) == MaxSignatures {
				return nil, bad("more than %d signatures", MaxSignatures)
			}
			var raw bytes.Buffer
			if err := p.Serialize(&raw); err != nil {
				return nil, bad("%v", err)
			}
			sig, err := parseSignatureOf(raw.Bytes(), true)
			if err != nil {
				return nil, err
			}
			m.sigs = append(m.sigs, sig)
			m.raw = append(m.raw, raw.Bytes())
		default:
			return nil, bad("unexpected %T packet in a signed message", p)
		}
	}
	switch {
	case !literal:
		return nil, bad("no literal data: want a signed message (gpg --sign)")
	case len(m.sigs) == 0:
		return nil, fmt.Errorf("%w: %s: no signature packet", ErrMalformedSignature, what)
	case len(m.sigs) != onePass:
		return nil, bad("%d one-pass signature packets but %d signatures that can be read (one uses a weak hash or an unknown algorithm?)", onePass, len(m.sigs))
	}
	m.plaintext = m.text
	return m, nil
}
