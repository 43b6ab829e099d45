package provenance

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/cloud-assembly/assemble/internal/jsontext"
)

// EntryName is the archive entry build writes the provenance to: a name
// assemble reserves at the root, beside manifest.json and signature.asc.
// It is written after every other entry and before signature.asc, and the
// attestation covers it like any other file.
const EntryName = "provenance.intoto.json"

// The in-toto and SLSA identifiers a statement carries.
const (
	StatementType = "https://in-toto.io/Statement/v1"
	// StatementTypeV01 is the statement of in-toto attestation v0.1, the
	// same layout (v1 is compatible with it), which cosign 3's
	// attest-blob still writes: a bundle holding one is read as v1.
	StatementTypeV01 = "https://in-toto.io/Statement/v0.1"
	PredicateType    = "https://slsa.dev/provenance/v1"
	// BuildType names what assemble's externalParameters and
	// resolvedDependencies mean (docs/provenance.md describes it).
	BuildType = "https://github.com/cloud-assembly/assemble/blob/main/docs/provenance.md#build-v1"
	// SubjectName is the subject's name: the assembly's content, not a
	// file name (the same content may be written under any name).
	SubjectName = "cloud-assembly"
	// DirHash is the DigestSet key of the subject's digest: in-toto's
	// dirHash (Go's dirhash.Hash1 in lower-case hex) over the assembly's
	// content files (see ContentDigest).
	DirHash = "dirHash"
	// Local is the invocation ID of a build outside any CI, and the last
	// segment of LocalBuilder.
	Local = "local"
	// LocalBuilder is builder.id outside any CI system.
	LocalBuilder = "https://github.com/cloud-assembly/assemble/builders/local"
)

// A Statement is an in-toto Statement v1 whose predicate is SLSA
// Provenance v1.
type Statement struct {
	Type          string        `json:"_type"`
	Subject       []Subject     `json:"subject"`
	PredicateType string        `json:"predicateType"`
	Predicate     SLSAPredicate `json:"predicate"`
}

// A Subject is what a statement is about: a name and its digests.
type Subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

// SLSAPredicate is SLSA Provenance v1.
type SLSAPredicate struct {
	BuildDefinition BuildDefinition `json:"buildDefinition"`
	RunDetails      RunDetails      `json:"runDetails"`
}

// BuildDefinition says what was built, from what.
type BuildDefinition struct {
	BuildType            string             `json:"buildType"`
	ExternalParameters   ExternalParameters `json:"externalParameters"`
	ResolvedDependencies []Resource         `json:"resolvedDependencies,omitempty"`
}

// ExternalParameters are the inputs of assemble's build type: the project
// (its source file, relative to the project folder), the default
// environment given to the build, and the target (the distinct
// environments the droplets deploy to, sorted, comma-separated).
type ExternalParameters struct {
	Project     string `json:"project"`
	Environment string `json:"environment,omitempty"`
	Target      string `json:"target,omitempty"`
}

// A Resource is an in-toto ResourceDescriptor.
type Resource struct {
	Name        string            `json:"name,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Digest      map[string]string `json:"digest,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// RunDetails says who built it and when.
type RunDetails struct {
	Builder  Builder       `json:"builder"`
	Metadata BuildMetadata `json:"metadata"`
}

// Builder is the builder's identity.
type Builder struct {
	ID string `json:"id"`
}

// BuildMetadata is the run's identity and times; times appear only when
// they were given.
type BuildMetadata struct {
	InvocationID string     `json:"invocationId"`
	StartedOn    *time.Time `json:"startedOn,omitempty"`
	FinishedOn   *time.Time `json:"finishedOn,omitempty"`
}

// Marshal is the statement as build writes it: two-space indented JSON
// with a final newline, keys in the order of the types above, maps sorted
// (encoding/json sorts map keys), so the same statement is the same bytes.
func (s *Statement) Marshal() ([]byte, error) { return marshal(s) }

// Marshal is the summary as verify --vsa writes it (as Statement.Marshal).
func (s *VSAStatement) Marshal() ([]byte, error) { return marshal(s) }

func marshal(s any) ([]byte, error) { return jsontext.MarshalIndent(s) }

// ContentDigest is the subject's digest over an assembly's content files:
// sums maps each file's name to the SHA-256 of its content. The caller
// leaves out signature.asc and EntryName (Excluded says which names);
// ContentDigest refuses them, so a digest never depends on a signature.
// The value is in-toto's dirHash: the SHA-256 of the lines
// "<hex sha256>  <name>\n", one per file, sorted by name byte by byte
// (what `find . -type f | cut -c3- | LC_ALL=C sort | xargs -r sha256sum |
// sha256sum` prints over the extracted content files), in lower-case hex.
func ContentDigest(sums map[string][sha256.Size]byte) (string, error) {
	names := make([]string, 0, len(sums))
	for name := range sums {
		if Excluded(name) {
			return "", fmt.Errorf("%q is not content: the digest leaves it out", name)
		}
		if strings.ContainsRune(name, '\n') {
			return "", fmt.Errorf("%q: a name with a newline has no dirHash line", name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, name := range names {
		sum := sums[name]
		fmt.Fprintf(h, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Excluded reports whether an entry is left out of the content digest:
// signature.asc (which signing adds and replaces) and the provenance entry
// itself.
func Excluded(name string) bool {
	return name == "signature.asc" || name == EntryName
}
