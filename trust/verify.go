package trust

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/provenance"
	"github.com/cloud-assembly/assemble/signing"
)

// VerifyOptions tune Verify. The zero value requires a signature.
type VerifyOptions struct {
	// AllowUnsigned accepts an unsigned assembly after checking its
	// structure and manifest only: Result.Signed is false and nothing is
	// authenticated.
	AllowUnsigned bool
	// Check tunes the one check of the manifest (Strict turns its
	// warnings into errors).
	Check assembly.CheckOptions
	// Progress, if set, is called as the files are hashed, with the bytes
	// hashed so far and the total.
	Progress func(done, total int64)
	// SkipDigest leaves Result.SHA256 zero instead of hashing the whole
	// file beside the verification (a reader whose every read costs, such
	// as a remote object whose digest is known otherwise).
	SkipDigest bool
	// Provenance evaluates the assembly's provenance (Result.Provenance)
	// even when the trust has no provenance policy: the rules of an empty
	// policy (present, well formed, subject) are then recorded, not
	// enforced. With a policy they are enforced either way.
	Provenance bool
	// Now is the time the provenance's age is judged at (default
	// time.Now).
	Now func() time.Time
	// Bundles are provenance bundles about the file (attest --provenance,
	// an OCI referrer): each must be signed by a bundle key of the trust's
	// provenance policy and name the file's SHA-256
	// (provenance.VerifyBundle), or the verification fails.
	Bundles []NamedBundle
	// Digest, when set, is the SHA-256 the whole file must have: the
	// assembly's name, as build, sign, verify and push print it. Another
	// file fails with ErrWrongDigest, whatever it holds.
	Digest digest.Digest
}

// A Result is an assembly Verify accepted.
type Result struct {
	// Name is the assembly's name as the caller gave it.
	Name string
	// Size is its size in bytes, SHA256 its SHA-256 (what build, sign
	// and verify print; zero with SkipDigest).
	Size   int64
	SHA256 digest.Digest
	// Reader reads its structure. Verified reads its files, checked
	// against the signed attestation; nil when it is unsigned (read
	// through Reader then: nothing was authenticated).
	Reader   *assembly.Reader
	Verified *signing.Verified
	// Signed is whether it has a signature.asc; Authenticated whether a
	// trusted key signed it as the policy asks.
	Signed, Authenticated bool
	// Report is the check's report (its warnings); Manifest the manifest.
	Report   *assembly.Report
	Manifest *assembly.Manifest
	// Signatures are every signature of signature.asc, and PolicyResult
	// how they met Policy (empty when unsigned).
	Signatures   []signing.Signature
	PolicyResult signing.PolicyResult
	Policy       signing.Policy
	// Provenance is how the provenance met the trust's provenance policy
	// (nil when neither it nor VerifyOptions.Provenance asked).
	Provenance *provenance.Verdict
	// Bundles are the VerifyOptions.Bundles that verified.
	Bundles []*provenance.BundleResult
	// PolicyFile is the policy file the trust was loaded from (nil when
	// none): its deploy section is package deploy's (deploy.PolicyOf).
	PolicyFile *PolicyFile
}

// Files is the number of the assembly's files but signature.asc: what
// Verify authenticates, and what every command counts.
func (r *Result) Files() int {
	if r.Signed {
		return len(r.Reader.Files()) - 1
	}
	return len(r.Reader.Files())
}

// Bytes is the size of those files.
func (r *Result) Bytes() int64 {
	if r.Verified != nil {
		return r.Verified.Bytes()
	}
	var n int64
	for _, f := range r.Reader.Files() {
		if f.Name() != assembly.SignatureName {
			n += f.Size()
		}
	}
	return n
}

