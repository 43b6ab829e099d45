package trust

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/hint"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/suggest"
	"github.com/cloud-assembly/assemble/internal/yamlpos"
	"github.com/cloud-assembly/assemble/provenance"
	"github.com/cloud-assembly/assemble/signing"
)

// A policy file has sections, each read and checked by the package that
// uses it: "trust" (this package: keyrings and signatures),
// "provenance" (this package too: what an assembly's provenance must
// say) and "deploy" (package deploy registers its reader,
// RegisterPolicySection). The trust and deploy settings may also be
// given flat, at the top level, as before the sections: that form is
// deprecated, and read as if in its section.
const (
	SectionTrust      = "trust"
	SectionProvenance = "provenance"
	SectionDeploy     = "deploy"
)

// PolicyKeys are the keys of a policy file's trust section, in the order
// help lists them.
func PolicyKeys() []string {
	return []string{"keyrings", "untrusted-keyrings", "min-signers", "require-signers", "algorithms"}
}

// ProvenanceKeys are the keys of a policy's provenance section.
func ProvenanceKeys() []string {
	return []string{"predicate-type", "builders", "repositories", "refs", "max-age", "bundle-keys"}
}

// legacyDeployKeys are the deploy section's keys that a policy file may
// give flat (the deprecated form); the deploy section itself takes what
// its reader takes.
var legacyDeployKeys = []string{"staging-bucket", "capabilities", "require-approval", "targets", "deployer-parameters"}

// A PolicyFile is what a policy file says; keyring paths are made
// relative to its folder. Has tells which trust keys it sets. The deploy
// section is its reader's (Section).
type PolicyFile struct {
	// File is the policy file as named.
	File                        string
	Keyrings, UntrustedKeyrings []string
	RequireSigners, Algorithms  []string
	MinSigners                  int
	// Provenance is the provenance section: what an assembly's provenance
	// must say (package provenance); nil when the policy has none.
	Provenance *provenance.Policy
	Has        map[string]bool
	// Legacy lists the keys given flat, at the top level, rather than in
	// their section (the deprecated form), in file order.
	Legacy []string
	// sections holds what each registered reader made of its section.
	sections map[string]any
}

// Section is what the reader registered for the section name made of it
// (deploy's *deploy.Policy for "deploy"), or nil when the file has no
// such section (or no reader is linked).
func (p *PolicyFile) Section(name string) any {
	if p == nil {
		return nil
	}
	return p.sections[name]
}

// A PolicySection is one section of a policy file as its reader sees it:
// its entries in file order (the deprecated flat keys of the section
// among them, marked Legacy).
type PolicySection struct {
	File, Name string
	Entries    []PolicyEntry
	at         func(*yaml.Node, string, ...any) error
}

// A PolicyEntry is one key of a section and its value.
type PolicyEntry struct {
	Key string
	// Legacy is true when the key is given flat, at the top level.
	Legacy    bool
	key, node *yaml.Node
	sec       *PolicySection
}

// Strings is the entry's value as a list of non-empty strings; anything
// else is a *PolicyError at its place.
func (e PolicyEntry) Strings() ([]string, error) {
	if e.node.Kind != yaml.SequenceNode {
		return nil, e.sec.at(e.node, "%s must be a list", e.Key)
	}
	out := []string{}
	for _, it := range e.node.Content {
		if it.Kind != yaml.ScalarNode || it.Tag == "!!null" || it.Value == "" {
			return nil, e.sec.at(it, "%s: every entry must be a non-empty string", e.Key)
		}
		out = append(out, it.Value)
	}
	return out, nil
}

// Scalar is the entry's value as a non-empty scalar (a string, a
// number), or ok false.
func (e PolicyEntry) Scalar() (v string, ok bool) {
	if e.node.Kind != yaml.ScalarNode || e.node.Tag == "!!null" || e.node.Value == "" {
		return "", false
	}
	return e.node.Value, true
}

