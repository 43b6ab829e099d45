package assembly

import (
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/cloud-assembly/assemble/droplets"
)

// stackNameRE is CloudFormation's rule for a stack name: a letter, then
// letters, digits and hyphens, 128 characters at most.
var stackNameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{0,127}$`)

// ValidStackName reports whether CloudFormation accepts name as a stack's
// name.
func ValidStackName(name string) bool { return stackNameRE.MatchString(name) }

// A StackKey names one CloudFormation stack: its account, region and
// name. Two stack droplets with one key deploy over each other.
type StackKey struct{ Account, Region, Name string }

func (k StackKey) String() string { return k.Name + " in aws://" + k.Account + "/" + k.Region }

// StackNames returns the stack name of each stack droplet whose
// stackName is fixed (a string holding no reference), by logical ID.
func StackNames(m *Manifest) map[string]string {
	out := map[string]string{}
	for id, d := range m.Droplets {
		if d == nil || !isStack(d.Type) {
			continue
		}
		name, ok := d.Properties["stackName"].(string)
		if !ok || strings.Contains(name, "${") {
			continue
		}
		out[id] = name
	}
	return out
}

// DuplicateStacks groups the stack droplets that name one stack: envOf
// gives each droplet's account and region (ok false leaves it out). Each
// group lists its logical IDs, sorted; the groups are sorted by their
// first ID.
func DuplicateStacks(m *Manifest, envOf func(id string) (account, region string, ok bool)) map[StackKey][]string {
	by := map[StackKey][]string{}
	for id, name := range StackNames(m) {
		account, region, ok := envOf(id)
		if !ok {
			continue
		}
		k := StackKey{account, region, name}
		by[k] = append(by[k], id)
	}
	for k, ids := range by {
		if len(ids) < 2 {
			delete(by, k)
			continue
		}
		sort.Strings(ids)
	}
	return by
}

func isStack(typ string) bool {
	sp, err := droplets.ParseSpecifier(typ)
	if err != nil {
		return false
	}
	k, ok := droplets.Lookup(sp)
	return ok && k.Type == droplets.StackType
}

// stacks checks the stack droplets' names: each one CloudFormation
// accepts, no two in one environment (as the manifest writes it: the
// AWS CDK's unknown-account is one account here; deploy checks again once
// it knows the caller's).
func (c *checker) stacks(m *Manifest) {
	names := StackNames(m)
	for _, id := range slices.Sorted(maps.Keys(names)) {
		if name := names[id]; name != "" && !ValidStackName(name) { // "" is a property-type finding
			c.add(ruleStackName, id, "properties.stackName", nil, "stack name %q is not one CloudFormation accepts: a letter, then letters, digits and hyphens (-), at most 128 characters", name)
		}
	}
	dups := DuplicateStacks(m, func(id string) (string, string, bool) {
		env, err := ParseEnvironment(m.Droplets[id].Environment)
		if err != nil || env.Protocol != "aws" {
			return "", "", false
		}
		return env.Account, env.Region, true
	})
	keys := make([]StackKey, 0, len(dups))
	for k := range dups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return dups[keys[i]][0] < dups[keys[j]][0] })
	for _, k := range keys {
		ids := dups[k]
		for _, id := range ids[1:] {
			c.add(ruleDuplicateStack, id, "properties.stackName", nil, "stack %q in %s is also droplet %s's: each stack droplet needs its own stackName in one account and region", k.Name, m.Droplets[id].Environment, ids[0])
		}
	}
}
