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
		},
		Attributes: []string{"bucketName", "keyPrefix"},
	})
}
