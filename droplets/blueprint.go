package droplets

// BlueprintType is the type specifier of the blueprint droplet: a blueprint
// of the Blueprint Specification v2023-04-20 and the local blueprints it
// includes, packaged by packager/blueprint.
const BlueprintType = "npm://@cloud-assembly/blueprint.BlueprintDroplet"

func init() {
	Register(&Kind{
		Alias: "blueprint",
		Doc:   "A blueprint of the Blueprint Specification v2023-04-20 and the local blueprints it includes.",
		Type:  BlueprintType,
		Properties: []Property{
			{Name: "blueprint", Required: true, Type: "string", Path: PathFile, Doc: "The root blueprint (YAML or JSON); its included blueprints are shipped beside it."},
			{Name: "variables", Doc: "Values for the root blueprint's variables (strings, numbers or booleans), used at packaging time."},
		},
		Attributes:        []string{"instanceId"},
		AttributePrefixes: []string{"export."},
		AttributeDocs: map[string]string{
			"export.":    "The blueprint's export `<name>`.",
			"instanceId": "The ID of the deployed blueprint instance.",
		},
	})
}
