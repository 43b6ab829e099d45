package signing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/cloud-assembly/assemble/assembly"
	filedigest "github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/output"
)

// A Signer makes the OpenPGP signatures of an attestation: keys held in
// memory (Keys) or the keys of the local GnuPG, its agent and smartcards
// (GPG). Another implementation (a KMS, an HSM) only has to return a
// cleartext-signed message of the text.
type Signer interface {
	// ClearSign returns a cleartext-signed message (RFC 4880 §7) of text,
	// whose lines end in LF and carry no trailing white space, holding one
	// signature packet per key of the signer, made at opts.Now with
	// opts.Algorithm as digest where the key allows it; and the public keys
	// that made them, which the signatures are judged against.
	ClearSign(ctx context.Context, text []byte, opts *SignOptions) ([]byte, openpgp.EntityList, error)
}

// Keys returns a Signer that signs with each of the entities, already
// decrypted (LoadSigners does that), in one message.
func Keys(signers ...*openpgp.Entity) Signer { return keySigner(signers) }

type keySigner []*openpgp.Entity

// check refuses a missing, revoked or expired key, or one that is still
// encrypted, before anything is read (the trust rule at the signing time).
func (ks keySigner) check(opts *SignOptions) ([]*packet.PrivateKey, error) {
	if len(ks) == 0 {
		return nil, ErrNoKey
	}
	var privs []*packet.PrivateKey
	for _, e := range ks {
		if e == nil {
			return nil, ErrNoKey
		}
		k, err := selectKey(e, opts.now())
		if err != nil {
			return nil, err
		}
		if k.private.Encrypted {
			return nil, fmt.Errorf("%w: key %s", ErrPassphraseNeeded, fingerprint(e))
		}
		privs = append(privs, k.private)
	}
	return privs, nil
}

func (ks keySigner) ClearSign(_ context.Context, text []byte, opts *SignOptions) ([]byte, openpgp.EntityList, error) {
	privs, err := ks.check(opts)
	if err != nil {
		return nil, nil, err
	}
	alg, err := opts.algorithm()
	if err != nil {
		return nil, nil, err
	}
	now := opts.now()
	cfg := &packet.Config{DefaultHash: alg, Time: func() time.Time { return now }, Rand: opts.rand()}
	var buf bytes.Buffer
	w, err := clearsign.EncodeMulti(&buf, privs, cfg)
	if err != nil {
		return nil, nil, err
	}
	if _, err := w.Write(text); err != nil {
		return nil, nil, err
	}
	if err := w.Close(); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), openpgp.EntityList(ks), nil
}

// Sealed is the result of Seal: the attestation signed, the new
// signature.asc, and every signature in it.
type Sealed struct {
	Attestation *Attestation
	// Digest is the SHA-256 of the sealed assembly file written, hashed as
	// it was written, and Size its length (zero from a StreamSigner,
	// which writes signature.asc only: the writer of the whole file
	// hashes it, as packager.Plan.Write does).
	Digest filedigest.Digest
	Size   int64
	// Message is the signature.asc written.
	Message []byte
	// Signatures reports every signature of Message, in its order, judged
	// against the keys that made the new ones (and SignOptions.Keyring):
	// the new signatures are Trusted and name their key; earlier ones (sign
	// --add) or external ones by keys not at hand are reported unknown.
	Signatures []Signature
	// Added is how many of Signatures are new (the last ones).
	Added int
}

// New lists the signatures this seal added.
func (s *Sealed) New() []Signature { return s.Signatures[len(s.Signatures)-s.Added:] }

// Seal writes to dst a copy of the assembly r sealed by the signers: every
// entry but signature.asc keeps its exact stored bytes, and signature.asc
// becomes one cleartext-signed attestation holding a signature packet per
// signer key. What it seals depends on opts:
//
//   - by default, a new attestation (fresh nonce, timestamp now), signed by
//     every signer;
//   - with opts.Signature, an attestation signed elsewhere (gpg
//     --clearsign, a smartcard), attached as it is: it must be exactly one
//     cleartext-signed message whose attestation matches r, every size and
//     salted hash, no file missing or extra (ErrAttestationMismatch), and
//     with opts.Keyring a signature must verify under those keys as Verify
//     would have it;
//   - with opts.Add, the attestation of r's signature.asc (ErrNotSigned if
//     there is none), checked against r the same way, keeping its
//     signatures and adding the signers' (or those of opts.Signature, which
//     must then sign the very same attestation), as `gpg --clearsign -u A
//     -u B` writes them: co-signatures.
//
// Every way refuses an assembly that assembly.Check finds invalid, a key
// that the trust rule refuses at the signing time or at the attestation's
// timestamp, and signatures that Verify would refuse for their times.
func Seal(ctx context.Context, dst io.Writer, r *assembly.Reader, signers []Signer, opts *SignOptions) (*Sealed, error) {
	return seal(ctx, dst, r, signers, opts, nil)
}

