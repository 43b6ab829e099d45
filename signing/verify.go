package signing

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
	"github.com/cloud-assembly/assemble/assembly"
)

// MaxClockSkew is how far before the attestation's timestamp a signature
// may be made, and how far in the future.
const MaxClockSkew = 5 * time.Minute

// VerifyOptions tune Verify. The zero value (or nil) is the safe default.
type VerifyOptions struct {
	// Now is the time revocation, "signature from the future" and a
	// signature's own expiration time are judged at (default time.Now). Key
	// expiry is judged at the signature's time.
	Now func() time.Time
	// Check tunes step 5, assembly.Check (Strict turns its warnings into
	// errors).
	Check assembly.CheckOptions
	// Progress, if set, is called as the files are hashed, with the bytes
	// hashed so far and the total, one call at a time.
	Progress func(done, total int64)
	// Policy says which signatures are needed (default: one trusted).
	Policy Policy
	// Known are keys that are not trusted but name a signer the trusted
	// keys do not hold (its user ID and fingerprint, as gpg --verify names
	// a key in its keyring that it does not trust). They never count.
	Known openpgp.EntityList
	// ContentSums takes each file's own SHA-256 beside its salted hash,
	// from the same bytes (Verified.ContentSums): what a provenance's
	// subject is checked against.
	ContentSums bool
}

func (o *VerifyOptions) policy() Policy {
	if o == nil {
		return Policy{}
	}
	return o.Policy
}

func (o *VerifyOptions) known() *Keyring {
	if o == nil || len(o.Known) == 0 {
		return nil
	}
	return NewKeyring(o.Known)
}

func (o *VerifyOptions) check() assembly.CheckOptions {
	if o == nil {
		return assembly.CheckOptions{}
	}
	return o.Check
}

func (o *VerifyOptions) progress() func(done, total int64) {
	if o == nil {
		return nil
	}
	return o.Progress
}

