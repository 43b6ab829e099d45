package trust

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/remote"
)

// OpenOptions tune Open. The zero value requires a signature by keys of
// the Trust, as its policy asks.
type OpenOptions struct {
	// InsecureAllowUnsigned accepts an assembly that has no signature
	// after checking its structure and manifest only: nothing in it is
	// authenticated (Assembly.Authenticated is false), and its files are
	// checked against their own ZIP headers only. A signed assembly is
	// verified as ever.
	InsecureAllowUnsigned bool
	// Check tunes the one check of the manifest (Strict turns its
	// warnings into errors).
	Check assembly.CheckOptions
	// Digest, when set, is the SHA-256 the whole file must have (the
	// assembly's name, as build, sign, verify and push print it); another
	// file fails with ErrWrongDigest. A location is asked for these bytes
	// (remote.Options.Digest).
	Digest digest.Digest
	// Progress, if set, is called as the files are hashed.
	Progress func(done, total int64)
	// Remote configures the reading of a location (clients, timeouts);
	// nil takes the defaults. Its Digest is Digest's.
	Remote *remote.Options
	// Provenance and Bundles are VerifyOptions': the provenance verdict
	// recorded without a provenance policy, and provenance bundles to
	// check. An assembly read from an OCI registry also has the bundles
	// attached to it there (OCI referrers, remote.Object.Referrers)
	// checked the same way, when the trust's provenance policy names
	// bundle keys (with none, nothing could verify them, and they are not
	// read).
	Provenance bool
	Bundles    []NamedBundle
}

// An Assembly is an assembly Open verified: the only way to the bytes of
// its files. It holds the file (or the location's spool) open until
// Close.
type Assembly struct {
	res    *Result
	trust  *Trust
	source io.ReaderAt
	closer io.Closer
	names  []string
	sizes  map[string]int64
}

// A VerifyError is Open's failure: Err says why; Name is the assembly as
// Open names it (a location redacted); Result says as much as was learnt
// before (whether it is signed, its signatures and how they met the
// policy, the check's report), or is nil when the file or location could
// not be opened (Result.Reader is nil when it is not a readable ZIP).
// Verdict, and the JSON it marshals to, report it as verify does.
type VerifyError struct {
	Name   string
	Result *Result
	Err    error
}

func (e *VerifyError) Error() string { return e.Err.Error() }
func (e *VerifyError) Unwrap() error { return e.Err }

// OpenSource opens the bytes nameOrLocation names, for reading at random:
// a location (oci://, s3://, https://; see remote.IsLocation), read in
// ranges, each byte fetched once, or else a file. It is the one place that
// tells them apart; Open verifies what it opens.
func OpenSource(ctx context.Context, nameOrLocation string, opts *remote.Options) (io.ReaderAt, int64, io.Closer, error) {
	if !remote.IsLocation(nameOrLocation) {
		f, err := os.Open(nameOrLocation)
		if err != nil {
			return nil, 0, nil, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, 0, nil, err
		}
		return f, st.Size(), f, nil
	}
	o, err := remote.Open(ctx, nameOrLocation, opts)
	if err != nil {
		return nil, 0, nil, err
	}
	return o, o.Size(), o, nil
}

// Open opens the assembly nameOrLocation names (a file, or a location:
// OpenSource) and verifies it as Verify does: its structure, that keys of
// t signed it as t's policy asks, every file against the signed
// attestation, then the one check of the manifest. An unsigned assembly
// fails with signing.ErrUnsigned unless opts.InsecureAllowUnsigned; a
// signed one needs t (nil fails with ErrNoKeyring). The error is a
// *VerifyError with what was learnt. The caller closes the Assembly.
func Open(ctx context.Context, nameOrLocation string, t *Trust, opts *OpenOptions) (*Assembly, error) {
	if opts == nil {
		opts = &OpenOptions{}
	}
	name, r, size, cl, err := openNamed(ctx, nameOrLocation, opts)
	if err != nil {
		return nil, err
	}
	a, err := NewAssembly(ctx, name, r, size, t, opts)
	if err != nil {
		cl.Close()
		return nil, err
	}
	a.closer = cl
	return a, nil
}

// openNamed opens nameOrLocation (OpenSource, with opts.Remote and
// opts.Digest) and says how messages name it: a location with its
// secrets redacted.
func openNamed(ctx context.Context, nameOrLocation string, opts *OpenOptions) (string, io.ReaderAt, int64, io.Closer, error) {
	ro := remote.Options{}
	if opts.Remote != nil {
		ro = *opts.Remote
	}
	ro.Digest = opts.Digest
	name := nameOrLocation
	if remote.IsLocation(name) {
		name = remote.Redact(name)
	}
	r, size, cl, err := OpenSource(ctx, nameOrLocation, &ro)
	if err != nil {
		return name, nil, 0, nil, &VerifyError{Name: name, Err: err}
	}
	return name, r, size, cl, nil
}

