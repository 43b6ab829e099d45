package main

import (
	"bytes"
	"crypto"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/internal/suggest"
	"github.com/cloud-assembly/assemble/internal/yamlpos"
	"github.com/cloud-assembly/assemble/signing"
)

// trustFlags say whom verify and extract trust and which signatures they
// require.
func trustFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "keyring", Usage: "trusted public keys: a key `FILE`, or a folder whose every file is one (repeatable)"},
		&cli.StringSliceFlag{Name: "untrusted-keyring", Usage: "public keys `FILE` or folder that only name signers; never trusted (repeatable)"},
		&cli.StringFlag{Name: "policy", Usage: "read keyrings, required signers, minimum signers and allowed algorithms from the YAML `FILE`; flags override it"},
		&cli.IntFlag{Name: "min-signers", Value: 1, Usage: "require valid signatures by at least `N` distinct trusted keys"},
		&cli.StringSliceFlag{Name: "require-signer", Usage: "require a valid signature by the trusted key with this primary `FINGERPRINT` (repeatable)"},
		&cli.StringSliceFlag{Name: "allow-algorithm", Usage: "allow only these hash `ALGORITHM`s (SHA256, SHA384, SHA512) for the attestation and the signatures (repeatable)"},
	}
}

// policyKeys are the keys of a --policy file, in the order --help lists them.
var policyKeys = []string{"keyrings", "untrusted-keyrings", "min-signers", "require-signers", "algorithms"}

// A trust is what verify trusts and requires, from --policy and the flags.
type trust struct {
	trusted, known openpgp.EntityList
	policy         signing.Policy
}

// policyFile is a --policy file: keyring paths are relative to its folder.
type policyFile struct {
	keyrings, untrusted, signers, algorithms []string
	minSigners                               int
	has                                      map[string]bool
}

// A policyError is a mistake in a --policy file, at a line and column.
type policyError struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *policyError) Unwrap() error { return errInvalidPolicy }