// SealFile is Seal of the assembly file in, written to out (which may be
// in) through the project's one output writer (see internal/output): a
// temporary file beside out renamed into place, so a failed seal leaves
// out untouched and out is never seen half-written; a symbolic link is
// followed and kept (its target is signed); "-" is standard output. The
// lock on out is taken before in is opened, so a second writer of the
// same file (another sign, a build) waits, and signs or replaces what the
// first one wrote, never what it replaced. Like the project's other
// writers it does not fsync: the rename is atomic, durability across a
// power loss is the file system's (fsync made signing a 750 MiB assembly
// about 1.5 times slower).
func SealFile(ctx context.Context, in, out string, signers []Signer, opts *SignOptions) (*Sealed, error) {
	dst, err := output.Create(ctx, out, output.Options{})
	if err != nil {
		return nil, err
	}
	defer dst.Close()
	s, err := SealFileTo(ctx, in, dst, signers, opts)
	if err != nil {
		return nil, err
	}
	if err := dst.Commit(); err != nil {
		return nil, err
	}
	return s, nil
}

// SealFileTo is Seal of the assembly file in, written to dst. It fails
// with ErrInputChanged when in changed while it was read (another program
// wrote it, or renamed another file over it): what it wrote would then be
// a copy of neither version. Callers that write in itself take the
// output's lock before calling it, as SealFile does.
func SealFileTo(ctx context.Context, in string, dst io.Writer, signers []Signer, opts *SignOptions) (*Sealed, error) {
	// One descriptor serves the checks, the hashing and the prefix copy,
	// so all of them see the same file.
	src, err := os.Open(in)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", in, assembly.ErrFormat)
	}
	r, err := assembly.NewReader(src, st.Size())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in, err)
	}
	// Copying the kept prefix file to file lets the kernel do it
	// (copy_file_range, when dst is an *os.File or forwards ReadFrom to one;
	// src's offset is still 0: the reader only uses ReadAt).
	s, err := seal(ctx, dst, r, signers, opts, func(dst io.Writer, n int64) error {
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return err
		}
		m, err := io.Copy(dst, io.LimitReader(src, n))
		if err == nil && m != n {
			err = fmt.Errorf("%w: %s shrank while it was signed", ErrInputChanged, in)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := unchanged(src, st, in); err != nil {
		return nil, err
	}
	return s, nil
}

// sealPlan is what a seal signs: the attestation (made afresh, or read
// from an existing message and checked against the archive), its text,
// and the signatures kept from before.
type sealPlan struct {
	fresh bool
	att   *Attestation
	text  []byte   // the plaintext signed (LF line ends)
	kept  [][]byte // signature packets kept (sign --add)
	ext   *message // an external message to attach
	// The assembly's signature.asc, which a new one replaces (without
	// Add): its message, or why it cannot be read.
	old    *message
	oldErr error
}

// plan reads what opts ask to seal, without hashing anything yet.
func planSeal(r *assembly.Reader, signers []Signer, opts *SignOptions) (*sealPlan, error) {
	p := &sealPlan{}
	var base *message
	if opts.add() {
		data, err := readSignature(r)
		if err != nil {
			return nil, err
		}
		if data == nil {
			return nil, fmt.Errorf("%w: the assembly has no %s; sign it first, then add co-signatures", ErrNotSigned, assembly.SignatureName)
		}
		if base, err = parseMessage(data); err != nil {
			return nil, fmt.Errorf("the assembly's %s: %w", assembly.SignatureName, err)
		}
		if base.inline {
			return nil, fmt.Errorf("%w: the assembly's %s is an inline signed message (gpg --sign), which verifies but cannot be co-signed: signatures are added to a cleartext-signed one (gpg --clearsign); re-sign it, dropping its signatures (SignOptions.Replace), then co-sign", ErrMalformedSignature, assembly.SignatureName)
		}
		p.kept = base.raw
	} else if data, err := readSignature(r); err != nil {
		p.oldErr = err
	} else if data != nil {
		p.old, p.oldErr = parseMessage(data)
		if p.oldErr != nil && !bytes.Contains(data, []byte("-----BEGIN PGP ")) {
			// No OpenPGP block at all: no signature to drop.
			p.old, p.oldErr = nil, nil
		}
	}
	if sig := opts.signature(); sig != nil {
		m, err := parseMessageOf("the file", sig)
		if err != nil {
			return nil, fmt.Errorf("the signature to attach: %w", err)
		}
		if m.inline {
			return nil, fmt.Errorf("%w: the signature to attach is an inline signed message (gpg --sign): assemble writes cleartext-signed ones; sign the attestation with gpg --clearsign", ErrMalformedSignature)
		}
		if base != nil && !bytes.Equal(m.text, base.text) {
			return nil, fmt.Errorf("%w: the signature to add does not sign the text of the assembly's %s byte for byte (sign the attestation it holds, as 'assemble attest' or the signed text shows it)", ErrAttestationMismatch, assembly.SignatureName)
		}
		p.ext = m
		if base == nil {
			base = m
		}
	} else if len(signers) == 0 {
		return nil, ErrNoKey
	}
	if base == nil {
		p.fresh = true
		return p, nil
	}
	att, err := ParseAttestation(base.plaintext)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAttestationMismatch, err)
	}
	p.att, p.text = att, base.plaintext
	return p, nil
}