// Verify opens the assembly read from r (size bytes) and checks it before
// anything in it is used: the ZIP structure from the raw bytes; that
// signature.asc is signed by keys of t as t.Policy asks, by keys valid
// when they signed and not revoked; the signed attestation; every file's
// size and salted hash; then the one check of the manifest. An unsigned
// assembly fails with signing.ErrUnsigned unless opts.AllowUnsigned; a
// signed one needs t (nil fails with ErrNoKeyring).
//
// On failure the Result returned beside the error says as much as was
// learnt (Signed, Signatures, PolicyResult); it is never nil. name is
// what errors call the assembly.
func Verify(ctx context.Context, name string, r io.ReaderAt, size int64, t *Trust, opts VerifyOptions) (*Result, error) {
	res := &Result{Name: name, Size: size}
	if t != nil {
		res.Policy = t.Policy
		res.PolicyFile = t.PolicyFile
	}
	rd, err := assembly.NewReader(r, size)
	if err != nil {
		return res, err
	}
	res.Reader = rd
	digestOf := func() (digest.Digest, error) { return digest.Digest{}, nil }
	if d, ok := r.(Digester); ok && !opts.SkipDigest {
		// The reader hashes the bytes as they pass: asked when the
		// verification has read them, it reads only what it did not.
		digestOf = func() (digest.Digest, error) { return d.SHA256(ctx) }
	} else if !opts.SkipDigest {
		dctx, cancel := context.WithCancel(ctx)
		wait := startDigest(dctx, r, size)
		digestOf = wait
		defer func() {
			cancel()
			wait()
		}()
	}
	if opts.SkipDigest && !opts.Digest.IsZero() {
		return res, &OptionError{Msg: "a digest to require needs the file hashed (SkipDigest)"}
	}
	finish := func() (*Result, error) {
		sum, err := digestOf()
		if err != nil {
			return res, fmt.Errorf("reading %s: %w", name, err)
		}
		if err := wrongDigest(name, sum, opts.Digest); err != nil {
			return res, err
		}
		res.SHA256 = sum
		return res, nil
	}
	if !rd.Signed() {
		if !opts.AllowUnsigned {
			return res, signing.ErrUnsigned
		}
		rep, err := rd.Check(opts.Check)
		res.Report = rep
		if err != nil {
			return res, err
		}
		res.Manifest = rep.Manifest
		return finish()
	}
	res.Signed = true
	if t == nil {
		return res, errNoKeyring
	}
	judge := t.Provenance != nil || opts.Provenance
	v, err := signing.Verify(ctx, rd, t.Trusted, &signing.VerifyOptions{Check: opts.Check, Progress: opts.Progress, Policy: t.Policy, Known: t.Known, ContentSums: judge})
	if err != nil {
		var se *signing.SignaturesError
		if errors.As(err, &se) {
			res.Signatures, res.PolicyResult = se.Signatures, se.Policy
		}
		return res, err
	}
	res.Verified, res.Authenticated = v, true
	res.Signatures, res.PolicyResult = v.Signatures(), v.Policy()
	res.Report, res.Manifest = v.Report(), v.Manifest()
	if judge {
		if err := judgeProvenance(res, t.Provenance, opts); err != nil {
			// The file's digest still names what was refused (a
			// verification summary records it).
			finish()
			return res, err
		}
	}
	if _, err := finish(); err != nil || len(opts.Bundles) == 0 {
		return res, err
	}
	return res, judgeBundles(res, t.Provenance, opts.Bundles)
}

// A NamedBundle is a provenance bundle's bytes and what errors call it.
type NamedBundle struct {
	Name string
	Data []byte
}

// judgeBundles checks each bundle against the file's SHA-256 and the
// policy's bundle keys: the first refusal fails the verification.
func judgeBundles(res *Result, pol *provenance.Policy, bundles []NamedBundle) error {
	sum := res.SHA256
	if sum.IsZero() {
		return &OptionError{Msg: "a provenance bundle needs the file hashed (SkipDigest)"}
	}
	var keys []provenance.BundleKey
	if pol != nil {
		keys = pol.BundleKeys
	}
	// Each bundle's outcome joins the provenance verdict's checks.
	record := func(err error) error {
		if v := res.Provenance; v != nil {
			var re *provenance.RuleError
			if errors.As(err, &re) {
				v.Checks = append(v.Checks, provenance.Check{Rule: re.Rule, Detail: re.Detail})
				if v.Failed == nil {
					v.Failed = re
				}
			}
		}
		return err
	}
	for _, b := range bundles {
		if len(keys) == 0 {
			return record(&provenance.RuleError{Rule: provenance.RuleBundleKey, Detail: b.Name + ": the policy names no bundle-keys that may sign provenance bundles"})
		}
		r, err := provenance.VerifyBundle(b.Name, b.Data, sum, keys)
		if err != nil {
			return record(err)
		}
		if v := res.Provenance; v != nil {
			v.Checks = append(v.Checks, provenance.Check{Rule: provenance.RuleBundleKey, Passed: true, Detail: b.Name + " is signed by " + r.KeyFile},
				provenance.Check{Rule: provenance.RuleBundleSubject, Passed: true, Detail: b.Name + " names the file's SHA-256"})
		}
		res.Bundles = append(res.Bundles, r)
	}
	return nil
}

