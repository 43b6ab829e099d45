package droplets

// DirectoryType is the type specifier of the directory droplet (a folder
// uploaded to S3).
const DirectoryType = "npm://@aws-cdk/assets.DirectoryDroplet"

func init() {
	Register(&Kind{
		Alias: "directory",
		Type:  DirectoryType,
		Properties: []Property{
			{Name: "directory", Required: true, Type: "string", Path: PathDirectory},
			{Name: "bucketName", Required: true, Type: "string"},
			{Name: "keyPrefix", Type: "string"},
			// objectKey, when set, uploads the folder as one zip file at
			// that key (the AWS CDK's "zip" packaging) instead of file by
			// file under keyPrefix.
			{Name: "objectKey", Type: "string"},
			// executables lists the files under directory (relative, "/"
			// separated) that carry the executable bit.
			{Name: "executables", Type: "list", InDirectory: true},
		},
		Attributes: []string{"bucketName", "keyPrefix", "objectKey"},
	})
}
