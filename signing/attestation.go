package signing

import (
	"crypto"
	_ "crypto/sha256" // SHA256 attestations
	_ "crypto/sha512" // SHA384 and SHA512 attestations
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/jsontext"
	"github.com/cloud-assembly/assemble/internal/strictjson"
)

// MinNonceSize is the smallest nonce, in bytes, the spec allows. A nonce is
// also never shorter than the attestation algorithm's digest.
const MinNonceSize = 32

// maxAttestationSize bounds the attestation text before parsing.
const maxAttestationSize = 16 << 20

// maxAttestationDepth bounds JSON nesting in the attestation; a valid one
// nests two levels (items, then an item).
const maxAttestationDepth = 16

// An Attestation summarizes the files of an assembly: for each file its size
// and its salted hash, H(content || nonce).
type Attestation struct {
	Timestamp time.Time // UTC, whole seconds
	// Zoneless: the timestamp had no zone (ISO 8601 local time, as the
	// spec's example "2018-11-15T11:08:52"), and was read as UTC. Verify
	// accepts it; a caller should warn (ZonelessWarning).
	Zoneless  bool
	Algorithm crypto.Hash     // crypto.SHA256, SHA384 or SHA512
	Nonce     []byte          // at least MinNonceSize and the digest size
	Items     map[string]Item // keyed by entry name, every file but signature.asc
}

// An Item is one attested file.
type Item struct {
	Size int64
	Hash []byte
}

// Names lists the attested file names, sorted.
func (a *Attestation) Names() []string {
	return slices.Sorted(maps.Keys(a.Items))
}

// AlgorithmName is the attestation's spelling of h: SHA256, SHA384, SHA512.
func AlgorithmName(h crypto.Hash) string {
	switch h {
	case crypto.SHA256:
		return "SHA256"
	case crypto.SHA384:
		return "SHA384"
	case crypto.SHA512:
		return "SHA512"
	}
	return h.String()
}

// ParseAlgorithm reads an attestation algorithm name. SHA256, SHA384 and
// SHA512 are accepted, also spelled SHA-256 and in lower case; MD5 and SHA1
// are refused with ErrWeakAlgorithm, anything else with ErrAttestation.
// The error is an *errcode.FieldError whose Field is "algorithm" (a
// command line puts its flag there).
func ParseAlgorithm(name string) (crypto.Hash, error) {
	switch strings.ReplaceAll(strings.ToUpper(name), "-", "") {
	case "SHA256":
		return crypto.SHA256, nil
	case "SHA384":
		return crypto.SHA384, nil
	case "SHA512":
		return crypto.SHA512, nil
	case "MD5", "SHA1":
		return 0, &errcode.FieldError{Field: "algorithm", Value: fmt.Sprintf("%q", name), Reason: algorithmsAllowed, Err: ErrWeakAlgorithm}
	}
	return 0, &errcode.FieldError{Field: "algorithm", Value: fmt.Sprintf("%q", name), Reason: algorithmsAllowed, Err: ErrAttestation}
}

// algorithmsAllowed is what ParseAlgorithm's error says would do.
const algorithmsAllowed = "use SHA256, SHA384 or SHA512"

// attestationAlgorithm is ParseAlgorithm of an attestation's algorithm,
// its error said of the attestation.
func attestationAlgorithm(name string) (crypto.Hash, error) {
	h, err := ParseAlgorithm(name)
	switch {
	case err == nil:
		return h, nil
	case errors.Is(err, ErrWeakAlgorithm):
		return 0, fmt.Errorf("%w: %q is broken by known collision attacks; sign with SHA256, SHA384 or SHA512", ErrWeakAlgorithm, name)
	}
	return 0, fmt.Errorf("%w: unknown algorithm %q (want SHA256, SHA384 or SHA512)", ErrAttestation, name)
}

type jsonItem struct {
	Hash string `json:"hash"`
	Size string `json:"size"`
}

// jsonAttestation has its fields in sorted order, so that Marshal writes
// sorted keys (encoding/json sorts map keys itself).
type jsonAttestation struct {
	Algorithm string              `json:"algorithm"`
	Items     map[string]jsonItem `json:"items"`
	Nonce     string              `json:"nonce"`
	Timestamp string              `json:"timestamp"`
}

// Marshal encodes a as JSON with sorted keys and 2-space indentation,
// ending in a newline.
func (a *Attestation) Marshal() ([]byte, error) {
	j := jsonAttestation{
		Algorithm: AlgorithmName(a.Algorithm),
		Items:     make(map[string]jsonItem, len(a.Items)),
		Nonce:     base64.StdEncoding.EncodeToString(a.Nonce),
		Timestamp: a.Timestamp.UTC().Format(time.RFC3339),
	}
	for name, it := range a.Items {
		j.Items[name] = jsonItem{Hash: base64.StdEncoding.EncodeToString(it.Hash), Size: strconv.FormatInt(it.Size, 10)}
	}
	return jsontext.MarshalIndent(j)
}

