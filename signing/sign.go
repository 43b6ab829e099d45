package signing

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/cloud-assembly/assemble/assembly"
)

// SignOptions tune Seal, Attest and StreamSigner. The zero value (or nil) signs with SHA256, the
// current time and crypto/rand.
type SignOptions struct {
	// Algorithm hashes the files in the attestation, and is also the
	// OpenPGP signature's digest: crypto.SHA256 (default), SHA384 or SHA512.
	Algorithm crypto.Hash
	// Now returns the signing time (default time.Now). Tests inject it to
	// make signatures byte-stable and to sign before a key's expiry.
	Now func() time.Time
	// Rand is the source of the nonce and of signature randomness (default
	// crypto/rand). Never reuse a deterministic source outside tests.
	Rand io.Reader
	// Warn, when set, is given every warning and note of the assembly
	// check that precedes signing (errors refuse the signing instead).
	Warn func(assembly.Finding)
	// Progress, if set, is called as the files are hashed, with the bytes
	// hashed so far and the total, one call at a time.
	Progress func(done, total int64)
	// Add (Seal) keeps the signatures of the assembly's signature.asc and
	// adds new ones over its attestation, checked first against the
	// archive: co-signing.
	Add bool
	// Replace (Seal, without Add) lets the new signature.asc drop the
	// signatures of the assembly's signature.asc by keys that do not sign
	// again. Without it, Seal refuses to drop any (ErrWouldDropSignatures),
	// naming their signers: co-sign with Add, or re-sign with Replace.
	Replace bool
	// Signature (Seal) is a cleartext-signed attestation made elsewhere, to
	// attach (or, with Add, whose signatures to add) instead of signing.
	Signature []byte
	// Keyring (Seal), with Signature: a signature must verify under these
	// keys, as Verify would judge it.
	Keyring openpgp.EntityList
}

func (o *SignOptions) add() bool { return o != nil && o.Add }

func (o *SignOptions) replace() bool { return o != nil && o.Replace }

func (o *SignOptions) signature() []byte {
	if o == nil {
		return nil
	}
	return o.Signature
}

func (o *SignOptions) keyring() openpgp.EntityList {
	if o == nil {
		return nil
	}
	return o.Keyring
}

// with returns a copy of o that signs with digest alg, at a fixed time.
func (o *SignOptions) with(alg crypto.Hash) *SignOptions {
	c := SignOptions{}
	if o != nil {
		c = *o
	}
	now := o.now()
	c.Algorithm, c.Now = alg, func() time.Time { return now }
	return &c
}

// check runs assembly.Check on r, the verdict verify will give: an
// invalid assembly is not signed.
func (o *SignOptions) check(r *assembly.Reader) error {
	rep, err := r.Check(assembly.CheckOptions{})
	if rep != nil && o != nil && o.Warn != nil {
		for _, f := range rep.Warnings() {
			o.Warn(f)
		}
	}
	return err
}

func (o *SignOptions) progress() func(done, total int64) {
	if o == nil {
		return nil
	}
	return o.Progress
}

func (o *SignOptions) now() time.Time {
	if o == nil || o.Now == nil {
		return time.Now().UTC().Truncate(time.Second)
	}
	return o.Now().UTC().Truncate(time.Second)
}

func (o *SignOptions) rand() io.Reader {
	if o == nil || o.Rand == nil {
		return rand.Reader
	}
	return o.Rand
}

func (o *SignOptions) algorithm() (crypto.Hash, error) {
	if o == nil || o.Algorithm == 0 {
		return crypto.SHA256, nil
	}
	switch o.Algorithm {
	case crypto.SHA256, crypto.SHA384, crypto.SHA512:
		return o.Algorithm, nil
	}
	return 0, fmt.Errorf("algorithm %v not allowed (want SHA256, SHA384 or SHA512)", o.Algorithm)
}

