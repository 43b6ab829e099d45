package deploy

import (
	"context"
	"fmt"
	"strings"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
)

// dropletKind is a deployer: everything Deploy, Diff, Status and Destroy
// do that depends on a droplet's type. Each kind registers itself beside
// its code (registerKind, in its file's init), so the table kinds is the
// one place a droplet type meets its deployer, and a new kind is one new
// file.
type dropletKind interface {
	// check looks at the droplet's properties and files before any AWS
	// call (unresolved properties: references are not resolved yet).
	check(r *runner, id string, spec *assembly.Droplet) error
	// resolved adjusts the properties once their references are resolved
	// (d.props): an asset's destination placeholders, a stack's target
	// tags.
	resolved(d *droplet)
	// purpose is which of the account's roles its calls take.
	purpose() purpose
	// preflight adds its checks of what the account holds to the
	// preflight pass (stack names and owners, buckets), before any
	// change.
	preflight(p *preflightPass, d *droplet)
	// current reads the attributes of the deployed droplet (nothing
	// changes); ok is false when it is not deployed.
	current(ctx context.Context, d *droplet) (attrs map[string]string, ok bool, err error)
	// usable says, for a droplet Only leaves out that others need, what
	// keeps the deployed one from being used as it is, in words (none:
	// usable; a stack is judged by current alone).
	usable(ctx context.Context, d *droplet) ([]string, error)
	// plan records what deploy would do, leaving nothing behind.
	plan(ctx context.Context, d *droplet) error
	// deploy deploys the droplet and returns its attributes.
	deploy(ctx context.Context, d *droplet) (Outcome, map[string]string, error)
	// status compares what is deployed with the droplet: the differences,
	// in words (none when it matches).
	status(ctx context.Context, d *droplet) ([]string, error)
	// diff says what a deploy would change, reading only (a change set
	// only with changeSet, deleted after).
	diff(ctx context.Context, d *droplet, dd *DropletDiff, changeSet bool) error
	// look reads what the droplet deployed, for Destroy: it records what
	// would be deleted, sets Absent or Kept when nothing would be, and
	// gives the droplet's attributes to those that refer to it.
	look(ctx context.Context, d *droplet, purge bool) error
	// destroy deletes what look found.
	destroy(ctx context.Context, d *droplet, purge bool) error
}

// kinds is the table of deployers, by droplet kind type (droplets.Kind's
// Type, its version aside). Blueprints have none: they are refused
// (ErrUndeployable) unless Only leaves them out.
var kinds = map[string]dropletKind{}

// registerKind registers k as the deployer of droplets of type typ, a
// registered droplets kind; a second deployer for a type panics.
func registerKind(typ string, k dropletKind) {
	sp, err := droplets.ParseSpecifier(typ)
	if err != nil {
		panic(fmt.Sprintf("deploy: kind %q: %v", typ, err))
	}
	if _, ok := droplets.Lookup(sp); !ok {
		panic("deploy: no droplet kind " + typ)
	}
	if _, dup := kinds[typ]; dup {
		panic("deploy: two deployers for " + typ)
	}
	kinds[typ] = k
}

// kindOf is the deployer of a droplet type (version ignored), and the
// kind's alias; nil when the type has none.
func kindOf(typ string) (dropletKind, string) {
	sp, err := droplets.ParseSpecifier(typ)
	if err != nil {
		return nil, ""
	}
	k, ok := droplets.Lookup(sp)
	if !ok {
		return nil, ""
	}
	return kinds[k.Type], k.Alias
}

// assetDestination replaces, in an asset's destination (a file's or
// directory's bucketName, objectKey, keyPrefix; an image build's
// repositoryName and imageTag; a saved image's pushTarget and tagName),
// CDK's placeholders ${AWS::AccountId},
// ${AWS::Region} and ${AWS::Partition} (written \${...} in the manifest)
// with the droplet's account, region and partition, as cdk-assets reads
// them.
func assetDestination(d *droplet) {
	rep := strings.NewReplacer("${AWS::AccountId}", d.account, "${AWS::Region}", d.region, "${AWS::Partition}", partition(d.region))
	for _, k := range []string{"bucketName", "objectKey", "keyPrefix", "repositoryName", "imageTag", "pushTarget", "tagName"} {
		if v, ok := d.props[k].(string); ok {
			d.props[k] = rep.Replace(v)
		}
	}
}

// diffAfterDeploy is the diff of an asset whose destination is known
// only after deploy (it refers to a droplet that changes): it changes.
func diffAfterDeploy(d *droplet, dd *DropletDiff) bool {
	if len(d.unknown) == 0 {
		return false
	}
	dd.State = StateChanged
	dd.Notes = append(dd.Notes, "its destination is known after deploy ("+strings.Join(d.unknown, ", ")+")")
	return true
}
