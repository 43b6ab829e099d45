package deploy

import (
	"errors"
	"io"
	"sort"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/signing"
	"github.com/cloud-assembly/assemble/trust"
)

// A Source is a verified assembly, as deploy reads it: the checked
// manifest, its dependency graph, the .cloud file's SHA-256 and the
// archive's files, read only through the verification (each file's
// bytes checked against their signed hash before they are used).
type Source struct {
	// SHA256 is the SHA-256 of the .cloud file: what build, sign and
	// verify print, and what deploy tags stacks and objects with (as
	// hex: TagSHA256, MetaSHA256).
	SHA256 digest.Digest
	// Authenticated is set for a source verified by a signature.
	Authenticated bool

	manifest *assembly.Manifest
	graph    *assembly.Graph
	order    []string
	names    []string // the files, sorted, signature.asc excluded
	sizes    map[string]int64
	open     func(name string) (io.ReadCloser, error)
	// policy is the policy file the verification used (nil: none): it
	// may restrict the targets (its deploy section: Policy.AllowTarget).
	policy *trust.PolicyFile
}

// FromVerified is the Source of a verified, signed assembly: every byte
// deploy sends is read through v.Open, whose reader checks the file
// against its signed size and salted hash as it reaches the end, and
// fails there, with signing's sentinel, when they differ.
func FromVerified(v *signing.Verified, sha256 digest.Digest) *Source {
	rep := v.Report()
	s := &Source{SHA256: sha256, Authenticated: true, manifest: v.Manifest(), graph: rep.Graph, order: rep.Order, open: v.Open, sizes: map[string]int64{}}
	for name, it := range v.Attestation().Items {
		s.names = append(s.names, name)
		s.sizes[name] = it.Size
	}
	sort.Strings(s.names)
	return s
}

// FromTrust is the Source of what trust.Verify gave: the verified
// assembly, or, when it was accepted unsigned, the checked one.
func FromTrust(r *trust.Result) *Source {
	if r.Verified != nil {
		s := FromVerified(r.Verified, r.SHA256)
		s.Authenticated = r.Authenticated
		s.policy = r.PolicyFile
		return s
	}
	s := fromUnsigned(r.Reader, r.Report, r.SHA256)
	s.policy = r.PolicyFile
	return s
}

// fromUnsigned is the Source of an unsigned assembly that passed its
// check (rep is r.Check's report): nothing is authenticated, the files
// are read from r (their CRC-32 checked).
func fromUnsigned(r *assembly.Reader, rep *assembly.Report, sha256 digest.Digest) *Source {
	s := &Source{SHA256: sha256, manifest: rep.Manifest, graph: rep.Graph, order: rep.Order, sizes: map[string]int64{}}
	for _, f := range r.Files() {
		if f.Name() == assembly.SignatureName {
			continue
		}
		s.names = append(s.names, f.Name())
		s.sizes[f.Name()] = f.Size()
	}
	sort.Strings(s.names)
	s.open = func(name string) (io.ReadCloser, error) {
		f := r.File(name)
		if f == nil || name == assembly.SignatureName {
			return nil, errors.New(name + ": not in the assembly")
		}
		return f.Open()
	}
	return s
}

// Manifest is the assembly's checked manifest.
func (s *Source) Manifest() *assembly.Manifest { return s.manifest }

// Open returns a reader of a file's content, checked as it is read: the
// reader fails at the end when the bytes are not the signed ones (for an
// unsigned source, when the CRC-32 differs). Nothing read from it may be
// trusted before it has returned io.EOF.
func (s *Source) Open(name string) (io.ReadCloser, error) { return s.open(name) }

// ReadFile returns a file's verified content, read whole: for small files
// (templates, policies); deploy streams the others.
func (s *Source) ReadFile(name string) ([]byte, error) {
	rc, err := s.open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// filesUnder lists the files below the folder dir ("site" holds
// "site/index.html"), sorted.
func (s *Source) filesUnder(dir string) []string {
	prefix := dir + "/"
	if dir == "" || dir == "." {
		prefix = ""
	}
	var out []string
	for _, n := range s.names {
		if len(n) > len(prefix) && n[:len(prefix)] == prefix {
			out = append(out, n)
		}
	}
	return out
}

// FromAssembly is the Source of an assembly trust.Open verified: every
// byte deploy sends is read through a.Open, checked against the signed
// attestation (for an assembly accepted unsigned, its CRC-32) as it is
// read.
func FromAssembly(a *trust.Assembly) *Source {
	rep := a.Report()
	s := &Source{SHA256: a.Digest(), Authenticated: a.Authenticated(), manifest: a.Manifest(), graph: rep.Graph, order: rep.Order,
		open: a.Open, names: a.Files(), sizes: map[string]int64{}, policy: a.Result().PolicyFile}
	for _, name := range s.names {
		s.sizes[name], _ = a.Size(name)
	}
	// The policy file that verified it may restrict the targets.
	if r := a.Result(); r != nil && r.PolicyFile != nil {
		s.policy = r.PolicyFile
	} else if t := a.Trust(); t != nil {
		s.policy = t.PolicyFile
	}
	return s
}
