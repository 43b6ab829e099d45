package packager_test

import (
	"fmt"
	"path/filepath"

	"github.com/cloud-assembly/assemble/packager"
)

// Expand a template's local module (Type: LocalModule) into plain
// CloudFormation, as 'assemble package --root fixtures/examples/webapp
// fixtures/examples/webapp/stacks/network.yaml' does.
func ExamplePackageTemplate() {
	root := filepath.Join("..", "fixtures", "examples", "webapp")
	out, err := packager.PackageTemplate(filepath.Join(root, "stacks", "network.yaml"), packager.PackageOptions{Root: root, NoSourceMap: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(out))
	// Output:
	// AWSTemplateFormatVersion: "2010-09-09"
	// Description: Network and storage for the webapp example.
	// Parameters:
	//   CidrBlock:
	//     Type: String
	//     Default: 10.0.0.0/16
	// Resources:
	//   Vpc:
	//     Type: AWS::EC2::VPC
	//     Properties:
	//       CidrBlock: !Ref CidrBlock
	//   SiteBucket:
	//     Type: AWS::S3::Bucket
	//     Properties:
	//       VersioningConfiguration:
	//         Status: Suspended
	//       LoggingConfiguration:
	//         DestinationBucketName: !Ref SiteLogs
	//   SiteLogs:
	//     Type: AWS::S3::Bucket
	// Outputs:
	//   VpcId:
	//     Value: !Ref Vpc
	//   SiteBucket:
	//     Value: !Ref SiteBucket
}