func (o *VerifyOptions) now() time.Time {
	if o == nil || o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

// Verified is a successfully verified assembly. It is the only way this
// package gives out file content: Open and ReadFile return bytes whose size
// and salted hash match the signed attestation.
type Verified struct {
	r           *assembly.Reader
	att         *Attestation
	signer      *openpgp.Entity
	key         *packet.PublicKey
	sigTime     time.Time
	bytes       int64
	fingerprint string
	report      *assembly.Report
	signatures  []Signature
	policy      PolicyResult
	sums        map[string][sha256.Size]byte
}

// Signer is the trusted entity that made the first trusted signature (in
// the order of signature.asc).
func (v *Verified) Signer() *openpgp.Entity { return v.signer }

// Signatures reports every signature of signature.asc, in its order:
// trusted ones and those that do not count (by keys outside the trusted set).
func (v *Verified) Signatures() []Signature { return v.signatures }

// Policy reports how the signatures met the policy.
func (v *Verified) Policy() PolicyResult { return v.policy }

// Fingerprint is the primary key fingerprint of Signer, upper-case hex.
func (v *Verified) Fingerprint() string { return v.fingerprint }

// SigningKeyFingerprint is the fingerprint of the (sub)key that signed.
func (v *Verified) SigningKeyFingerprint() string { return fmt.Sprintf("%X", v.key.Fingerprint) }

// UserID is the signer's primary user ID.
func (v *Verified) UserID() string { return UserID(v.signer) }

// Time is the creation time of Signer's signature.
func (v *Verified) Time() time.Time { return v.sigTime }

// Attestation is the signed attestation.
func (v *Verified) Attestation() *Attestation { return v.att }

// Files lists the verified files (every file but signature.asc), sorted.
func (v *Verified) Files() []string { return v.att.Names() }

// Bytes is the total uncompressed size of the verified files.
func (v *Verified) Bytes() int64 { return v.bytes }

// Open streams the named verified file. The content is read from the archive
// again and checked as it goes: reading stops one byte past the attested
// size, and the final Read returns an error wrapping ErrSizeMismatch or
// ErrDigestMismatch instead of io.EOF if the archive changed since Verify.
// Treat such an error as fatal and discard what was read; ReadFile does so.
func (v *Verified) Open(name string) (io.ReadCloser, error) {
	it, ok := v.att.Items[name]
	f := v.r.File(name)
	if !ok || f == nil {
		return nil, fmt.Errorf("%w: %q", ErrMissing, name)
	}
	rc, err := openContent(f)
	if err != nil {
		return nil, err
	}
	return &checkedReader{rc: rc, r: io.LimitReader(rc, it.Size+1), h: v.att.Algorithm.New(), nonce: v.att.Nonce, name: name, want: it}, nil
}

// ReadFile returns the named verified file's content, checked in full
// before it is returned.
func (v *Verified) ReadFile(name string) ([]byte, error) {
	rc, err := v.Open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

type checkedReader struct {
	rc io.ReadCloser
	r  io.Reader
	h  interface {
		Write([]byte) (int, error)
		Sum([]byte) []byte
	}
	nonce []byte
	name  string
	want  Item
	n     int64
	err   error
}

func (c *checkedReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	c.n += int64(n)
	if c.n > c.want.Size {
		c.err = &SizeError{Name: c.name, Want: c.want.Size, Got: c.n}
		return 0, c.err
	}
	if err == io.EOF {
		c.h.Write(c.nonce)
		if c.n != c.want.Size {
			c.err = &SizeError{Name: c.name, Want: c.want.Size, Got: c.n}
		} else if got := c.h.Sum(nil); !bytes.Equal(got, c.want.Hash) {
			c.err = &DigestError{Name: c.name, Want: c.want.Hash, Got: got}
		} else {
			c.err = io.EOF
		}
		return n, c.err
	}
	if err != nil {
		c.err = err
	}
	return n, err
}

func (c *checkedReader) Close() error { return c.rc.Close() }

// Verify checks a signed assembly before anything in it is used. r has
// already passed the structural checks of assembly.NewReader. Verify then:
//
//  1. reads signature.asc, which must be exactly one cleartext-signed
//     message with no text around it, holding one or more signature
//     packets (one per signer), none over MD5 or SHA-1;
//  2. judges each signature against trusted (which must not be empty), with
//     every copy of a key merged (see Keyring): a signature by a key outside
//     the trusted set is reported and does not count; a trusted key must
//     have existed and not have been expired when it signed and at the
//     attestation's timestamp, and must not be revoked now (any revocation
//     in any copy, of the key, the signing subkey or the primary user ID),
//     and its signature must check, or the whole verification fails;
//  3. parses the attestation from the verified text only, strictly, and
//     checks the timestamp rule (see checkTimes: every signature any time
//     after the attestation, less MaxClockSkew, none from the future) and
//     the policy (VerifyOptions.Policy: how many distinct trusted keys, which
//     ones, which algorithms), then that the attestation lists exactly the
//     archive's files other than signature.asc;
//  4. streams every file once, in parallel, reading no more than its attested
//     size plus one byte, and compares its size and salted hash;
//  5. only then runs assembly.Check on the verified manifest.json and the
//     attested files: the verdict every command gives on the same bytes.
//
// Every error of steps 1 to 4 wraps ErrVerification and one more specific
// sentinel (a failure of steps 2 and 3 is a *SignaturesError reporting
// every signature); step 5 fails with an *assembly.CheckError (its
// findings match assembly.ErrManifest and their rules' sentinels).
//
// ctx stops the hashing of step 4.
func Verify(ctx context.Context, r *assembly.Reader, trusted openpgp.EntityList, opts *VerifyOptions) (*Verified, error) {
	if len(trusted) == 0 {
		return nil, fmt.Errorf("%w: no trusted keys given", ErrUnknownSigner)
	}
	data, err := readSignature(r)
	if err != nil {
		return nil, err
	}
	if data == nil {
		return nil, ErrUnsigned
	}
	v, err := verifyCleartext(data, trusted, opts)
	if err != nil {
		return nil, err
	}
	v.r = r
	if v.bytes, v.sums, err = checkAttested(ctx, r, v.att, opts.progress(), opts != nil && opts.ContentSums); err != nil {
		return nil, err
	}
	// Step 5: only now is the assembly checked, from verified bytes.
	if v.report, err = v.check(opts.check()); err != nil {
		return nil, err
	}
	return v, nil
}

// ContentSums are the SHA-256 of each attested file's content, by name,
// taken from the verified bytes; nil unless VerifyOptions.ContentSums.
func (v *Verified) ContentSums() map[string][sha256.Size]byte { return v.sums }

// check runs assembly.Check on the verified manifest.json and the attested
// files (their sizes are the attested ones).
func (v *Verified) check(opts assembly.CheckOptions) (*assembly.Report, error) {
	files := assembly.NewFileSet()
	for name, it := range v.att.Items {
		files.Add(name, it.Size)
	}
	var b []byte
	if it, ok := v.att.Items[assembly.ManifestName]; ok && it.Size <= assembly.MaxManifestSize {
		var err error
		if b, err = v.ReadFile(assembly.ManifestName); err != nil {
			return nil, err
		}
	}
	return assembly.Check(b, files, opts)
}

// Manifest is the verified assembly's parsed and checked manifest.json.
func (v *Verified) Manifest() *assembly.Manifest { return v.report.Manifest }

// Report is the check's report: warnings and notes, graph, deploy order.
func (v *Verified) Report() *assembly.Report { return v.report }

func verifyCleartext(data []byte, trusted openpgp.EntityList, opts *VerifyOptions) (*Verified, error) {
	if len(trusted) == 0 {
		return nil, fmt.Errorf("%w: no trusted keys given", ErrUnknownSigner)
	}
	m, err := parseMessage(data)
	if err != nil {
		return nil, err
	}
	att, sigs, pol, err := verifySignatures(m, NewKeyring(trusted), opts.known(), opts.policy(), opts.now())
	if err != nil {
		return nil, err
	}
	v := &Verified{att: att, signatures: sigs, policy: pol}
	for _, s := range sigs {
		if s.Trusted {
			v.signer, v.key, v.sigTime, v.fingerprint = s.signer, s.key, s.Time, s.Fingerprint
			break
		}
	}
	return v, nil
}

// weakSignatureHash reads the hash algorithm of the first packet in body
// when it is a version 4 to 6 signature packet over MD5 (1), SHA-1 (2) or
// RIPEMD-160 (3) (RFC 9580 9.5; the hash is the fourth byte of the body).
func weakSignatureHash(body []byte) (string, bool) {
	if len(body) < 2 || body[0]&0x80 == 0 {
		return "", false
	}
	var tag byte
	var hdr int
	if body[0]&0x40 != 0 { // new format: one-byte tag, then the length
		tag = body[0] & 0x3f
		switch l := body[1]; {
		case l < 192:
			hdr = 2
		case l < 224:
			hdr = 3
		case l == 255:
			hdr = 6
		default:
			return "", false // partial length
		}
	} else { // old format: tag and length type in one byte
		tag = body[0] >> 2 & 0x0f
		switch body[0] & 3 {
		case 0:
			hdr = 2
		case 1:
			hdr = 3
		case 2:
			hdr = 5
		default:
			return "", false
		}
	}
	if tag != 2 || len(body) < hdr+4 || body[hdr] < 4 || body[hdr] > 6 {
		return "", false
	}
	switch body[hdr+3] {
	case 1:
		return "MD5", true
	case 2:
		return "SHA-1", true
	case 3:
		return "RIPEMD-160", true
	}
	return "", false
}

func hashHeaderName(h crypto.Hash) string {
	switch h {
	case crypto.SHA224:
		return "SHA224"
	case crypto.SHA256:
		return "SHA256"
	case crypto.SHA384:
		return "SHA384"
	case crypto.SHA512:
		return "SHA512"
	case crypto.SHA3_256:
		return "SHA3-256"
	case crypto.SHA3_512:
		return "SHA3-512"
	}
	return h.String()
}

// checkAttested compares the archive's files with the attestation, then
// streams each one once, in parallel, and returns their total size. It is
// the one check that an archive is what an attestation says: Verify runs
// it, and so does signing an existing attestation (an external signature,
// a co-signature).
func checkAttested(ctx context.Context, r *assembly.Reader, att *Attestation, progress func(done, total int64), plain bool) (int64, map[string][sha256.Size]byte, error) {
	files := contentFiles(r)
	inArchive := make(map[string]bool, len(files))
	for _, f := range files {
		inArchive[f.Name()] = true
		if _, ok := att.Items[f.Name()]; !ok {
			return 0, nil, fmt.Errorf("%w: %q is in the archive but not in the signed attestation", ErrUnlisted, f.Name())
		}
	}
	for _, name := range att.Names() {
		if !inArchive[name] {
			return 0, nil, fmt.Errorf("%w: %q is attested but not in the archive", ErrMissing, name)
		}
	}
	// Headers first: a wrong stated size fails before anything is inflated.
	for _, f := range files {
		if it := att.Items[f.Name()]; f.Size() != it.Size {
			return 0, nil, &SizeError{Name: f.Name(), Want: it.Size, Got: f.Size()}
		}
	}
	ds, err := hashAll(ctx, files, att.Algorithm, att.Nonce,
		func(f *assembly.File) int64 { return att.Items[f.Name()].Size + 1 },
		func(f *assembly.File, d digest) error {
			it := att.Items[f.Name()]
			if d.size != it.Size {
				return &SizeError{Name: f.Name(), Want: it.Size, Got: d.size}
			}
			if !bytes.Equal(d.sum, it.Hash) {
				return &DigestError{Name: f.Name(), Want: it.Hash, Got: d.sum}
			}
			return nil
		}, progress, plain)
	if err != nil {
		if errors.Is(err, assembly.ErrCorrupt) {
			// The data does not match its own headers (CRC-32, length,
			// bytes after the deflate stream): refused whatever it hashes to.
			return 0, nil, fmt.Errorf("%w: %w", ErrVerification, err)
		}
		if !errors.Is(err, ErrVerification) {
			// An I/O error: the content cannot match what was signed.
			return 0, nil, fmt.Errorf("%w: %w", ErrDigestMismatch, err)
		}
		return 0, nil, err
	}
	var n int64
	var sums map[string][sha256.Size]byte
	if plain {
		sums = make(map[string][sha256.Size]byte, len(files))
	}
	for i, f := range files {
		n += f.Size()
		if plain {
			sums[f.Name()] = ds[i].plain
		}
	}
	return n, sums, nil
}
