package provenance

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/cloud-assembly/assemble/errcode"
)

// A Policy is what a provenance must say for an assembly to be used: the
// provenance section of a policy file. An empty list allows anything; a
// Policy at all requires a provenance whose subject is the assembly's
// content.
type Policy struct {
	// PredicateType is the predicate type required (default
	// PredicateType, SLSA provenance v1).
	PredicateType string
	// Builders are the builder.id patterns allowed.
	Builders []string
	// Repositories and Refs are the source repository (as the source's
	// uri says it, after "git+") and ref patterns allowed.
	Repositories, Refs []string
	// MaxAge, when set, is how old the build may be: its finishedOn, else
	// startedOn, must be that recent (a provenance without times fails).
	MaxAge time.Duration
	// BundleKeys are the public keys (PEM) that may sign provenance
	// bundles (assemble attest --provenance); set by the policy's
	// bundle-keys files.
	BundleKeys []BundleKey
}

// A BundleKey is a public key allowed to sign provenance bundles, and
// where it was read from.
type BundleKey struct {
	File string
	Key  any // *ecdsa.PublicKey or ed25519.PublicKey
}

// Patterns are matched with path.Match: "*" matches within one
// "/"-separated segment, so https://github.com/org/* allows every
// repository of org and nothing below another host.
func matchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if ok, err := path.Match(p, s); err == nil && ok {
			return true
		}
	}
	return false
}

// CheckPattern reports whether p is a pattern Policy accepts.
func CheckPattern(p string) error {
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Errorf("%q is not a pattern (path.Match: * ? [...] and \\): %v", p, err)
	}
	return nil
}

// The rules a policy applies, by their stable names (the "rule" of verify
// --json and of a verification summary).
const (
	RulePresent       = "provenance-present"
	RuleWellFormed    = "provenance-well-formed"
	RuleSubject       = "provenance-subject"
	RulePredicateType = "provenance-predicate-type"
	RuleBuilder       = "provenance-builder"
	RuleRepository    = "provenance-source-repository"
	RuleRef           = "provenance-source-ref"
	RuleMaxAge        = "provenance-max-age"
	RuleBundleKey     = "provenance-bundle-key"
	RuleBundleSubject = "provenance-bundle-subject"
)

// ErrPolicy is the cause of every refusal by a provenance rule; the
// *RuleError wrapping it names the rule.
var ErrPolicy = errcode.New("provenance_policy", "the provenance does not meet the policy",
	"build the assembly where the policy's provenance section allows (builder, source, age), or change the policy")

// A RuleError is a provenance rule that refused.
type RuleError struct {
	Rule   string
	Detail string
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("%s: %s (rule %s)", ErrPolicy.Error(), e.Detail, e.Rule)
}

func (e *RuleError) Unwrap() error { return ErrPolicy }

// A Check is one rule applied, passed or not.
type Check struct {
	Rule   string `json:"rule"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail"`
}

// A Verdict is what Evaluate found: the statement (nil when there was
// none or it could not be read), every check made, in order, and the
// first that failed (nil when all passed).
type Verdict struct {
	Statement *Statement
	Checks    []Check
	Failed    *RuleError
}

// maxStatement bounds the provenance entry read.
const maxStatement = 4 << 20