// OpenUnverified opens what nameOrLocation names as Open does (a file or
// a location) and reads its ZIP structure, verifying nothing: for
// reading what an assembly says about itself before anyone trusts it
// (inspect, graph, attest). Only opts.Digest and opts.Remote apply: with
// a Digest, another file fails with ErrWrongDigest (the whole file is
// read for it). Errors are *VerifyError as Open's: Result nil when
// nothing could be opened, Result.Reader nil when it is not a readable
// ZIP. The caller closes the io.Closer, which the Reader reads through.
func OpenUnverified(ctx context.Context, nameOrLocation string, opts *OpenOptions) (*assembly.Reader, io.Closer, error) {
	if opts == nil {
		opts = &OpenOptions{}
	}
	name, r, size, cl, err := openNamed(ctx, nameOrLocation, opts)
	if err != nil {
		return nil, nil, err
	}
	res := &Result{Name: name, Size: size}
	rd, err := assembly.NewReader(r, size)
	if err != nil {
		cl.Close()
		return nil, nil, &VerifyError{Name: name, Result: res, Err: err}
	}
	res.Reader, res.Signed = rd, rd.Signed()
	if err := checkDigest(ctx, name, r, size, opts.Digest); err != nil {
		cl.Close()
		return nil, nil, &VerifyError{Name: name, Result: res, Err: err}
	}
	return rd, cl, nil
}

// NewAssembly verifies the assembly read from r (size bytes) as Open
// does; name is what errors call it. Closing the Assembly does not close
// r.
func NewAssembly(ctx context.Context, name string, r io.ReaderAt, size int64, t *Trust, opts *OpenOptions) (*Assembly, error) {
	if opts == nil {
		opts = &OpenOptions{}
	}
	res, err := Verify(ctx, name, r, size, t, VerifyOptions{AllowUnsigned: opts.InsecureAllowUnsigned, Check: opts.Check, Progress: opts.Progress, Digest: opts.Digest,
		Provenance: opts.Provenance, Bundles: opts.Bundles})
	if err != nil {
		return nil, &VerifyError{Name: name, Result: res, Err: err}
	}
	if err := judgeReferrers(ctx, r, res, t); err != nil {
		return nil, &VerifyError{Name: name, Result: res, Err: err}
	}
	a := &Assembly{res: res, trust: t, source: r, sizes: map[string]int64{}}
	if res.Verified != nil {
		for name, it := range res.Verified.Attestation().Items {
			a.names = append(a.names, name)
			a.sizes[name] = it.Size
		}
	} else {
		for _, f := range res.Reader.Files() {
			if f.Name() != assembly.SignatureName {
				a.names = append(a.names, f.Name())
				a.sizes[f.Name()] = f.Size()
			}
		}
	}
	sort.Strings(a.names)
	return a, nil
}

// Close releases the file or the location's spool.
func (a *Assembly) Close() error {
	if a == nil || a.closer == nil {
		return nil
	}
	return a.closer.Close()
}

// Result is what the verification found: the name, size and SHA-256,
// the signatures and how they met the policy, the check's report.
func (a *Assembly) Result() *Result { return a.res }

// Trust is the Trust it was verified with (nil for an unsigned assembly
// accepted without one): its policy file's deploy section is deploy's.
func (a *Assembly) Trust() *Trust { return a.trust }

// Source is what the assembly was read from (a *remote.Object for a
// location): for a caller that copies the file as it is, such as a push
// that keeps a registry's manifest. Its bytes are not checked as they are
// read again; WriteTo's are.
func (a *Assembly) Source() io.ReaderAt { return a.source }

// Name is the file or location as the caller named it (a location with
// its secrets redacted, when Open opened it).
func (a *Assembly) Name() string { return a.res.Name }

// Digest is the SHA-256 of the whole .cloud file.
func (a *Assembly) Digest() digest.Digest { return a.res.SHA256 }

// Authenticated reports whether trusted keys signed it as the policy
// asks (false only with OpenOptions.InsecureAllowUnsigned).
func (a *Assembly) Authenticated() bool { return a.res.Authenticated }

// Manifest is the checked manifest.
func (a *Assembly) Manifest() *assembly.Manifest { return a.res.Manifest }

// Report is the check's report: its warnings, the droplets' graph and
// deploy order.
func (a *Assembly) Report() *assembly.Report { return a.res.Report }

// Files are the names of its files but signature.asc, sorted.
func (a *Assembly) Files() []string { return a.names }

// Size is the size of the file name (attested, for a signed assembly),
// and whether there is one.
func (a *Assembly) Size(name string) (int64, bool) {
	n, ok := a.sizes[name]
	return n, ok
}

