package assembly

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/suggest"
)

// TargetDroplet is the logical ID a droplet property uses to take a value
// from the target it is deployed to: ${target.NAME}, the spec's
// ${LogicalId.attribute} token with the reserved ID "target", escaped as
// any other (\${target.NAME} is the literal text). In an assembly that
// declares targets no droplet may be called "target"; the value NAME must
// be one every target defines.
const TargetDroplet = "target"

// MaxTargets bounds the targets of one manifest, MaxTargetEnvironments the
// account/region pairs of one target.
const (
	MaxTargets            = 64
	MaxTargetEnvironments = 256
)

// A Target is a stage the assembly deploys to (dev, staging, prod): an
// extension of the spec recorded under the manifest's "targets" key and
// signed with it, so that a stage's settings are never typed at deploy time.
//
// Droplets whose environment is aws://unknown-account/unknown-region take
// each of the target's environments; droplets that name their own keep it.
type Target struct {
	// Environments are the account/region pairs, aws://ACCOUNT/REGION, in
	// the order they deploy (a matrix when there are several).
	Environments []string `json:"environments"`
	// Values are what ${target.NAME} stands for in droplet properties.
	Values map[string]string `json:"values,omitempty"`
	// Tags are added to every stack that takes the target's environment
	// (a droplet's own tag of the same key wins; a droplet with its own
	// environment is shared by the targets and takes none).
	Tags map[string]string `json:"tags,omitempty"`
	// DeployRole is the role assumed for an account the caller's
	// credentials are not in; ${AWS::AccountId} and ${AWS::Region} stand
	// for the droplet's account and region.
	DeployRole string `json:"deployRole,omitempty"`
}

// ErrTarget: a manifest's targets are malformed, or a ${target.NAME}
// reference names a value some target does not define. It matches
// ErrManifest too.
var ErrTarget = errcode.Sub(ErrManifest, "target", "invalid target",
	"give each target environments (aws://ACCOUNT/REGION) and every value its droplets take as ${target.NAME}")

var (
	targetNameRE  = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	targetValueRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)
	roleARNRE     = regexp.MustCompile(`^arn:[a-z-]+:iam::(\$\{AWS::AccountId\}|[0-9]{12}):role/[\w+=,.@/${}:-]{1,512}$`)
)

// ValidTargetName reports whether a target's name is 1 to 64 letters,
// digits, "_" or "-".
func ValidTargetName(name string) bool { return targetNameRE.MatchString(name) }

// TargetNames returns the manifest's target names, sorted.
func (m *Manifest) TargetNames() []string { return slices.Sorted(maps.Keys(m.Targets)) }

// TargetEnvironments resolves one droplet's environment under a target:
// a droplet that names its own account and region keeps it; one that is
// environment-agnostic (aws://unknown-account/unknown-region, or either
// part unknown) takes each of the target's environments, filling in only
// the unknown parts (PairEnvironment). With no target (t nil) it is the
// droplet's own.
func TargetEnvironments(d *Droplet, t *Target) []string {
	if t == nil || !TakesTarget(d) {
		return []string{d.Environment}
	}
	out := make([]string, 0, len(t.Environments))
	for _, te := range t.Environments {
		out = append(out, PairEnvironment(d, te))
	}
	return out
}

// PairEnvironment is the one rule for a droplet's environment under one
// account/region pair of a target (aws://ACCOUNT/REGION): the pair fills
// in the account and the region the droplet leaves unknown; a droplet that
// names both keeps its own, and so does any when pair is "" or malformed.
func PairEnvironment(d *Droplet, pair string) string {
	env, err := ParseEnvironment(d.Environment)
	if err != nil || env.Protocol != "aws" || !env.Agnostic() {
		return d.Environment
	}
	pe, err := ParseEnvironment(pair)
	if pair == "" || err != nil || pe.Protocol != "aws" {
		return d.Environment
	}
	if env.Account == UnknownAccount {
		env.Account = pe.Account
	}
	if env.Region == UnknownRegion {
		env.Region = pe.Region
	}
	return "aws://" + env.Account + "/" + env.Region
}

// TakesTarget reports whether the droplet's environment leaves its
// account or region to the target (it deploys once per pair).
func TakesTarget(d *Droplet) bool {
	env, err := ParseEnvironment(d.Environment)
	return err == nil && env.Protocol == "aws" && env.Agnostic()
}

