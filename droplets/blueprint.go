package droplets

// BlueprintType is the type specifier of the blueprint droplet: a blueprint
// of the Blueprint Specification v2023-04-20 and the local blueprints it
// includes, packaged by packager/blueprint.
const BlueprintType = "npm://@cloud-assembly/blueprint.BlueprintDroplet"

func init() {
	Register(&Kind{
		Alias: "blueprint",
		Type:  BlueprintType,
		Properties: []Property{
			// blueprint is the root blueprint file (YAML or JSON).
			{Name: "blueprint", Required: true, Type: "string", Path: PathFile},
			// variables gives values for the root blueprint's variables
			// (strings, numbers or booleans), used at packaging time.
			{Name: "variables"},
		},
		Attributes:        []string{"instanceId"},
		AttributePrefixes: []string{"export."},
	})
}