// Attest makes the attestation that Seal would sign for r (fresh nonce,
// timestamp opts.Now), for signing elsewhere: gpg --clearsign, a
// smartcard, then Seal with SignOptions.Signature. It refuses, as Seal
// does, an assembly that assembly.Check finds invalid (opts.Warn gets the
// check's warnings), then hashes every file but signature.asc, in
// parallel, each read once.
func Attest(ctx context.Context, r *assembly.Reader, opts *SignOptions) (*Attestation, error) {
	if err := opts.check(r); err != nil {
		return nil, err
	}
	return attest(ctx, r, opts)
}

// attest is Attest without the check (Seal has made it).
func attest(ctx context.Context, r *assembly.Reader, opts *SignOptions) (*Attestation, error) {
	alg, nonce, err := newNonce(opts)
	if err != nil {
		return nil, err
	}
	files := contentFiles(r)
	sums, err := hashAll(ctx, files, alg, nonce,
		func(f *assembly.File) int64 { return f.Size() + 1 },
		func(f *assembly.File, d digest) error {
			if d.size != f.Size() {
				return fmt.Errorf("%w: %q: header says %d bytes, content has %d or more", assembly.ErrFormat, f.Name(), f.Size(), d.size)
			}
			return nil
		}, opts.progress(), false)
	if err != nil {
		return nil, err
	}
	a := &Attestation{Timestamp: opts.now(), Algorithm: alg, Nonce: nonce, Items: make(map[string]Item, len(files))}
	for i, f := range files {
		a.Items[f.Name()] = Item{Size: sums[i].size, Hash: sums[i].sum}
	}
	return a, nil
}

// newNonce returns the attestation algorithm of opts and a nonce for it,
// drawn from opts.Rand: MinNonceSize bytes, or the digest's size when it
// is larger.
func newNonce(opts *SignOptions) (crypto.Hash, []byte, error) {
	alg, err := opts.algorithm()
	if err != nil {
		return 0, nil, err
	}
	nonce := make([]byte, max(MinNonceSize, alg.Size()))
	if _, err := io.ReadFull(opts.rand(), nonce); err != nil {
		return 0, nil, fmt.Errorf("reading random nonce: %w", err)
	}
	return alg, nonce, nil
}

// contentFiles lists r's files other than signature.asc, in archive order.
func contentFiles(r *assembly.Reader) []*assembly.File {
	var files []*assembly.File
	for _, f := range r.Files() {
		if f.Name() != assembly.SignatureName {
			files = append(files, f)
		}
	}
	return files
}

// addArmorChecksum re-armors the signature block of a cleartext message
// with the CRC-24 checksum line that go-crypto leaves out (RFC 4880 §6.2);
// GnuPG 2.2 misreads some armor without it. The packets are unchanged.
func addArmorChecksum(msg []byte) ([]byte, error) {
	i := bytes.Index(msg, []byte("\n-----BEGIN PGP SIGNATURE-----"))
	if i < 0 {
		return nil, errors.New("no signature block in the clear-signed message")
	}
	blk, err := armor.Decode(bytes.NewReader(msg[i+1:]))
	if err != nil {
		return nil, fmt.Errorf("re-armoring signature: %w", err)
	}
	packets, err := io.ReadAll(blk.Body)
	if err != nil {
		return nil, fmt.Errorf("re-armoring signature: %w", err)
	}
	out := bytes.NewBuffer(append([]byte{}, msg[:i+1]...))
	w, err := armor.Encode(out, "PGP SIGNATURE", nil)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(packets); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// unchanged checks that the open file f (stat st when it was opened) was
// not written meanwhile, and that name still names it.
func unchanged(f *os.File, st os.FileInfo, name string) error {
	now, err := f.Stat()
	if err != nil {
		return err
	}
	if now.Size() != st.Size() || !now.ModTime().Equal(st.ModTime()) {
		return fmt.Errorf("%w: %s was written to while it was signed: sign it again", ErrInputChanged, name)
	}
	if cur, err := os.Stat(name); err != nil || !os.SameFile(cur, st) {
		return fmt.Errorf("%w: %s was replaced while it was signed: sign it again", ErrInputChanged, name)
	}
	return nil
}