// targets checks the manifest's targets: names, environments (aws://, a
// real account and region, no pair twice), value names, tags, and the role.
func (c *checker) targets(m *Manifest) {
	if len(m.Targets) > MaxTargets {
		c.add(ruleTooLarge, "", "targets", nil, "%d targets, at most %d allowed", len(m.Targets), MaxTargets)
		return
	}
	if len(m.Targets) > 0 {
		if _, ok := m.Droplets[TargetDroplet]; ok {
			c.add(ruleTarget, TargetDroplet, "", nil, "a droplet is called %q, the name ${target.NAME} references use in an assembly with targets: rename the droplet", TargetDroplet)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(m.Targets)) {
		t, field := m.Targets[name], "targets."+name
		switch {
		case !ValidTargetName(name):
			c.add(ruleTarget, "", field, nil, "target name %q must match ^[A-Za-z0-9_-]{1,64}$", name)
			continue
		case t == nil:
			c.add(ruleSchema, "", field, nil, "want an object, got null")
			continue
		case len(t.Environments) == 0:
			c.add(ruleTarget, "", field+".environments", nil, "target %s names no environment: give it at least one aws://ACCOUNT/REGION", name)
		case len(t.Environments) > MaxTargetEnvironments:
			c.add(ruleTooLarge, "", field+".environments", nil, "%d environments, at most %d allowed", len(t.Environments), MaxTargetEnvironments)
			continue
		}
		seen := map[string]bool{}
		for i, e := range t.Environments {
			f := fmt.Sprintf("%s.environments[%d]", field, i)
			env, err := ParseEnvironment(e)
			switch {
			case err != nil:
				c.add(ruleTarget, "", f, err, "%v", err)
			case env.Protocol != "aws" || env.Agnostic():
				c.add(ruleTarget, "", f, nil, "environment %s: a target names a real aws://ACCOUNT/REGION", e)
			case seen[e]:
				c.add(ruleTarget, "", f, nil, "environment %s appears twice in target %s", e, name)
			}
			seen[e] = true
		}
		for _, k := range slices.Sorted(maps.Keys(t.Values)) {
			if !targetValueRE.MatchString(k) {
				c.add(ruleTarget, "", field+".values."+k, nil, "value name %q must match ^[A-Za-z0-9_-]{1,128}$", k)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(t.Tags)) {
			if k == "" || len(k) > 128 || len(t.Tags[k]) > 256 {
				c.add(ruleTarget, "", field+".tags."+k, nil, "a tag key is 1 to 128 characters, its value at most 256")
			}
		}
		if t.DeployRole != "" && !roleARNRE.MatchString(t.DeployRole) {
			c.add(ruleTarget, "", field+".deployRole", nil, "deployRole %q is not a role ARN (arn:aws:iam::ACCOUNT:role/NAME; ${AWS::AccountId} and ${AWS::Region} may stand for the droplet's)", t.DeployRole)
		}
	}
}

// targetReference checks a ${target.NAME} reference: it is one only when
// the manifest declares targets and holds no droplet called "target"; then
// every target must define the value. It reports whether r was one.
func (c *checker) targetReference(m *Manifest, id, field string, r PropertyReference) bool {
	if !m.IsTargetReference(r.Reference) {
		return false
	}
	var lacking []string
	var have []string
	for _, name := range slices.Sorted(maps.Keys(m.Targets)) {
		t := m.Targets[name]
		if t == nil {
			continue
		}
		if _, ok := t.Values[r.Attribute]; !ok {
			lacking = append(lacking, name)
		}
		for k := range t.Values {
			have = append(have, k)
		}
	}
	if len(lacking) > 0 {
		sort.Strings(have)
		which := "target " + lacking[0] + " defines"
		if len(lacking) > 1 {
			which = "targets " + strings.Join(lacking, ", ") + " define"
		}
		c.add(ruleTarget, id, field, nil, "%s: %s no value %q%s", r.Reference, which, r.Attribute, suggest.Hint(r.Attribute, have))
	}
	return true
}

// IsTargetReference reports whether r takes a value from the target
// (${target.NAME} in a manifest that declares targets and holds no
// droplet called "target") rather than from a droplet.
func (m *Manifest) IsTargetReference(r Reference) bool {
	if r.Droplet != TargetDroplet || len(m.Targets) == 0 {
		return false
	}
	_, isDroplet := m.Droplets[TargetDroplet]
	return !isDroplet
}