// readSignature returns r's signature.asc, or nil when it has none.
func readSignature(r *assembly.Reader) ([]byte, error) {
	sf := r.File(assembly.SignatureName)
	if sf == nil {
		return nil, nil
	}
	if sf.Size() > assembly.MaxSignatureSize {
		return nil, fmt.Errorf("%w: %s is %d bytes, at most %d allowed", ErrMalformedSignature, assembly.SignatureName, sf.Size(), assembly.MaxSignatureSize)
	}
	rc, err := sf.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformedSignature, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, assembly.MaxSignatureSize+1))
	if err != nil {
		return nil, fmt.Errorf("%w: reading %s: %v", ErrMalformedSignature, assembly.SignatureName, err)
	}
	return data, nil
}

// seal is Seal, with copyPrefix copying the archive's first n bytes to dst
// (nil: read them from r).
func seal(ctx context.Context, dst io.Writer, r *assembly.Reader, signers []Signer, opts *SignOptions, copyPrefix func(dst io.Writer, n int64) error) (*Sealed, error) {
	p, err := planSeal(r, signers, opts)
	if err != nil {
		return nil, err
	}
	if err := checkSigners(signers, opts); err != nil {
		return nil, err
	}
	if err := opts.check(r); err != nil {
		return nil, err
	}
	// Hash the archive (to attest it, or to check the attestation) while
	// the entries are copied.
	hash := func(ctx context.Context) error {
		if p.fresh {
			a, err := attest(ctx, r, opts)
			if err != nil {
				return err
			}
			body, err := a.Marshal()
			if err != nil {
				return err
			}
			// Without the final newline the JSON's "}" is the last signed line.
			p.att, p.text = a, bytes.TrimSuffix(body, []byte("\n"))
			return nil
		}
		if _, _, err := checkAttested(ctx, r, p.att, opts.progress(), false); err != nil {
			return fmt.Errorf("%w: %w", ErrAttestationMismatch, err)
		}
		return nil
	}
	var sealed *Sealed
	sign := func(ctx context.Context) ([]byte, time.Time, error) {
		var err error
		if sealed, err = p.sign(ctx, signers, opts); err != nil {
			return nil, time.Time{}, err
		}
		return sealed.Message, p.att.Timestamp, nil
	}
	// The sealed file's digest is taken from the bytes as they are
	// written (filedigest.Writer keeps a copied prefix a kernel copy).
	dw := filedigest.NewWriter(dst)
	defer dw.Close()
	if err := writeSealed(ctx, dw, r, hash, sign, copyPrefix); err != nil {
		return nil, err
	}
	d, err := dw.Digest()
	if err != nil {
		return nil, err
	}
	sealed.Digest, sealed.Size = d, dw.Size()
	return sealed, nil
}

