package cdk

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// schemaDir holds the CDK cloud-assembly JSON schemas of the shared peer
// corpus (see its SOURCES.md).
var schemaDir = filepath.Join("..", "..", "..", "shared", "corpus", "cdk", "schema")

// TestSchemaCoverage checks the mapping against CDK's own schemas: every
// artifact type CDK defines is one the mapping knows (no "not known"
// warning for what CDK writes), and every field of an artifact, a file or
// Docker image asset's source and of a destination that decides what is
// built or where it goes is read, or named here as deliberately left in
// the shipped files only.
func TestSchemaCoverage(t *testing.T) {
	load := func(name string) map[string]any {
		b, err := os.ReadFile(filepath.Join(schemaDir, name))
		if err != nil {
			t.Skipf("no CDK schemas at %s (../shared is absent): %v", schemaDir, err)
		}
		var s map[string]any
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		return s["definitions"].(map[string]any)
	}
	assembly, assets := load("cloud-assembly.schema.json"), load("assets.schema.json")
	props := func(name string) []string {
		def, ok := assets[name]
		if !ok {
			def = assembly[name]
		}
		d := def.(map[string]any)["properties"].(map[string]any)
		var out []string
		for k := range d {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	tags := func(v any) []string {
		var out []string
		rt := reflect.TypeOf(v)
		for i := 0; i < rt.NumField(); i++ {
			out = append(out, strings.Split(rt.Field(i).Tag.Get("json"), ",")[0])
		}
		return out
	}

	for _, typ := range assembly["ArtifactType"].(map[string]any)["enum"].([]any) {
		switch typ {
		case typeStack, typeAssetManifest, typeNested, typeTree, typeFlagReport, typeNone:
		default:
			t.Errorf("artifact type %q of the schema is not known to the mapping", typ)
		}
	}
	// What each schema definition may hold beyond what the mapping reads:
	// deploy-time roles and options CDK's CLI uses, which stay in the
	// shipped cdk.out.
	ignored := map[string][]string{
		"DockerImageDestination": {"assumeRoleAdditionalOptions", "assumeRoleArn", "assumeRoleExternalId"},
		"FileDestination":        {"assumeRoleAdditionalOptions", "assumeRoleArn", "assumeRoleExternalId"},
		"AwsCloudFormationStackProperties": {"assumeRoleAdditionalOptions", "assumeRoleArn", "assumeRoleExternalId", "bootstrapStackVersionSsmParameter",
			"cloudFormationExecutionRoleArn", "lookupRole", "requiresBootstrapStackVersion", "stackTemplateAssetObjectUrl", "validateOnSynth"},
		"AssetManifestProperties": {"bootstrapStackVersionSsmParameter", "requiresBootstrapStackVersion"},
		"MetadataEntry":           {"trace"},
	}
	for def, read := range map[string][]string{
		"ArtifactManifest":                 tags(artifact{}),
		"DockerImageSource":                tags(imageSource{}),
		"DockerImageDestination":           tags(imageDestination{}),
		"FileDestination":                  tags(fileDestination{}),
		"FileSource":                       {"executable", "packaging", "path"},
		"FileAsset":                        {"destinations", "displayName", "source"},
		"DockerImageAsset":                 {"destinations", "displayName", "source"},
		"AssetManifest":                    {"dockerImages", "files", "version"},
		"MissingContext":                   {"key", "provider", "props"},
		"AwsCloudFormationStackProperties": tags(stackProperties{}),
		"NestedCloudAssemblyProperties":    tags(nestedProperties{}),
		"AssetManifestProperties":          tags(assetManifestProperties{}),
		"MetadataEntry":                    tags(metadataEntry{}),
	} {
		for _, p := range props(def) {
			if !slices.Contains(read, p) && !slices.Contains(ignored[def], p) {
				t.Errorf("%s.%s of the schema is neither read by the mapping nor named as left out", def, p)
			}
		}
	}
}
