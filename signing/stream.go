package signing

import (
	"bytes"
	"context"
	"crypto"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
)

// A StreamSigner signs an assembly while an assembly.Writer writes it (it
// is an assembly.Sealer: WriterOptions.Sealer): it hashes each entry's
// content, salted with a fresh nonce, as the writer reads it, and at the
// end checks what was written (assembly.Check, the verdict Seal gives),
// clear-signs the attestation and appends signature.asc and the central
// directory. The signed assembly is written in one pass, never read again,
// and is byte for byte what the writer followed by Seal would make with the
// same nonce, signing time and randomness.
type StreamSigner struct {
	ctx      context.Context
	signers  []Signer
	opts     *SignOptions
	alg      crypto.Hash
	nonce    []byte
	entries  []*streamEntry
	manifest *bytes.Buffer
	sealed   *Sealed
}

type streamEntry struct {
	name string
	h    hash.Hash
	size int64
}

func (e *streamEntry) Write(p []byte) (int, error) {
	e.size += int64(len(p))
	return e.h.Write(p)
}

// NewStreamSigner returns a StreamSigner for the signers (refusing, before
// anything is written, a key the trust rule refuses now). Its nonce is
// drawn now, from opts.Rand, as Attest draws it.
func NewStreamSigner(ctx context.Context, signers []Signer, opts *SignOptions) (*StreamSigner, error) {
	if len(signers) == 0 {
		return nil, ErrNoKey
	}
	if err := checkSigners(signers, opts); err != nil {
		return nil, err
	}
	alg, nonce, err := newNonce(opts)
	if err != nil {
		return nil, err
	}
	return &StreamSigner{ctx: ctx, signers: signers, opts: opts, alg: alg, nonce: nonce}, nil
}

// Entry is the writer the assembly writer gives entry name's content to.
func (s *StreamSigner) Entry(name string) io.Writer {
	e := &streamEntry{name: name, h: s.alg.New()}
	s.entries = append(s.entries, e)
	if name == assembly.ManifestName {
		// Kept for the check, up to one byte past the limit it enforces.
		s.manifest = &bytes.Buffer{}
		return io.MultiWriter(e, &limitedBuffer{s.manifest, assembly.MaxManifestSize + 1})
	}
	return e
}

// Seal makes the attestation of the entries written, checks them as Seal
// would, signs, and returns signature.asc's content and date, which the
// writer appends.
func (s *StreamSigner) Seal() ([]byte, time.Time, error) {
	a := &Attestation{Timestamp: s.opts.now(), Algorithm: s.alg, Nonce: s.nonce, Items: make(map[string]Item, len(s.entries))}
	files := assembly.NewFileSet()
	for _, e := range s.entries {
		if e.name == assembly.SignatureName {
			return nil, time.Time{}, fmt.Errorf("the assembly holds a file named %s, which signing writes", assembly.SignatureName)
		}
		e.h.Write(s.nonce)
		a.Items[e.name] = Item{Size: e.size, Hash: e.h.Sum(nil)}
		files.Add(e.name, e.size)
	}
	var manifest []byte
	if s.manifest != nil {
		manifest = s.manifest.Bytes()
	}
	rep, err := assembly.Check(manifest, files, assembly.CheckOptions{})
	if rep != nil && s.opts != nil && s.opts.Warn != nil {
		for _, f := range rep.Warnings() {
			s.opts.Warn(f)
		}
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	body, err := a.Marshal()
	if err != nil {
		return nil, time.Time{}, err
	}
	p := &sealPlan{fresh: true, att: a, text: bytes.TrimSuffix(body, []byte("\n"))}
	if s.sealed, err = p.sign(s.ctx, s.signers, s.opts); err != nil {
		return nil, time.Time{}, err
	}
	return s.sealed.Message, a.Timestamp, nil
}

// Sealed is the result, once the writer is done (nil before).
func (s *StreamSigner) Sealed() *Sealed { return s.sealed }

// limitedBuffer keeps the first n bytes written to it and drops the rest.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