// Errorf is a *PolicyError (ErrInvalidPolicy) at the entry's value.
func (e PolicyEntry) Errorf(format string, args ...any) error {
	return e.sec.at(e.node, format, args...)
}

// ItemErrorf is a *PolicyError at the i-th item of the entry's list
// (at the value when it is no list).
func (e PolicyEntry) ItemErrorf(i int, format string, args ...any) error {
	if e.node.Kind == yaml.SequenceNode && i >= 0 && i < len(e.node.Content) {
		return e.sec.at(e.node.Content[i], format, args...)
	}
	return e.sec.at(e.node, format, args...)
}

// Unknown is the error of an entry whose key the section does not take,
// at the key, naming the nearest of keys.
func (e PolicyEntry) Unknown(keys []string) error {
	name := e.Key
	if !e.Legacy {
		name = e.sec.Name + "." + e.Key
	}
	return e.sec.at(e.key, "unknown key %s%s", name, suggest.Hint(e.Key, keys))
}

// A SectionReader reads and checks a policy file's section; its errors
// are a PolicyEntry's (Errorf, ItemErrorf, Unknown), placed in the file.
type SectionReader func(*PolicySection) (any, error)

var (
	sectionMu      sync.Mutex
	sectionReaders = map[string]SectionReader{}
)

// RegisterPolicySection makes read the reader of the policy file's
// section name (package deploy registers "deploy" as it is linked):
// ReadPolicy hands it the section, once, as it reads the file, and keeps
// what it returns (PolicyFile.Section). So the file is read once and
// each section is checked by its own package. Only the deploy section
// takes a reader; another name, or a second reader, panics.
func RegisterPolicySection(name string, read SectionReader) {
	sectionMu.Lock()
	defer sectionMu.Unlock()
	if name != SectionDeploy {
		panic("trust: no policy section " + name + " to register")
	}
	if _, dup := sectionReaders[name]; dup {
		panic("trust: policy section registered twice: " + name)
	}
	sectionReaders[name] = read
}

func sectionReader(name string) SectionReader {
	sectionMu.Lock()
	defer sectionMu.Unlock()
	return sectionReaders[name]
}

// maxPolicySize bounds a policy file: a policy names a few keyrings and
// fingerprints, and it is read whole.
const maxPolicySize = 1 << 20

