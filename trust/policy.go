package trust

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/hint"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/suggest"
	"github.com/cloud-assembly/assemble/internal/yamlpos"
	"github.com/cloud-assembly/assemble/signing"
)

// PolicyKeys are the keys of a policy file, in the order help lists them.
func PolicyKeys() []string {
	return []string{"keyrings", "untrusted-keyrings", "min-signers", "require-signers", "algorithms", "staging-bucket", "capabilities", "require-approval", "targets", "deployer-parameters"}
}

// A PolicyFile is what a policy file says; keyring paths are made
// relative to its folder. Has tells which keys it sets.
type PolicyFile struct {
	Keyrings, UntrustedKeyrings []string
	RequireSigners, Algorithms  []string
	MinSigners                  int
	// StagingBucket and Capabilities are deploy's: the S3 bucket that
	// receives templates too large to send inline, and the stack
	// capabilities deploy may grant (IAM, NAMED_IAM, AUTO_EXPAND).
	StagingBucket string
	Capabilities  []string
	// RequireApproval is deploy's approval level (never, any-change,
	// broadening), checked by deploy.ParseApproval.
	RequireApproval string
	// Targets are the assembly targets (stages) a deploy, status or destroy
	// may choose; when the key is absent, any.
	Targets []string
	// DeployerParameters are deploy's too: the stack parameters
	// (DROPLET.NAME) a deployer may set beyond the assembly's `missing`
	// ones, over the signed value or the template's Default.
	DeployerParameters []string
	Has                map[string]bool
}

// bucketRE is an S3 bucket name.
var bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// maxPolicySize bounds a policy file: a policy names a few keyrings and
// fingerprints, and it is read whole.
const maxPolicySize = 1 << 20

// ReadPolicy reads a policy file, strictly: a YAML mapping of the
// PolicyKeys only, each once, in one YAML document; lists of strings;
// min-signers a whole number of at least 1. Its errors are *PolicyError
// (ErrInvalidPolicy) with the line and column, or the file's own.
func ReadPolicy(file string) (*PolicyFile, error) {
	data, err := limitio.ReadFile(file, maxPolicySize)
	var tl *limitio.TooLargeError
	if errors.As(err, &tl) {
		return nil, hint.With(&PolicyError{File: file, Msg: fmt.Sprintf("the policy is %s", tl)}, "a policy is a short YAML mapping: check that --policy names the policy file")
	}
	if err != nil {
		return nil, fileError("--policy", err)
	}
	keys := PolicyKeys()
	at := func(n *yaml.Node, format string, args ...any) error {
		e := &PolicyError{File: file, Msg: fmt.Sprintf(format, args...)}
		if n != nil {
			e.Line, e.Column = n.Line, n.Column
		}
		return hint.With(e, "a policy is a YAML mapping of "+strings.Join(keys, ", ")+" (see 'assemble verify --help')")
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
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, at(top, "the policy must be a mapping (key: value lines)")
	}
	p := &PolicyFile{Has: map[string]bool{}}
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
		if p.Has[k.Value] {
			return nil, at(k, "%s is given twice", k.Value)
		}
		p.Has[k.Value] = true
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
					p.Keyrings = paths
				} else {
					p.UntrustedKeyrings = paths
				}
			}
		case "require-signers":
			if p.RequireSigners, err = strs(k, v); err == nil {
				for j, f := range p.RequireSigners {
					if _, ferr := signing.NormalizeFingerprint(f); ferr != nil {
						return nil, at(v.Content[j], "require-signers: %v", ferr)
					}
				}
			}
		case "algorithms":
			if p.Algorithms, err = strs(k, v); err == nil {
				for j, a := range p.Algorithms {
					if _, aerr := signing.ParseAlgorithm(a); aerr != nil {
						return nil, at(v.Content[j], "algorithms: %q: use SHA256, SHA384 or SHA512", a)
					}
				}
			}
		case "staging-bucket":
			if v.Kind != yaml.ScalarNode || !bucketRE.MatchString(v.Value) {
				return nil, at(v, "staging-bucket must be an S3 bucket name (3 to 63 lower-case letters, digits, dots and hyphens)")
			}
			p.StagingBucket = v.Value
		case "capabilities":
			if p.Capabilities, err = strs(k, v); err == nil {
				for j, c := range p.Capabilities {
					switch strings.TrimPrefix(c, "CAPABILITY_") {
					case "IAM", "NAMED_IAM", "AUTO_EXPAND":
					default:
						return nil, at(v.Content[j], "capabilities: %q: use IAM, NAMED_IAM or AUTO_EXPAND", c)
					}
				}
			}
		case "require-approval":
			if v.Kind != yaml.ScalarNode || v.Value == "" {
				return nil, at(v, "require-approval must be never, any-change or broadening")
			}
			p.RequireApproval = v.Value
		case "deployer-parameters":
			if p.DeployerParameters, err = strs(k, v); err == nil {
				for j, dp := range p.DeployerParameters {
					if id, name, ok := strings.Cut(dp, "."); !ok || id == "" || name == "" {
						return nil, at(v.Content[j], "deployer-parameters: %q: name a stack parameter as DROPLET.NAME", dp)
					}
				}
			}
		case "targets":
			if p.Targets, err = strs(k, v); err == nil {
				for j, t := range p.Targets {
					if !assembly.ValidTargetName(t) {
						return nil, at(v.Content[j], "targets: %q is not a target name (letters, digits, _ and -)", t)
					}
				}
			}
		case "min-signers":
			n, cerr := strconv.Atoi(v.Value)
			if v.Kind != yaml.ScalarNode || cerr != nil || n < 1 {
				return nil, at(v, "min-signers must be a whole number of at least 1")
			}
			p.MinSigners = n
		default:
			return nil, at(k, "unknown key %q%s", k.Value, suggest.Hint(k.Value, keys))
		}
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// ErrTargetRefused: the policy file's targets do not name the target a
// deploy, status or destroy chose.
var ErrTargetRefused = errcode.New("target_refused", "target refused by the policy",
	"choose a target the policy file's targets: list names, or change the policy")

// AllowTarget is the verdict on a target: nil when the policy names no
// targets (any is allowed) or names this one. It is what deploy asks
// before reaching any account.
func (p *PolicyFile) AllowTarget(name string) error {
	if p == nil || !p.Has["targets"] {
		return nil
	}
	for _, t := range p.Targets {
		if t == name {
			return nil
		}
	}
	allowed := "none"
	if len(p.Targets) > 0 {
		allowed = strings.Join(p.Targets, ", ")
	}
	return fmt.Errorf("%w: target %s: the policy allows %s", ErrTargetRefused, name, allowed)
}