// ParseAttestation parses an attestation strictly: one JSON object, no
// duplicate keys at any depth, no unknown or missing fields, an RFC 3339
// timestamp, a known strong algorithm, a nonce of at least MinNonceSize bytes
// and the digest size, decimal sizes and hashes of the digest's length.
// Errors wrap ErrAttestation, ErrWeakAlgorithm or ErrNonce.
func ParseAttestation(data []byte) (*Attestation, error) {
	if len(data) > maxAttestationSize {
		return nil, fmt.Errorf("%w: %d bytes, at most %d allowed", ErrAttestation, len(data), maxAttestationSize)
	}
	// Strict: duplicate keys (encoding/json would keep the last), nesting,
	// trailing data and invalid UTF-8, with line:col. Field names are then
	// matched exactly, at every level: encoding/json would match "ITEMS" to
	// items, so an attestation could carry two item lists that two
	// verifiers read differently.
	v, err := strictjson.Decode(data, maxAttestationDepth)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrAttestation, err)
	}
	top, err := fields(v, "the attestation", "algorithm", "items", "nonce", "timestamp")
	if err != nil {
		return nil, err
	}
	var j struct{ Algorithm, Nonce, Timestamp *string }
	for _, f := range []struct {
		name string
		dst  **string
	}{{"algorithm", &j.Algorithm}, {"nonce", &j.Nonce}, {"timestamp", &j.Timestamp}} {
		if x, ok := top[f.name]; ok {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%w: %q is %s, want a string", ErrAttestation, f.name, strictjson.Kind(x))
			}
			*f.dst = &s
		}
	}
	switch {
	case j.Algorithm == nil:
		return nil, fmt.Errorf("%w: missing \"algorithm\"", ErrAttestation)
	case top["items"] == nil:
		return nil, fmt.Errorf("%w: missing \"items\"", ErrAttestation)
	case j.Nonce == nil:
		return nil, fmt.Errorf("%w: missing \"nonce\"", ErrNonce)
	case j.Timestamp == nil:
		return nil, fmt.Errorf("%w: missing \"timestamp\"", ErrAttestation)
	}
	items, ok := top["items"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: \"items\" is %s, want an object", ErrAttestation, strictjson.Kind(top["items"]))
	}
	alg, err := attestationAlgorithm(*j.Algorithm)
	if err != nil {
		return nil, err
	}
	ts, zoneless, err := parseTimestamp(*j.Timestamp)
	if err != nil {
		return nil, err
	}
	nonce, err := base64.StdEncoding.Strict().DecodeString(*j.Nonce)
	if err != nil {
		return nil, fmt.Errorf("%w: nonce is not base64: %v", ErrNonce, err)
	}
	if min := max(MinNonceSize, alg.Size()); len(nonce) < min {
		return nil, fmt.Errorf("%w: nonce of %d bytes, at least %d needed with %s", ErrNonce, len(nonce), min, AlgorithmName(alg))
	}
	a := &Attestation{Timestamp: ts.UTC().Truncate(time.Second), Zoneless: zoneless, Algorithm: alg, Nonce: nonce, Items: make(map[string]Item, len(items))}
	for _, name := range slices.Sorted(maps.Keys(items)) {
		where := fmt.Sprintf("item %q", name)
		it, err := fields(items[name], where, "hash", "size")
		if err != nil {
			return nil, err
		}
		hash, hok := it["hash"].(string)
		sizeText, sok := it["size"].(string)
		if !hok || !sok {
			return nil, fmt.Errorf("%w: %s: \"hash\" and \"size\" must both be strings", ErrAttestation, where)
		}
		size, err := strconv.ParseInt(sizeText, 10, 64)
		if err != nil || size < 0 || strconv.FormatInt(size, 10) != sizeText {
			return nil, fmt.Errorf("%w: %q: size %q is not a decimal byte count", ErrAttestation, name, sizeText)
		}
		h, err := base64.StdEncoding.Strict().DecodeString(hash)
		if err != nil || len(h) != alg.Size() {
			return nil, fmt.Errorf("%w: %q: hash is not a base64 %s digest", ErrAttestation, name, AlgorithmName(alg))
		}
		a.Items[name] = Item{Size: size, Hash: h}
	}
	return a, nil
}

// zonelessForm is an ISO 8601 extended date-time without a zone: the
// spec's own example, "2018-11-15T11:08:52" (a decimal fraction of the
// second allowed).
var zonelessForm = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?$`)

// parseTimestamp reads an attestation's timestamp: RFC 3339 (a zone, as
// attest writes it: 2026-01-02T15:04:05Z), or an ISO 8601 extended
// date-time without a zone, read as UTC (zoneless). Any other form is
// refused.
func parseTimestamp(s string) (t time.Time, zoneless bool, err error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, false, nil
	}
	if zonelessForm.MatchString(s) {
		if t, err := time.Parse("2006-01-02T15:04:05", s); err == nil {
			return t, true, nil
		}
	}
	return time.Time{}, false, fmt.Errorf("%w: timestamp %q is neither RFC 3339 (like 2026-01-02T15:04:05Z) nor an ISO 8601 date-time without a zone (like 2026-01-02T15:04:05, read as UTC)", ErrAttestation, s)
}

// ZonelessWarning is the warning for an attestation whose timestamp had no
// zone (Attestation.Zoneless).
func ZonelessWarning(a *Attestation) string {
	return fmt.Sprintf("the attestation's timestamp has no time zone; it was read as UTC (%s): sign attestations whose timestamp says its zone, as 'assemble attest' writes them", a.Timestamp.UTC().Format(time.RFC3339))
}

// fields checks that v is a JSON object whose keys are among names, spelled
// exactly (case matters), and returns it. An unknown key is an error.
func fields(v any, where string, names ...string) (map[string]any, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: %s is %s, want an object", ErrAttestation, where, strictjson.Kind(v))
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		if !slices.Contains(names, k) {
			return nil, fmt.Errorf("%w: %s: unknown field %q (field names are case-sensitive; want %s)", ErrAttestation, where, k, strings.Join(names, ", "))
		}
	}
	return obj, nil
}