// ReadPolicy reads a policy file once, strictly: one YAML document, a
// mapping of the sections trust, provenance and deploy (or of their keys
// given flat, the deprecated form), each key once. It checks the trust
// section (lists of strings; min-signers a whole number of at least 1;
// fingerprints and algorithms well formed) and the provenance section,
// and hands the deploy section to its registered reader (package deploy)
// to check; without one linked, it is kept unread. Its errors are
// *PolicyError (ErrInvalidPolicy) with the line and column, or the
// file's own.
func ReadPolicy(file string) (*PolicyFile, error) {
	data, err := limitio.ReadFile(file, maxPolicySize)
	var tl *limitio.TooLargeError
	if errors.As(err, &tl) {
		return nil, hint.With(&PolicyError{File: file, Msg: fmt.Sprintf("the policy is %s", tl)}, "a policy is a short YAML mapping: check that Options.PolicyFile names the policy file")
	}
	if err != nil {
		return nil, fileError("PolicyFile", err)
	}
	top := []string{SectionTrust, SectionProvenance, SectionDeploy}
	at := func(n *yaml.Node, format string, args ...any) error {
		e := &PolicyError{File: file, Msg: fmt.Sprintf(format, args...)}
		if n != nil {
			e.Line, e.Column = n.Line, n.Column
		}
		return hint.With(e, "a policy is a YAML mapping of the sections "+strings.Join(top, ", ")+"; trust takes "+strings.Join(PolicyKeys(), ", "))
	}
	if le := yamlpos.CheckNodes(data); le != nil {
		return nil, hint.With(&PolicyError{File: file, Line: le.Pos.Line, Column: le.Pos.Column, Msg: le.Reason()}, "a policy is a short YAML mapping")
	}
	// One document: a second one (after ---) would be read by nobody, yet a
	// reviewer could take its settings for the policy.
	var doc, next yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	err = dec.Decode(&doc)
	if err == nil {
		if err = dec.Decode(&next); err == nil {
			return nil, at(&next, "a policy is one YAML document: remove this second one (and its ---)")
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		pos, msg := yamlpos.Locate(data, err)
		return nil, hint.With(&PolicyError{File: file, Line: pos.Line, Column: pos.Column, Msg: "malformed YAML: " + msg}, "fix the YAML syntax")
	}
	if len(doc.Content) == 0 {
		return nil, at(nil, "empty policy")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, at(root, "the policy must be a mapping (key: value lines)")
	}
	p := &PolicyFile{File: file, Has: map[string]bool{}, sections: map[string]any{}}
	trustSec := &PolicySection{File: file, Name: SectionTrust, at: at}
	deploySec := &PolicySection{File: file, Name: SectionDeploy, at: at}
	seen := map[string]bool{}
	// add puts an entry in its section; a key given twice (in its
	// section and flat, or twice in one) is refused at the second.
	add := func(sec *PolicySection, k, v *yaml.Node, legacy bool) error {
		if seen[sec.Name+"."+k.Value] {
			return at(k, "%s is given twice", k.Value)
		}
		seen[sec.Name+"."+k.Value] = true
		sec.Entries = append(sec.Entries, PolicyEntry{Key: k.Value, Legacy: legacy, key: k, node: v, sec: sec})
		if legacy {
			p.Legacy = append(p.Legacy, k.Value)
		}
		return nil
	}
	once := func(k *yaml.Node) error {
		if seen[k.Value] {
			return at(k, "%s is given twice", k.Value)
		}
		seen[k.Value] = true
		return nil
	}
	section := func(sec *PolicySection, k, v *yaml.Node) error {
		if err := once(k); err != nil {
			return err
		}
		if v.Kind != yaml.MappingNode {
			return at(v, "%s must be a mapping (key: value lines)", k.Value)
		}
		for i := 0; i+1 < len(v.Content); i += 2 {
			if err := add(sec, v.Content[i], v.Content[i+1], false); err != nil {
				return err
			}
		}
		return nil
	}
	var provNode *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		var err error
		switch {
		case k.Value == SectionTrust:
			err = section(trustSec, k, v)
		case k.Value == SectionDeploy:
			err = section(deploySec, k, v)
		case k.Value == SectionProvenance:
			err, provNode = once(k), v
		case slices.Contains(PolicyKeys(), k.Value):
			err = add(trustSec, k, v, true)
		case slices.Contains(legacyDeployKeys, k.Value):
			err = add(deploySec, k, v, true)
		default:
			err = at(k, "unknown key %q%s", k.Value, suggest.Hint(k.Value, slices.Concat(top, PolicyKeys(), legacyDeployKeys)))
		}
		if err != nil {
			return nil, err
		}
	}
	if err := p.readTrust(trustSec); err != nil {
		return nil, err
	}
	if provNode != nil {
		strs := func(k, v *yaml.Node) ([]string, error) {
			return PolicyEntry{Key: k.Value, key: k, node: v, sec: trustSec}.Strings()
		}
		var err error
		if p.Provenance, err = readProvenance(provNode, filepath.Dir(file), at, strs); err != nil {
			return nil, err
		}
	}
	if seen[SectionDeploy] || len(deploySec.Entries) > 0 {
		if read := sectionReader(SectionDeploy); read != nil {
			v, err := read(deploySec)
			if err != nil {
				return nil, err
			}
			p.sections[SectionDeploy] = v
		}
	}
	return p, nil
}

