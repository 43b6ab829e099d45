package registry

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRules checks each fragment rule: which error, at which line:col.
func TestRules(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"no Resources", "Parameters:\n  P:\n    Type: String\n", "x.yaml: a module template fragment must have a Resources section"},
		{"Resources not a mapping", "Resources: []\n", "x.yaml:1:12: the Resources section must be a mapping"},
		{"Fn::ImportValue", "Resources:\n  B:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName:\n        Fn::ImportValue: Shared\n", "x.yaml:6:9: template fragment can't contain any Fn::ImportValue"},
		{"!ImportValue", "Resources:\n  B:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName: !ImportValue Shared\n", "x.yaml:5:19: template fragment can't contain any Fn::ImportValue"},
		{"nested stack", "Resources:\n  S:\n    Type: AWS::CloudFormation::Stack\n", "x.yaml:3:11: template fragment can't contain nested stack (resource 'S')"},
		{"macro", "Resources:\n  M:\n    Type: AWS::CloudFormation::Macro\n", "x.yaml:3:11: template fragment can't contain any macro (resource 'M')"},
		{"AWS::Include", "Resources:\n  Fn::Transform:\n    Name: AWS::Include\n", "x.yaml:2:3: template fragment can't use AWS::Include transform"},
		{"other resource-level transform", "Resources:\n  Fn::Transform:\n    Name: AWS::Other\n", "x.yaml:2:3: resource 'Fn::Transform' is invalid"},
		{"no Type nor Name", "Resources:\n  B:\n    Properties: {}\n", "x.yaml:2:3: resource 'B' has neither Type nor Name"},
		{"Transform section", "Transform: AWS::Serverless-2016-10-31\nResources:\n  B:\n    Type: AWS::S3::Bucket\n", "x.yaml:1:1: template fragment can't contain transform section"},
		{"top-level Fn::Transform", "Fn::Transform:\n  Name: X\nResources:\n  B:\n    Type: AWS::S3::Bucket\n", "x.yaml:1:1: template fragment can't contain any transform (Fn::Transform)"},
		{"nested Fn::Transform", "Resources:\n  B:\n    Type: AWS::S3::Bucket\n    Properties:\n      Fn::Transform:\n        Name: X\n", "x.yaml:5:7: template fragment can't contain any transform (Fn::Transform)"},
		{"Export", "Resources:\n  B:\n    Type: AWS::S3::Bucket\nOutputs:\n  O:\n    Value: !Ref B\n    Export:\n      Name: x\n", "x.yaml:7:5: template fragment cannot contain any Export; found an Export statement in Output: O"},
		{"parameter without Type", "Parameters:\n  P:\n    Description: d\nResources:\n  B:\n    Type: AWS::S3::Bucket\n", "x.yaml:2:3: parameter 'P' must have a Type"},
		{"Parameters not a mapping", "Parameters: [a]\nResources:\n  B:\n    Type: AWS::S3::Bucket\n", "x.yaml:1:13: the Parameters section must be a mapping"},
		{"YAML syntax", "Resources:\n  B: [\n", "x.yaml:3:1: invalid YAML: did not find expected node content"},
		{"JSON syntax", "{\n  \"Resources\": {,\n}\n", "x.yaml:2:17: invalid JSON"},
		{"not a mapping", "- a\n- b\n", "x.yaml:1:1: the fragment must be a mapping"},
		{"empty", "", "x.yaml: the fragment is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fr, err := ParseFragment("x.yaml", []byte(tt.src))
			if err == nil {
				err = fr.Validate(DefaultLimits())
			}
			if !errors.Is(err, ErrInvalidFragment) {
				t.Fatalf("got %v, want ErrInvalidFragment", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %q, want %q", err, tt.want)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	src := "Resources:\n  A:\n    Type: T::A::B\n  B:\n    Type: T::A::B\nOutputs:\n  O1: {Value: 1}\n  O2: {Value: 2}\nMappings:\n  M1: {K1: {a: 1}, K2: {a: 2}}\n  M2: {K: {a: 1}}\n"
	fr, err := ParseFragment("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := fr.Validate(DefaultLimits()); err != nil {
		t.Fatalf("default limits: %v", err)
	}
	l := Limits{Resources: 1, Outputs: 1, Mappings: 1, MappingAttributes: 1, FileSize: 10}
	err = fr.Validate(l)
	for _, want := range []string{
		"has 2 resources but must not exceed the limit of 1 resources",
		"has 2 outputs but must not exceed the limit of 1 outputs",
		"has 2 mappings but must not exceed the limit of 1 mappings",
		"the mapping M1 has 2 attributes but must not exceed the limit of 1 mapping attributes",
		"exceeds the CloudFormation template size limit of 10 bytes",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
	}
	// ReadFragment refuses an oversized file before parsing it.
	p := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFragment(p, l); !errors.Is(err, ErrInvalidFragment) || !strings.Contains(err.Error(), "size limit") {
		t.Errorf("ReadFragment: %v", err)
	}
}

func TestTypeName(t *testing.T) {
	for _, ok := range []string{"AWS::ORG::MYTYPE::MODULE", "Ab::Cd::Ef::MODULE"} {
		if err := CheckTypeName(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"A::B::C::MODULE", "Org::Svc::Name", "Org::Svc::Name::Module", "Org::Svc::Na-me::MODULE"} {
		if err := CheckTypeName(bad); !errors.Is(err, ErrTypeName) {
			t.Errorf("%s: got %v, want ErrTypeName", bad, err)
		}
	}
	fr, err := ParseFragment("x.yaml", []byte("Resources:\n  B:\n    Type: AWS::S3::Bucket\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fr.Schema("Org::Svc::Name", DefaultLimits()); !errors.Is(err, ErrTypeName) {
		t.Errorf("Schema with a bad type name: %v", err)
	}
}

// TestSchemaEncoding: key order, escaping and short-form intrinsics as
// Python's json.dumps(indent=4) writes them.
func TestSchemaEncoding(t *testing.T) {
	src := "Parameters:\n  Name:\n    Type: String\n    Description: \"caf\u00e9 \\\"q\\\" \U0001F600\"\n  Plain:\n    Type: Number\n    Description:\n  Sub:\n    Type: String\n    Description: !Sub '${AWS::Region}'\nResources:\n  Z:\n    Type: AWS::SNS::Topic\n  A:\n    Type: AWS::S3::Bucket\n"
	fr, err := ParseFragment("x.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got, err := fr.Schema("Org::Svc::Name::MODULE", DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	want := `{
    "typeName": "Org::Svc::Name::MODULE",
    "description": "Schema for Module Fragment of type Org::Svc::Name::MODULE",
    "properties": {
        "Parameters": {
            "type": "object",
            "properties": {
                "Name": {
                    "type": "object",
                    "properties": {
                        "Type": {
                            "type": "string"
                        },
                        "Description": {
                            "type": "string"
                        }
                    },
                    "required": [
                        "Type",
                        "Description"
                    ],
                    "description": "caf\u00e9 \"q\" \ud83d\ude00"
                },
                "Plain": {
                    "type": "object",
                    "properties": {
                        "Type": {
                            "type": "string"
                        }
                    },
                    "required": [
                        "Type"
                    ]
                },
                "Sub": {
                    "type": "object",
                    "properties": {
                        "Type": {
                            "type": "string"
                        },
                        "Description": {
                            "type": "string"
                        }
                    },
                    "required": [
                        "Type",
                        "Description"
                    ],
                    "description": {
                        "Fn::Sub": "${AWS::Region}"
                    }
                }
            }
        },
        "Resources": {
            "properties": {
                "Z": {
                    "type": "object",
                    "properties": {
                        "Type": {
                            "type": "string",
                            "const": "AWS::SNS::Topic"
                        },
                        "Properties": {
                            "type": "object"
                        }
                    }
                },
                "A": {
                    "type": "object",
                    "properties": {
                        "Type": {
                            "type": "string",
                            "const": "AWS::S3::Bucket"
                        },
                        "Properties": {
                            "type": "object"
                        }
                    }
                }
            },
            "type": "object",
            "additionalProperties": false
        }
    },
    "additionalProperties": true
}
`
	if string(got) != want {
		t.Errorf("got:\n%s", got)
	}
}

func TestPyFloat(t *testing.T) {
	for in, want := range map[float64]string{1: "1.0", 1.5: "1.5", 1e6: "1000000.0", 1e16: "1e+16", 1e-5: "1e-05", 0.0001: "0.0001"} {
		if got := pyFloat(in); got != want {
			t.Errorf("pyFloat(%v) = %s, want %s", in, got, want)
		}
	}
}

// TestAliasBomb: aliases that expand a small fragment enormously are
// refused, not expanded.
func TestAliasBomb(t *testing.T) {
	src := "x0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
	for i := 1; i <= 8; i++ {
		src += fmt.Sprintf("x%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	src += "Parameters:\n  P:\n    Type: String\n    Description: *a8\nResources:\n  B:\n    Type: AWS::S3::Bucket\n"
	fr, err := ParseFragment("bomb.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	_, err = fr.Schema("Org::Svc::Name::MODULE", DefaultLimits())
	if !errors.Is(err, ErrInvalidFragment) || !strings.Contains(err.Error(), "expands to more than") {
		t.Fatalf("got %v", err)
	}
}