// judgeProvenance evaluates the verified assembly's provenance entry
// (read from the verified bytes) against pol, the one provenance verdict:
// with a policy a failed rule fails the verification; without one the
// verdict is only recorded.
func judgeProvenance(res *Result, pol *provenance.Policy, opts VerifyOptions) error {
	var body []byte
	if slices.Contains(res.Verified.Files(), provenance.EntryName) {
		var err error
		if body, err = res.Verified.ReadFile(provenance.EntryName); err != nil {
			return err
		}
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	verdict, err := provenance.Evaluate(body, res.Verified.ContentSums(), pol, now())
	res.Provenance = verdict
	if pol == nil {
		return nil
	}
	return err
}

// checkDigest fails with ErrWrongDigest unless the SHA-256 of the first
// size bytes of r is want (the zero Digest: anything): the check of an
// assembly's name for a command that does not verify it (inspect). A
// Digester gives its own hash; any other reader is read whole.
func checkDigest(ctx context.Context, name string, r io.ReaderAt, size int64, want digest.Digest) error {
	if want.IsZero() {
		return nil
	}
	var sum digest.Digest
	if d, ok := r.(Digester); ok {
		s, err := d.SHA256(ctx)
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		sum = s
	} else {
		h := digest.NewHasher()
		if _, err := io.Copy(h, &ctxReader{ctx, io.NewSectionReader(r, 0, size)}); err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		sum = h.Digest()
	}
	return wrongDigest(name, sum, want)
}

// wrongDigest is the one comparison of a file's SHA-256 with the digest
// asked for.
func wrongDigest(name string, sum, want digest.Digest) error {
	if !want.IsZero() && want != sum {
		return fmt.Errorf("%w: %s has %s, not %s", ErrWrongDigest, name, sum, want)
	}
	return nil
}

// Content reads the assembly's bytes again from the reader Verify read,
// checked against the SHA-256 Verify took as they pass (digest.Reader):
// whatever writes them writes the verified file, or fails before its last
// byte with digest.ErrMismatch. It needs Result.SHA256 (not SkipDigest).
func (r *Result) Content() (*digest.Reader, error) {
	d := r.SHA256
	if d.IsZero() || r.Reader == nil {
		return nil, fmt.Errorf("%s: no verified SHA-256 to check its bytes against", r.Name)
	}
	raw := r.Reader.Raw()
	return digest.NewReader(raw, 0, r.Size, d), nil
}

// A Digester is a reader that takes the SHA-256 of everything read
// through it, as the bytes pass (remote.Object, whose every read is a
// request): Verify asks it for the whole file's digest once the
// verification is done, instead of reading the file a second time beside
// it. SHA256 reads what was not read, and fails if the bytes are not the
// ones the reader expected.
type Digester interface {
	SHA256(ctx context.Context) (digest.Digest, error)
}

// startDigest takes the SHA-256 of the first size bytes of r in the
// background, while the verification reads the same bytes (a file's pages
// are then read once from the disk). The function returned waits for it;
// a cancelled ctx stops it.
func startDigest(ctx context.Context, r io.ReaderAt, size int64) func() (digest.Digest, error) {
	type result struct {
		sum digest.Digest
		err error
	}
	done := make(chan result, 1)
	go func() {
		h := digest.NewHasher()
		_, err := io.CopyBuffer(h, &ctxReader{ctx, io.NewSectionReader(r, 0, size)}, make([]byte, 1<<20))
		done <- result{h.Digest(), err}
	}()
	var res *result
	return func() (digest.Digest, error) {
		if res == nil {
			r := <-done
			res = &r
		}
		return res.sum, res.err
	}
}

// A ctxReader stops reading when its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