// readTrust reads and checks the trust section into p.
func (p *PolicyFile) readTrust(sec *PolicySection) error {
	dir := filepath.Dir(sec.File)
	for _, e := range sec.Entries {
		p.Has[e.Key] = true
		var err error
		switch e.Key {
		case "keyrings", "untrusted-keyrings":
			var paths []string
			if paths, err = e.Strings(); err == nil {
				for i, path := range paths {
					if !filepath.IsAbs(path) {
						paths[i] = filepath.Join(dir, path)
					}
				}
				if e.Key == "keyrings" {
					p.Keyrings = paths
				} else {
					p.UntrustedKeyrings = paths
				}
			}
		case "require-signers":
			if p.RequireSigners, err = e.Strings(); err == nil {
				for j, f := range p.RequireSigners {
					if _, ferr := signing.NormalizeFingerprint(f); ferr != nil {
						return e.ItemErrorf(j, "require-signers: %v", ferr)
					}
				}
			}
		case "algorithms":
			if p.Algorithms, err = e.Strings(); err == nil {
				for j, a := range p.Algorithms {
					var fe *errcode.FieldError
					if _, aerr := signing.ParseAlgorithm(a); errors.As(aerr, &fe) {
						return e.ItemErrorf(j, "algorithms: %s: %s", fe.Value, fe.Reason)
					}
				}
			}
		case "min-signers":
			v, _ := e.Scalar()
			n, cerr := strconv.Atoi(v)
			if cerr != nil || n < 1 {
				return e.Errorf("min-signers must be a whole number of at least 1")
			}
			p.MinSigners = n
		default:
			return e.Unknown(PolicyKeys())
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readProvenance reads the provenance section: a mapping of
// ProvenanceKeys. Patterns are checked, max-age is a Go duration ("720h")
// or a number of days ("30d"), bundle-keys are PEM public key files
// (relative to the policy's folder).
func readProvenance(n *yaml.Node, dir string, at func(*yaml.Node, string, ...any) error, strs func(k, v *yaml.Node) ([]string, error)) (*provenance.Policy, error) {
	if n.Kind != yaml.MappingNode {
		return nil, at(n, "provenance must be a mapping of %s", strings.Join(ProvenanceKeys(), ", "))
	}
	pol := &provenance.Policy{}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return nil, at(k, "provenance.%s is given twice", k.Value)
		}
		seen[k.Value] = true
		patterns := func() ([]string, error) {
			ps, err := strs(k, v)
			for j, p := range ps {
				if perr := provenance.CheckPattern(p); perr != nil {
					return nil, at(v.Content[j], "provenance.%s: %v", k.Value, perr)
				}
			}
			return ps, err
		}
		var err error
		switch k.Value {
		case "predicate-type":
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				return nil, at(v, "provenance.predicate-type must be a URI (%s)", provenance.PredicateType)
			}
			pol.PredicateType = v.Value
		case "builders":
			pol.Builders, err = patterns()
		case "repositories":
			pol.Repositories, err = patterns()
		case "refs":
			pol.Refs, err = patterns()
		case "max-age":
			d, derr := parseAge(v.Value)
			if v.Kind != yaml.ScalarNode || derr != nil || d <= 0 {
				return nil, at(v, "provenance.max-age must be a positive duration: 720h, 90m, or 30d")
			}
			pol.MaxAge = d
		case "bundle-keys":
			var files []string
			if files, err = strs(k, v); err == nil {
				for j, f := range files {
					if !filepath.IsAbs(f) {
						f = filepath.Join(dir, f)
					}
					key, kerr := provenance.ReadPublicKey(f)
					if kerr != nil {
						return nil, at(v.Content[j], "provenance.bundle-keys: %v", kerr)
					}
					pol.BundleKeys = append(pol.BundleKeys, provenance.BundleKey{File: f, Key: key})
				}
			}
		default:
			return nil, at(k, "unknown key provenance.%s%s", k.Value, suggest.Hint(k.Value, ProvenanceKeys()))
		}
		if err != nil {
			return nil, err
		}
	}
	return pol, nil
}

// parseAge reads a duration: Go's syntax, or whole days ("30d").
func parseAge(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n <= 0 || n > 100000 {
			return 0, fmt.Errorf("bad days %q", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}