func (e *policyError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// maxPolicySize bounds a --policy file: a policy names a few keyrings and
// fingerprints, and it is read whole.
const maxPolicySize = 1 << 20

// readPolicy reads a --policy file, strictly: a YAML mapping of the
// policyKeys only, each once, in one YAML document; lists of strings;
// min-signers a whole number of at least 1.
func readPolicy(file string) (*policyFile, error) {
	data, err := limitio.ReadFile(file, maxPolicySize)
	var tl *limitio.TooLargeError
	if errors.As(err, &tl) {
		return nil, withHint(&policyError{File: file, Msg: fmt.Sprintf("the policy is %s", tl)}, "a policy is a short YAML mapping: check that --policy names the policy file")
	}
	if err != nil {
		return nil, flagFileError("--policy", err)
	}
	at := func(n *yaml.Node, format string, args ...any) error {
		e := &policyError{File: file, Msg: fmt.Sprintf(format, args...)}
		if n != nil {
			e.Line, e.Column = n.Line, n.Column
		}
		return withHint(e, "a policy is a YAML mapping of "+strings.Join(policyKeys, ", ")+" (see 'assemble verify --help')")
	}
	if le := yamlpos.CheckNodes(data); le != nil {
		return nil, withHint(&policyError{File: file, Line: le.Pos.Line, Column: le.Pos.Column, Msg: le.Reason()}, "a policy is a short YAML mapping")
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
		return nil, withHint(&policyError{File: file, Line: pos.Line, Column: pos.Column, Msg: "malformed YAML: " + msg}, "fix the YAML syntax")
	}
	if len(doc.Content) == 0 {
		return nil, at(nil, "empty policy")
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, at(top, "the policy must be a mapping (key: value lines)")
	}
	p := &policyFile{has: map[string]bool{}}
	dir := filepath.Dir(file)
	strs := func(key, v *yaml.Node) ([]string, error) {
		if v.Kind != yaml.SequenceNode {
			return nil, at(v, "%s must be a list", key.Value)
		}
		var out []string
		for _, it := range v.Content {
			if it.Kind != yaml.ScalarNode || it.Tag == "!!null" || it.Value == "" {
				return nil, at(it, "%s: every entry must be a non-empty string", key.Value)
			}
			out = append(out, it.Value)
		}
		return out, nil
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if p.has[k.Value] {
			return nil, at(k, "%s is given twice", k.Value)
		}
		p.has[k.Value] = true
		var err error
		switch k.Value {
		case "keyrings", "untrusted-keyrings":
			var paths []string
			if paths, err = strs(k, v); err == nil {
				for i, path := range paths {
					if !filepath.IsAbs(path) {
						paths[i] = filepath.Join(dir, path)
					}
				}
				if k.Value == "keyrings" {
					p.keyrings = paths
				} else {
					p.untrusted = paths
				}
			}
		case "require-signers":
			if p.signers, err = strs(k, v); err == nil {
				for j, f := range p.signers {
					if _, ferr := signing.NormalizeFingerprint(f); ferr != nil {
						return nil, at(v.Content[j], "require-signers: %v", ferr)
					}
				}
			}
		case "algorithms":
			if p.algorithms, err = strs(k, v); err == nil {
				for j, a := range p.algorithms {
					if _, aerr := signing.ParseAlgorithm(a); aerr != nil {
						return nil, at(v.Content[j], "algorithms: %q: use SHA256, SHA384 or SHA512", a)
					}
				}
			}
		case "min-signers":
			n, cerr := strconv.Atoi(v.Value)
			if v.Kind != yaml.ScalarNode || cerr != nil || n < 1 {
				return nil, at(v, "min-signers must be a whole number of at least 1")
			}
			p.minSigners = n
		default:
			return nil, at(k, "unknown key %q%s", k.Value, suggest.Hint(k.Value, policyKeys))
		}
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// commaHint adds, to the error of a repeatable flag's value holding a
// comma, that values are not split: the flag is repeated.
func commaHint(flag, value string, err error) error {
	before, after, ok := strings.Cut(value, ",")
	if !ok {
		return err
	}
	return withHint(err, fmt.Sprintf("a value is never split on commas: repeat the flag, %s %s %s %s", flag, strings.TrimSpace(before), flag, strings.TrimSpace(after)))
}

// trustGiven reports whether any trust flag (or --policy) is given.
func trustGiven(c *cli.Context) bool {
	for _, f := range trustFlags() {
		if c.IsSet(f.Names()[0]) {
			return true
		}
	}
	return false
}

// loadTrust reads --policy and the trust flags (a flag given replaces
// what the policy says), then the keyrings, and checks that the policy can
// be met: every required signer is a trusted key, and there are as many
// trusted keys as signers required.
func loadTrust(c *cli.Context) (*trust, error) {
	p := &policyFile{has: map[string]bool{}}
	if file := c.String("policy"); file != "" {
		var err error
		if p, err = readPolicy(file); err != nil {
			return nil, err
		}
	}
	keyrings, untrusted, signers, algs := p.keyrings, p.untrusted, p.signers, p.algorithms
	if c.IsSet("keyring") {
		keyrings = c.StringSlice("keyring")
	}
	if c.IsSet("untrusted-keyring") {
		untrusted = c.StringSlice("untrusted-keyring")
	}
	if c.IsSet("require-signer") {
		signers = c.StringSlice("require-signer")
	}
	if c.IsSet("allow-algorithm") {
		algs = c.StringSlice("allow-algorithm")
	}
	min := max(p.minSigners, 1)
	if c.IsSet("min-signers") {
		if min = c.Int("min-signers"); min < 1 {
			return nil, usagef("--min-signers %d: at least 1 signature is always needed", min)
		}
	}
	if len(keyrings) == 0 {
		return nil, usagef("%s needs at least one --keyring FILE of trusted public keys (or a --policy FILE naming keyrings)", c.Command.Name)
	}
	t := &trust{policy: signing.Policy{MinSigners: min}}
	var err error
	if t.trusted, _, err = readKeyrings("--keyring", keyrings); err != nil {
		return nil, err
	}
	if len(untrusted) > 0 {
		if t.known, _, err = readKeyrings("--untrusted-keyring", untrusted); err != nil {
			return nil, err
		}
	}
	ring := signing.NewKeyring(t.trusted)
	primaries := map[string]bool{}
	subkeys := map[string]string{}
	for _, e := range ring.Entities() {
		fp := fmt.Sprintf("%X", e.PrimaryKey.Fingerprint)
		primaries[fp] = true
		for _, sk := range e.Subkeys {
			subkeys[fmt.Sprintf("%X", sk.PublicKey.Fingerprint)] = fp
		}
	}
	for _, s := range signers {
		fp, err := signing.NormalizeFingerprint(s)
		if err != nil {
			return nil, commaHint("--require-signer", s, usagef("--require-signer: %v", err))
		}
		if primary, ok := subkeys[fp]; ok {
			return nil, usagef("--require-signer %s is a subkey: give its primary key's fingerprint, %s", s, primary)
		}
		if !primaries[fp] {
			return nil, withHint(usagef("--require-signer %s: no such key in the trusted keyrings, so it could never sign", s), "add its public key with --keyring")
		}
		if !slices.Contains(t.policy.Signers, fp) {
			t.policy.Signers = append(t.policy.Signers, fp)
		}
	}
	if min > ring.Len() {
		return nil, usagef("%d signers required, but the trusted keyrings hold only %s: the policy can never be met", min, plural.Count(ring.Len(), "key"))
	}
	for _, a := range algs {
		h, err := signing.ParseAlgorithm(a)
		if err != nil {
			return nil, commaHint("--allow-algorithm", a, usagef("--allow-algorithm %q: use SHA256, SHA384 or SHA512", a))
		}
		if !slices.Contains(t.policy.Algorithms, h) {
			t.policy.Algorithms = append(t.policy.Algorithms, h)
		}
	}
	return t, nil
}

// readKeyrings reads the keys of each path, a key file or a folder whose
// every file (but hidden ones, and folders) is read as keys, in name order.
// It returns the keys and the files read.
func readKeyrings(flag string, paths []string) (openpgp.EntityList, []string, error) {
	var all openpgp.EntityList
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, flagFileError(flag, err)
		}
		names := []string{p}
		if st.IsDir() {
			ents, err := os.ReadDir(p)
			if err != nil {
				return nil, nil, flagFileError(flag, err)
			}
			names = nil
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), ".") {
					continue
				}
				full := filepath.Join(p, e.Name())
				if fi, err := os.Stat(full); err == nil && fi.IsDir() {
					continue
				}
				names = append(names, full)
			}
			sort.Strings(names)
			if len(names) == 0 {
				return nil, nil, withHint(fmt.Errorf("%s %s: the folder holds no key files", flag, p), "put the trusted public keys in it, one or more per file ('gpg --export --armor KEYID > NAME.asc')")
			}
		}
		for _, name := range names {
			f, err := os.Open(name)
			if err != nil {
				return nil, nil, flagFileError(flag, err)
			}
			keys, err := signing.ReadKeys(f)
			f.Close()
			if err != nil {
				hint := "export trusted keys with 'gpg --export --armor KEYID'"
				if st.IsDir() {
					hint = "every file in a keyring folder must hold public keys: move other files out of it (hidden files are skipped)"
				}
				return nil, nil, withHint(fmt.Errorf("%s %s: %w", flag, name, err), hint)
			}
			all = append(all, keys...)
			files = append(files, name)
		}
	}
	return all, files, nil
}

// algorithmNames lists hashes by their attestation names.
func algorithmNames(hs []crypto.Hash) []string {
	out := []string{}
	for _, h := range hs {
		out = append(out, signing.AlgorithmName(h))
	}
	return out
}
