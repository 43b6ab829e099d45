package artifacts

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/cloud-assembly/assemble/packager/cfn"
)

// FuzzExport packages arbitrary templates against the files of
// diffProject. A failure wraps one of the package's sentinels (or, from a
// nested template, one of cfn's); a success is a fixed point: packaging the
// packaged template again finds nothing local.
func FuzzExport(f *testing.F) {
	f.Add(diffProject["template.yaml"])
	f.Add(diffProject["child/child.yaml"])
	f.Add("Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: ../x\n")
	f.Add("Resources:\n  S:\n    Type: AWS::CloudFormation::Stack\n    Properties:\n      TemplateURL: template.yaml\n")
	f.Add("Resources:\n  A:\n    Fn::Transform: {Name: AWS::Include, Parameters: {Location: fn}}\n")
	f.Add("Resources:\n  Fn::ForEach::X:\n    - Id\n    - [a]\n    - F${Id}:\n        Type: AWS::Serverless::Function\n        Properties: {CodeUri: fn}\n")
	f.Add("Globals:\n  Function:\n    CodeUri: fn\nResources:\n  F:\n    Type: AWS::Serverless::Function\n")
	f.Add("Resources:\n  A:\n    Fn::Transform:\n      - {Name: AWS::Include, Parameters: {Location: api.yaml}}\n      - {Name: M}\n")
	f.Add("Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: s3://b/k.zip?versionId=v\n")
	f.Add("Resources:\n  A:\n    Type: AWS::Serverless::Application\n    Properties:\n      Location: child/child.yaml\n")
	dir := f.TempDir()
	files := map[string]string{}
	for k, v := range diffProject {
		if k != "template.yaml" {
			files[k] = v
		}
	}
	write(f, dir, files)
	file := filepath.Join(dir, "template.yaml")
	sentinels := []error{ErrArtifact, ErrOutsideProject, cfn.ErrNoArtifacts, ErrCycle, ErrTooLarge, ErrChanged,
		cfn.ErrSyntax, cfn.ErrInvalid, cfn.ErrMissingParameter, cfn.ErrCycle, cfn.ErrNameClash, cfn.ErrOutsideRoot, cfn.ErrTooLarge, cfn.ErrDangling}
	f.Fuzz(func(t *testing.T, tmpl string) {
		tm, err := cfn.Parse(file, []byte(tmpl))
		if err != nil {
			return
		}
		for _, param := range []bool{false, true} {
			s, err := New(Options{Root: dir, Bucket: "bkt", Parameter: param})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			err = s.Export(tm, file)
			if err != nil {
				known := false
				for _, e := range sentinels {
					known = known || errors.Is(err, e)
				}
				if !known {
					t.Fatalf("error wraps no sentinel: %v", err)
				}
				return
			}
			again, err := New(Options{Root: dir, Bucket: "bkt", Parameter: param})
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if err := again.Export(tm, file); err != nil {
				t.Fatalf("packaging the packaged template: %v", err)
			}
			if n := len(again.Assets()); n != 0 {
				t.Fatalf("packaging the packaged template found %d artifacts", n)
			}
		}
	})
}
