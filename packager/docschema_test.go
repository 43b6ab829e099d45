package packager

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
)

// The JSON Schemas of manifest.json and assembly.yaml in docs/schema are
// generated from the tables the code checks with: the droplet kinds'
// registry (droplets.Kinds: types, aliases, properties, required ones,
// their JSON types), assembly.LogicalIDPattern, assembly.SchemaVersion,
// assembly.MaxDroplets and the keys assembly.yaml may hold
// (projectKeys, projectDropletKeys). go test ./packager -update rewrites
// them. They describe the strict side: what build writes and what
// --strict accepts (a reader of someone else's assembly only warns about
// unknown keys, kinds and properties).

const schemaDraft = "https://json-schema.org/draft/2020-12/schema"

// specifierPattern is a type specifier or environment: protocol://path.
const specifierPattern = `^[a-z][a-z0-9+.-]*://.+$`

func propertySchema(p droplets.Property) map[string]any {
	s := map[string]any{}
	switch p.Type {
	case "string":
		s["type"] = "string"
	case "map":
		s["type"] = "object"
		s["additionalProperties"] = map[string]any{"type": "string"}
	case "list":
		s["type"] = "array"
		s["items"] = map[string]any{"type": "string"}
	}
	doc := p.Doc
	switch {
	case p.Path == droplets.PathFile:
		doc += " A file in the assembly: a relative, /-separated path that stays inside it."
		s["minLength"] = 1
	case p.Path == droplets.PathDirectory:
		doc += " A folder in the assembly: a relative, /-separated path that stays inside it."
		s["minLength"] = 1
	case p.InDirectory:
		doc += " Relative to the droplet's folder."
	}
	s["description"] = doc
	return s
}

// kindSchemas returns, per kind, the schema of its properties; and the
// if/then rules that pick it by the droplet's type (byType, for a
// manifest) or by alias and type (for assembly.yaml).
func kindSchemas(project bool) (defs map[string]any, rules []any) {
	defs = map[string]any{}
	for _, k := range droplets.Kinds() {
		props := map[string]any{}
		var required []string
		for _, p := range k.Properties {
			props[p.Name] = propertySchema(p)
			if p.Required {
				required = append(required, p.Name)
			}
		}
		ks := map[string]any{"type": "object", "description": fmt.Sprintf("%s (%s)", k.Doc, k.Type), "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			ks["required"] = required
		}
		name := "kind-" + k.Alias
		defs[name] = ks
		types := []any{k.Type}
		if project {
			types = append(types, k.Alias)
		}
		rules = append(rules, map[string]any{
			"if":   map[string]any{"properties": map[string]any{"type": map[string]any{"enum": types}}, "required": []string{"type"}},
			"then": map[string]any{"properties": map[string]any{"properties": map[string]any{"$ref": "#/$defs/" + name}}, "required": requiredProperties(required)},
		})
	}
	return defs, rules
}

func requiredProperties(required []string) []string {
	if len(required) > 0 {
		return []string{"properties"}
	}
	return []string{}
}

func metadataSchema() map[string]any {
	return map[string]any{
		"type": "object", "description": "Named entries of metadata: a kind (warning, error, info, or another) and a value.",
		"additionalProperties": map[string]any{
			"type": "object", "required": []string{"kind", "value"}, "additionalProperties": false,
			"properties": map[string]any{"kind": map[string]any{"type": "string"}, "value": map[string]any{}},
		},
	}
}

