package assembly_test

import (
	"errors"
	"fmt"

	"github.com/cloud-assembly/assemble/assembly"
)

func ExampleParseString() {
	parts, err := assembly.ParseString(`s3://${Site.bucketName}/\${literal}`)
	if err != nil {
		panic(err)
	}
	for _, p := range parts {
		if p.Ref != nil {
			fmt.Printf("reference to %s's %s\n", p.Ref.Droplet, p.Ref.Attribute)
		} else {
			fmt.Printf("text %q\n", p.Literal)
		}
	}
	// Output:
	// text "s3://"
	// reference to Site's bucketName
	// text "/${literal}"
}

func ExampleManifest_Validate() {
	m, err := assembly.ParseManifest([]byte(`{
  "schema": "cloud-assembly/1.0",
  "droplets": {
    "Network": {"type": "x-custom://network", "environment": "aws://123456789012/eu-west-1", "dependsOn": ["Service"]},
    "Service": {"type": "x-custom://service", "environment": "aws://123456789012/eu-west-1",
                "properties": {"vpc": "${Network.vpcId}"}}
  }
}`))
	if err != nil {
		panic(err)
	}
	_, err = m.Validate(assembly.CheckOptions{})
	fmt.Println(errors.Is(err, assembly.ErrCycle))
	fmt.Println(err)
	// Output:
	// true
	// droplet Network: dependsOn: dependency cycle Network -> Service -> Network [cycle]
}

func ExampleCheck() {
	manifest := []byte(`{
  "schema": "cloud-assembly/1.0",
  "x-vendor": {"build": 7},
  "droplets": {
    "Web": {"type": "npm://@aws-cdk/aws-cloudformation.StackDroplet", "environment": "aws://123456789012/eu-west-1",
            "properties": {"stackName": "web", "template": "stacks/web.yml"}}
  }
}`)
	files := assembly.NewFileSet()
	files.Add(assembly.ManifestName, int64(len(manifest)))
	rep, err := assembly.Check(manifest, files, assembly.CheckOptions{})
	for _, f := range rep.Findings {
		fmt.Println(f.Severity, f)
	}
	fmt.Println(errors.Is(err, assembly.ErrMissingFile))
	// Output:
	// warning x-vendor: unknown key: the spec defines no such field [unknown-key]
	// error droplet Web: properties.template: names "stacks/web.yml", which is not a file in the archive [missing-file]
	// true
}
