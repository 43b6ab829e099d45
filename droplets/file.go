package droplets

// FileType is the type specifier of the file droplet (one S3 object).
const FileType = "npm://@aws-cdk/assets.FileDroplet"

func init() {
	Register(&Kind{
		Alias: "file",
		Type:  FileType,
		Properties: []Property{
			{Name: "file", Required: true, Type: "string", Path: PathFile},
			{Name: "bucketName", Required: true, Type: "string"},
			{Name: "objectKey", Required: true, Type: "string"},
		},
		Attributes: []string{"bucketName", "objectKey"},
	})
}