func manifestSchema() map[string]any {
	defs, rules := kindSchemas(false)
	defs["droplet"] = map[string]any{
		"type": "object", "required": []string{"type", "environment"}, "additionalProperties": false,
		"properties": map[string]any{
			"type":        map[string]any{"type": "string", "pattern": specifierPattern, "description": "The droplet's type specifier: npm://[@namespace/]package.ClassName[@version] for the kinds below, or another protocol://path."},
			"environment": map[string]any{"type": "string", "pattern": specifierPattern, "description": "Where it deploys: aws://<12-digit account>/<region>, or another protocol://path."},
			"dependsOn":   map[string]any{"type": "array", "items": map[string]any{"type": "string", "pattern": assembly.LogicalIDPattern}, "description": "Logical IDs of the droplets deployed before this one."},
			"metadata":    metadataSchema(),
			"properties":  map[string]any{"type": "object", "description": "The kind's properties; a string may hold ${LogicalId.attribute} references (\\${ for a literal ${)."},
		},
		"allOf": rules,
	}
	defs["missing"] = map[string]any{
		"type": "object", "required": []string{"provider", "props"}, "additionalProperties": false,
		"properties": map[string]any{"provider": map[string]any{"type": "string"}, "props": map[string]any{"type": "object"}},
	}
	defs["target"] = targetSchema(false)
	return map[string]any{
		"$schema":     schemaDraft,
		"$id":         "https://github.com/cloud-assembly/assemble/docs/schema/manifest.schema.json",
		"title":       "Cloud Assembly manifest.json",
		"description": "The manifest of a Cloud Assembly, as assemble build writes it and --strict accepts it (generated from the droplet kinds' registry: go test ./packager -update). See docs/format.md.",
		"type":        "object", "required": []string{"schema", "droplets"}, "additionalProperties": false,
		"properties": map[string]any{
			"schema": map[string]any{"const": assembly.SchemaVersion},
			"droplets": map[string]any{
				"type": "object", "maxProperties": assembly.MaxDroplets,
				"propertyNames":        map[string]any{"pattern": assembly.LogicalIDPattern},
				"additionalProperties": map[string]any{"$ref": "#/$defs/droplet"},
			},
			"missing": map[string]any{"type": "object", "additionalProperties": map[string]any{"$ref": "#/$defs/missing"}},
			"targets": targetsSchema(),
		},
		"$defs": defs,
	}
}

// envPattern is a target's environment: a real aws://ACCOUNT/REGION.
const envPattern = `^aws://[0-9]{12}/[a-z]+(-[a-z]+)*-[0-9]+$`

func targetsSchema() map[string]any {
	return map[string]any{
		"type": "object", "maxProperties": assembly.MaxTargets,
		"description":          "The stages the assembly deploys to (an extension of the spec, signed with the manifest): deploy, status and destroy --target NAME. See docs/format.md.",
		"propertyNames":        map[string]any{"pattern": "^[A-Za-z0-9_-]{1,64}$"},
		"additionalProperties": map[string]any{"$ref": "#/$defs/target"},
	}
}

// targetSchema is one target: in assembly.yaml `environment` is one
// environment or a list; the manifest always writes `environments`.
func targetSchema(project bool) map[string]any {
	strs := func(doc string, keyPattern string, maxLen int) map[string]any {
		v := map[string]any{"type": "string"}
		if maxLen > 0 {
			v["maxLength"] = maxLen
		}
		return map[string]any{"type": "object", "description": doc, "propertyNames": map[string]any{"pattern": keyPattern}, "additionalProperties": v}
	}
	list := map[string]any{"type": "array", "minItems": 1, "maxItems": assembly.MaxTargetEnvironments, "uniqueItems": true, "items": map[string]any{"type": "string", "pattern": envPattern}}
	props := map[string]any{
		"values":     strs("What ${target.NAME} stands for in droplet properties; every target defines every value its droplets use.", "^[A-Za-z0-9_-]{1,128}$", 0),
		"tags":       strs("Tags added to every stack the target deploys (a droplet's own tag of the same key wins).", "^.{1,128}$", 256),
		"deployRole": map[string]any{"type": "string", "pattern": `^arn:[a-z-]+:iam::(\$\{AWS::AccountId\}|[0-9]{12}):role/.+$`, "description": "The role assumed in an account other than the caller's; ${AWS::AccountId} and ${AWS::Region} stand for the droplet's."},
	}
	required := []string{"environments"}
	if project {
		envs := map[string]any{"anyOf": []any{map[string]any{"type": "string", "pattern": envPattern}, list}, "description": "Where the target deploys: aws://ACCOUNT/REGION, or a list of them (a matrix, deployed in this order)."}
		props["environment"] = envs
		checkKeys(projectTargetKeys, props)
		required = []string{"environment"}
	} else {
		list["description"] = "Where the target deploys, in order: droplets whose environment is aws://unknown-account/unknown-region take each."
		props["environments"] = list
	}
	return map[string]any{"type": "object", "required": required, "additionalProperties": false, "properties": props}
}