// sign makes the new signatures over the plan's text and joins them with
// the kept ones into one message, then judges it: the new signatures must
// check and their keys pass the trust rule at their time and at the
// attestation's timestamp; every signature's time must pass the timestamp
// rule; with opts.Keyring, the message must verify under it.
func (p *sealPlan) sign(ctx context.Context, signers []Signer, opts *SignOptions) (*Sealed, error) {
	packets := append([][]byte(nil), p.kept...)
	var made openpgp.EntityList
	nMade := 0
	o := opts.with(p.att.Algorithm)
	for _, s := range signers {
		msg, keys, err := s.ClearSign(ctx, p.text, o)
		if err != nil {
			return nil, err
		}
		m, err := parseMessage(msg)
		if err != nil {
			return nil, fmt.Errorf("the signer's message: %w", err)
		}
		if !bytes.Equal(m.plaintext, p.text) {
			return nil, errors.New("the signer signed another text than the attestation")
		}
		packets = append(packets, m.raw...)
		nMade += len(m.raw)
		made = append(made, keys...)
	}
	if p.ext != nil {
		packets = append(packets, p.ext.raw...)
	}
	added := len(packets) - len(p.kept)
	joined := &message{plaintext: p.text}
	for _, raw := range packets {
		sig, err := parseSignature(raw)
		if err != nil {
			return nil, err
		}
		joined.sigs = append(joined.sigs, sig)
	}
	msg, err := writeMessage(p.text, joined.hashList(), packets)
	if err != nil {
		return nil, err
	}
	// msg is what parseMessage reads back as joined (the tests check it).
	joined.raw, joined.text = packets, canonicalText(p.text)
	m := joined
	s := &Sealed{Attestation: p.att, Message: msg, Added: added}
	ring := NewKeyring(made, opts.keyring())
	for i, sig := range m.sigs {
		s.Signatures = append(s.Signatures, judgeSignature(ring, nil, sig, m.text, opts.now(), sig.CreationTime, p.att.Timestamp))
		if i >= len(p.kept) && i < len(p.kept)+nMade && !s.Signatures[i].Trusted {
			return nil, signerError(s.Signatures[i].Err)
		}
	}
	if err := checkNewSigners(s.Signatures, len(p.kept)); err != nil {
		return nil, err
	}
	if !opts.replace() {
		if err := p.checkDropped(s.Signatures, ring, opts.now()); err != nil {
			return nil, err
		}
	}
	if err := checkTimes(m.sigs, p.att, opts.now()); err != nil {
		return nil, err
	}
	if kr := opts.keyring(); kr != nil {
		if _, _, _, err := verifySignatures(m, NewKeyring(kr), nil, Policy{}, opts.now()); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// checkDropped refuses a new signature.asc (whose signatures are sigs)
// that replaces one holding signatures by keys that do not sign again,
// naming them (through ring when it holds their keys).
func (p *sealPlan) checkDropped(sigs []Signature, ring *Keyring, now time.Time) error {
	const fix = "co-sign to keep them (SignOptions.Add), or re-sign dropping them (SignOptions.Replace)"
	if p.oldErr != nil {
		return fmt.Errorf("%w: the assembly's %s cannot be read (%v); %s", ErrWouldDropSignatures, assembly.SignatureName, p.oldErr, fix)
	}
	if p.old == nil {
		return nil
	}
	var dropped []string
	for _, sig := range p.old.sigs {
		o := judgeSignature(ring, nil, sig, p.old.text, now, sig.CreationTime)
		if slices.ContainsFunc(sigs, func(n Signature) bool { return sameSigner(n, o) }) {
			continue // signs again
		}
		who := issuer(sig)
		if o.Fingerprint != "" {
			who = fmt.Sprintf("%q (%s)", o.UserID, o.Fingerprint)
		}
		if !slices.Contains(dropped, who) {
			dropped = append(dropped, who)
		}
	}
	if len(dropped) == 0 {
		return nil
	}
	return fmt.Errorf("%w: it is signed by %s, whose signature would be dropped; %s", ErrWouldDropSignatures, strings.Join(dropped, ", "), fix)
}

// checkNewSigners refuses a new signature (sigs[kept:]) by a key that made
// an earlier one: the same primary key when both keys are at hand, else the
// same issuer key ID, or a key ID of the other's key.
func checkNewSigners(sigs []Signature, kept int) error {
	for i := kept; i < len(sigs); i++ {
		for j := range i {
			if sameSigner(sigs[i], sigs[j]) {
				who := sigs[i].KeyID
				if sigs[i].Fingerprint != "" {
					who = fmt.Sprintf("%q (%s)", sigs[i].UserID, sigs[i].Fingerprint)
				}
				return fmt.Errorf("%w: %s made signature %d of %d and signature %d too; it counts once, so sign with another key", ErrAlreadySigned, who, j+1, len(sigs), i+1)
			}
		}
	}
	return nil
}

// sameSigner tells whether two signatures are by one primary key, as far
// as what is known of their keys tells.
func sameSigner(a, b Signature) bool {
	if a.Fingerprint != "" && b.Fingerprint != "" {
		return a.Fingerprint == b.Fingerprint
	}
	return a.KeyID == b.KeyID || ownsKeyID(a.signer, b.KeyID) || ownsKeyID(b.signer, a.KeyID)
}

// ownsKeyID tells whether e's primary key or a subkey has the key ID id
// (16 upper-case hex digits).
func ownsKeyID(e *openpgp.Entity, id string) bool {
	if e == nil {
		return false
	}
	if fmt.Sprintf("%016X", e.PrimaryKey.KeyId) == id {
		return true
	}
	for _, sk := range e.Subkeys {
		if fmt.Sprintf("%016X", sk.PublicKey.KeyId) == id {
			return true
		}
	}
	return false
}

// checkSigners refuses, before anything is read or written, the keys of
// the key signers that the trust rule refuses now (the other signers are
// judged by the signatures they make).
func checkSigners(signers []Signer, opts *SignOptions) error {
	for _, s := range signers {
		if ks, ok := s.(keySigner); ok {
			if _, err := ks.check(opts); err != nil {
				return err
			}
		}
	}
	return nil
}

// signerError says why a key may not sign, in the signer's terms.
func signerError(err error) error {
	switch {
	case errors.Is(err, ErrKeyRevoked):
		return fmt.Errorf("%w: %v", ErrSignerRevoked, err)
	case errors.Is(err, ErrKeyExpired):
		return fmt.Errorf("%w: %v", ErrSignerExpired, err)
	}
	return fmt.Errorf("%w: %v", ErrNoSigningKey, err)
}

// writeSealed writes the sealed copy of r to dst through
// assembly.AppendSignature: hash runs while the kept entries are copied
// (by copyPrefix, or from r), then sign gives signature.asc. A failed
// hash stops the copy; a failed copy stops the hash.
func writeSealed(ctx context.Context, dst io.Writer, r *assembly.Reader, hash func(context.Context) error,
	sign func(context.Context) ([]byte, time.Time, error), copyPrefix func(dst io.Writer, n int64) error) error {
	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hashed := make(chan error, 1)
	go func() {
		err := hash(hctx)
		if err != nil {
			cancel(err)
		}
		hashed <- err
	}()
	waited := false
	err := assembly.AppendSignature(hctx, dst, r, copyPrefix, func() ([]byte, time.Time, error) {
		waited = true
		if err := <-hashed; err != nil {
			return nil, time.Time{}, err
		}
		return sign(ctx)
	})
	if !waited {
		// The copy failed (or the hash stopped it: err is then the hash's
		// error, the context's cause): stop the hash, and wait for it.
		cancel(err)
		<-hashed
	}
	return err
}

// SignedText returns the text signed in r's signature.asc (the
// attestation, as it was signed, LF line ends), without verifying
// anything: for a co-signer who signs it elsewhere, then adds that
// signature with Seal (SignOptions.Add and Signature).
func SignedText(r *assembly.Reader) ([]byte, error) {
	data, err := readSignature(r)
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, fmt.Errorf("%w: the assembly has no %s", ErrNotSigned, assembly.SignatureName)
	}
	m, err := parseMessage(data)
	if err != nil {
		return nil, err
	}
	return m.plaintext, nil
}