// Evaluate applies pol to a provenance entry (body, nil when the assembly
// has none) of an assembly whose content files have sums (their SHA-256
// by name, signature.asc and the entry left out or not: both are
// skipped). now judges MaxAge. Every rule is checked and recorded; the
// first failure is Verdict.Failed, also returned as the error.
func Evaluate(body []byte, sums map[string][sha256.Size]byte, pol *Policy, now time.Time) (*Verdict, error) {
	if pol == nil {
		pol = &Policy{}
	}
	v := &Verdict{}
	check := func(rule string, ok bool, format string, args ...any) bool {
		c := Check{Rule: rule, Passed: ok, Detail: fmt.Sprintf(format, args...)}
		v.Checks = append(v.Checks, c)
		if !ok && v.Failed == nil {
			v.Failed = &RuleError{Rule: rule, Detail: c.Detail}
		}
		return ok
	}
	result := func() (*Verdict, error) {
		if v.Failed != nil {
			return v, v.Failed
		}
		return v, nil
	}
	if !check(RulePresent, body != nil, "%s", presentDetail(body != nil)) {
		return result()
	}
	st, err := Parse(body)
	if !check(RuleWellFormed, err == nil, "%s", wellFormedDetail(err)) {
		return result()
	}
	v.Statement = st
	content := make(map[string][sha256.Size]byte, len(sums))
	for name, s := range sums {
		if !Excluded(name) {
			content[name] = s
		}
	}
	want, err := ContentDigest(content)
	if err != nil {
		return nil, err
	}
	got := ""
	for _, s := range st.Subject {
		if d, ok := s.Digest[DirHash]; ok {
			got = d
		}
	}
	check(RuleSubject, got == want, "subject dirHash %s, the content's %s", orNone(got), want)
	wantType := pol.PredicateType
	if wantType == "" {
		wantType = PredicateType
	}
	check(RulePredicateType, st.PredicateType == wantType, "predicate type %s, %s required", orNone(st.PredicateType), wantType)
	builder := st.Predicate.RunDetails.Builder.ID
	if len(pol.Builders) > 0 {
		check(RuleBuilder, matchAny(pol.Builders, builder), "builder.id %s, allowed %s", orNone(builder), strings.Join(pol.Builders, ", "))
	}
	src, _ := SourceOf(st)
	if len(pol.Repositories) > 0 {
		check(RuleRepository, src.Repository != "" && matchAny(pol.Repositories, src.Repository), "source repository %s, allowed %s", orNone(src.Repository), strings.Join(pol.Repositories, ", "))
	}
	if len(pol.Refs) > 0 {
		check(RuleRef, src.Ref != "" && matchAny(pol.Refs, src.Ref), "source ref %s, allowed %s", orNone(src.Ref), strings.Join(pol.Refs, ", "))
	}
	if pol.MaxAge > 0 {
		md := st.Predicate.RunDetails.Metadata
		t := md.FinishedOn
		if t == nil {
			t = md.StartedOn
		}
		switch {
		case t == nil:
			check(RuleMaxAge, false, "the provenance records no build time (finishedOn or startedOn), and the policy allows builds at most %s old", pol.MaxAge)
		default:
			age := now.Sub(*t)
			check(RuleMaxAge, age <= pol.MaxAge, "built %s (%s ago), at most %s allowed", t.UTC().Format(time.RFC3339), age.Round(time.Second), pol.MaxAge)
		}
	}
	return result()
}

func presentDetail(ok bool) string {
	if ok {
		return EntryName + " is present"
	}
	return "the assembly holds no " + EntryName + " (build writes one; an assembly from an older build has none)"
}

func wellFormedDetail(err error) string {
	if err == nil {
		return "an in-toto statement v1"
	}
	return err.Error()
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// ErrMalformed is a provenance entry that is not an in-toto statement v1
// with one subject.
var ErrMalformed = errcode.New("provenance_malformed", "malformed provenance",
	"the provenance entry must be the in-toto statement build writes; build the assembly again")

// Parse reads a provenance entry strictly: one JSON object (no unknown
// field where assemble's own types define the fields, nothing after it),
// statement type v1, at least one subject.
func Parse(body []byte) (*Statement, error) {
	if len(body) > maxStatement {
		return nil, fmt.Errorf("%w: %s is %d bytes, at most %d allowed", ErrMalformed, EntryName, len(body), maxStatement)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var st Statement
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, EntryName, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: %s: data after the statement", ErrMalformed, EntryName)
	}
	if st.Type != StatementType {
		return nil, fmt.Errorf("%w: %s: _type %q, want %s", ErrMalformed, EntryName, st.Type, StatementType)
	}
	if len(st.Subject) == 0 {
		return nil, fmt.Errorf("%w: %s: no subject", ErrMalformed, EntryName)
	}
	return &st, nil
}