func projectSchema() map[string]any {
	defs, rules := kindSchemas(true)
	var aliases []any
	for _, a := range droplets.Aliases() {
		aliases = append(aliases, a)
	}
	dropletProps := map[string]any{
		"type": map[string]any{"type": "string", "anyOf": []any{
			map[string]any{"enum": aliases},
			map[string]any{"pattern": specifierPattern},
		}, "description": "A droplet type alias, or a full type specifier (protocol://path)."},
		"environment": map[string]any{"type": "string", "pattern": specifierPattern, "description": "Where it deploys (default: the top-level environment)."},
		"dependsOn":   map[string]any{"type": "array", "items": map[string]any{"type": "string", "pattern": assembly.LogicalIDPattern}},
		"metadata":    metadataSchema(),
		"properties":  map[string]any{"type": "object", "description": "The kind's properties; paths are relative to the project folder."},
	}
	checkKeys(projectDropletKeys, dropletProps)
	defs["droplet"] = map[string]any{"type": "object", "required": []string{"type"}, "additionalProperties": false, "properties": dropletProps, "allOf": rules}
	assets := map[string]any{
		"bucketName": map[string]any{"type": "string", "description": "The bucket local artifacts of templates are uploaded to (a name, or ${Stack.output.Name})."},
		"keyPrefix":  map[string]any{"type": "string", "description": "The prefix of their keys."},
	}
	checkKeys(projectAssetsKeys, assets)
	defs["target"] = targetSchema(true)
	top := map[string]any{
		"assets": map[string]any{"type": "object", "required": []string{"bucketName"}, "additionalProperties": false, "properties": assets,
			"description": "Where local artifacts of templates (Lambda code, nested stacks) go, as aws cloudformation package --s3-bucket."},
		"environment": map[string]any{"type": "string", "pattern": specifierPattern, "description": "The default environment of droplets that name none (aws://123456789012/eu-west-1). With targets and no environment, droplets that name none take each target's."},
		"targets":     targetsSchema(),
		"droplets": map[string]any{
			"type": "object", "minProperties": 1, "maxProperties": assembly.MaxDroplets,
			"propertyNames":        map[string]any{"pattern": assembly.LogicalIDPattern},
			"additionalProperties": map[string]any{"$ref": "#/$defs/droplet"},
		},
	}
	checkKeys(projectKeys, top)
	return map[string]any{
		"$schema":     schemaDraft,
		"$id":         "https://github.com/cloud-assembly/assemble/docs/schema/assembly.schema.json",
		"title":       "assemble project file (assembly.yaml)",
		"description": "The project file assemble build reads (generated from the droplet kinds' registry: go test ./packager -update). Editors: put # yaml-language-server: $schema=<this file's URL> on its first line.",
		"type":        "object", "required": []string{"droplets"}, "additionalProperties": false,
		"properties": top,
		"$defs":      defs,
	}
}

// checkKeys panics when the schema's keys are not the code's: the
// generator and the reader must not drift apart.
func checkKeys(keys []string, props map[string]any) {
	if len(keys) != len(props) {
		panic(fmt.Sprintf("schema keys %v, code keys %v", props, keys))
	}
	for _, k := range keys {
		if props[k] == nil {
			panic("schema lacks key " + k)
		}
	}
}