// errNotInAssembly: Open was asked for a file the assembly does not hold.
var errNotInAssembly = errors.New("not in the assembly")

// Open returns a reader of a file's content, checked as it is read: at
// its end the reader fails, with signing's sentinel, when the bytes are
// not the signed ones (for an unsigned assembly, when they do not match
// their ZIP header's CRC-32). Nothing read from it may be trusted before
// it has returned io.EOF.
func (a *Assembly) Open(name string) (io.ReadCloser, error) {
	if a.res.Verified != nil {
		return a.res.Verified.Open(name)
	}
	f := a.res.Reader.File(name)
	if f == nil || name == assembly.SignatureName {
		return nil, fmt.Errorf("%s: %w", name, errNotInAssembly)
	}
	return f.Open()
}

// ReadFile returns a file's verified content, read whole.
func (a *Assembly) ReadFile(name string) ([]byte, error) {
	rc, err := a.Open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// WriteTo writes the whole .cloud file, read again from where Open read
// it and checked against the SHA-256 the verification took as the bytes
// pass (the last of them withheld unless the whole matches): w gets the
// verified file, or with an error less than all of it (digest.ErrMismatch
// when the bytes changed). A writer that commits only when WriteTo
// returns nil commits the verified bytes or nothing.
func (a *Assembly) WriteTo(w io.Writer) (int64, error) {
	c, err := a.res.Content()
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(w, c)
	if err != nil {
		return n, fmt.Errorf("writing %s: %w", a.res.Name, err)
	}
	return n, nil
}

// referrerSource is a source with OCI referrers (a remote.Object).
type referrerSource interface {
	Referrers(ctx context.Context) ([]remote.Referrer, error)
}

// judgeReferrers checks the provenance bundles attached to the assembly
// where it was read from (OCI referrers) as judgeBundles checks those
// given, when the trust's provenance policy has bundle keys to check them
// with: each must be signed by one and name the file's SHA-256.
func judgeReferrers(ctx context.Context, r io.ReaderAt, res *Result, t *Trust) error {
	rs, ok := r.(referrerSource)
	if !ok || t == nil || t.Provenance == nil || len(t.Provenance.BundleKeys) == 0 || res.Verified == nil {
		return nil
	}
	refs, err := rs.Referrers(ctx)
	if err != nil {
		return fmt.Errorf("reading the provenance bundles attached to %s: %w", res.Name, err)
	}
	var found []NamedBundle
	for _, ref := range refs {
		if ref.ArtifactType == remote.BundleArtifactType {
			found = append(found, NamedBundle{Name: ref.Location, Data: ref.Data})
		}
	}
	return judgeBundles(res, t.Provenance, found)
}

// Bundle annotations of a referrer, as cosign writes them.
const (
	annotationBundleContent   = "dev.sigstore.bundle.content"
	annotationBundlePredicate = "dev.sigstore.bundle.predicateType"
)

// Referrers are what a push attaches to the assembly in an OCI registry
// (remote.File.Referrers, docs/oci.md), each once: for an assembly read
// from a registry, every referrer found there (a promotion carries them,
// the bytes read once and checked against their descriptors; bundles
// checked against the provenance policy when it has bundle keys, carried
// as they are otherwise); its signature.asc, when it is signed; and the
// provenance bundles that verified (OpenOptions.Bundles).
func (a *Assembly) Referrers(ctx context.Context) ([]remote.Referrer, error) {
	var refs []remote.Referrer
	seen := map[string]bool{}
	add := func(r remote.Referrer) {
		if k := r.ArtifactType + " " + r.Digest(); !seen[k] {
			seen[k] = true
			refs = append(refs, r)
		}
	}
	if rs, ok := a.source.(referrerSource); ok {
		found, err := rs.Referrers(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading the referrers attached to %s: %w", a.res.Name, err)
		}
		for _, r := range found {
			add(remote.Referrer{ArtifactType: r.ArtifactType, Data: r.Data, Annotations: r.Annotations})
		}
	}
	if a.res.Signed {
		f := a.res.Reader.File(assembly.SignatureName)
		if f == nil {
			return nil, fmt.Errorf("%s: %s: %w", a.res.Name, assembly.SignatureName, errNotInAssembly)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", a.res.Name, assembly.SignatureName, err)
		}
		sig, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", a.res.Name, assembly.SignatureName, err)
		}
		add(remote.Referrer{ArtifactType: remote.SignatureArtifactType, Data: sig})
	}
	for _, b := range a.res.Bundles {
		add(remote.Referrer{ArtifactType: remote.BundleArtifactType, Data: b.Data,
			Annotations: map[string]string{annotationBundleContent: "dsse-envelope", annotationBundlePredicate: b.Statement.PredicateType}})
	}
	return refs, nil
}