func schemaJSON(t *testing.T, s map[string]any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDocSchemas: docs/schema holds the schemas the tables make (go test
// ./packager -update rewrites them).
func TestDocSchemas(t *testing.T) {
	for name, s := range map[string]map[string]any{"manifest.schema.json": manifestSchema(), "assembly.schema.json": projectSchema()} {
		p := filepath.Join("..", "docs", "schema", name)
		want := schemaJSON(t, s)
		if *update {
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, want) {
			t.Errorf("docs/schema/%s is not what the tables make (go test ./packager -update): %v", name, err)
		}
	}
}

func compileDocSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	s, err := c.Compile(filepath.Join("..", "docs", "schema", name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// projectFiles lists the projects of the fixtures and of the testscript
// cases: every assembly.yaml, as a folder holding it.
func projectFiles(t *testing.T) []string {
	var dirs []string
	filepath.WalkDir(filepath.Join("..", "fixtures"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "assembly.yaml" {
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	for _, glob := range []string{"../cmd/assemble/testdata/script/*.txtar", "testdata/projects/*.txtar"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			a, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !slicesContainsProject(a) {
				continue
			}
			dir := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(f), ".txtar"))
			for _, file := range a.Files {
				p := filepath.Join(dir, filepath.FromSlash(file.Name))
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, file.Data, 0o644)
			}
			for _, file := range a.Files {
				if filepath.Base(file.Name) == "assembly.yaml" {
					dirs = append(dirs, filepath.Join(dir, filepath.Dir(filepath.FromSlash(file.Name))))
				}
			}
		}
	}
	return dirs
}

func slicesContainsProject(a *txtar.Archive) bool {
	for _, f := range a.Files {
		if filepath.Base(f.Name) == "assembly.yaml" {
			return true
		}
	}
	return false
}

// Every project of the fixtures and test cases that builds is valid by
// assembly.schema.json, and the manifest it makes by manifest.schema.json
// (so is every manifest.json of the fixtures): the schemas never refuse
// what assemble accepts. And a project the schema refuses does not build.
func TestDocSchemasAcceptFixtures(t *testing.T) {
	project := compileDocSchema(t, "assembly.schema.json")
	manifest := compileDocSchema(t, "manifest.schema.json")
	built, refused := 0, 0
	for _, dir := range projectFiles(t) {
		b, err := os.ReadFile(filepath.Join(dir, "assembly.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		yamlErr := yaml.Unmarshal(b, &doc)
		schemaErr := yamlErr
		if yamlErr == nil {
			schemaErr = project.Validate(jsonValue(doc))
		}
		plan, err := Load(dir, BuildOptions{})
		switch {
		case err == nil && schemaErr != nil:
			t.Errorf("%s: builds, but assembly.schema.json refuses it: %v", dir, schemaErr)
		case err == nil:
			built++
			var m any
			mb, _ := json.Marshal(plan.Manifest)
			json.Unmarshal(mb, &m)
			if err := manifest.Validate(m); err != nil {
				t.Errorf("%s: manifest.schema.json refuses the manifest it builds: %v\n%s", dir, err, mb)
			}
		case schemaErr != nil:
			refused++
		}
	}
	if built < 5 {
		t.Errorf("only %d projects built: the fixtures were not found", built)
	}
	t.Logf("%d projects built and validated; %d refused by both the schema and the build", built, refused)
	b, err := os.ReadFile(filepath.Join("..", "fixtures", "spec-example", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m any
	json.Unmarshal(b, &m)
	// The spec's own example leaves out properties its tables require
	// (stackName): a reader warns, --strict refuses, and so does the
	// schema, which is the strict side.
	if err := manifest.Validate(m); err == nil || !strings.Contains(err.Error(), "missing property 'stackName'") {
		t.Errorf("fixtures/spec-example/manifest.json: %v, want it refused for its missing stackName as --strict refuses it", err)
	}
}

// jsonValue turns a YAML-decoded value into what encoding/json decodes
// (map[string]any, float64), which the validator reads.
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	json.Unmarshal(b, &out)
	return out
}
