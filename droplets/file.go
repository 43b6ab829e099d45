package droplets

// FileType is the type specifier of the file droplet (one S3 object).
const FileType = "npm://@aws-cdk/assets.FileDroplet"

func init() {
	Register(&Kind{
		Alias: "file",
		Doc:   "A file uploaded to an S3 bucket.",
		Type:  FileType,
		Properties: []Property{
			{Name: "file", Required: true, Type: "string", Path: PathFile, Doc: "The file to upload."},
			{Name: "bucketName", Required: true, Type: "string", Doc: "The bucket it is uploaded to."},
			{Name: "objectKey", Required: true, Type: "string", Doc: "The key of the object in the bucket."},
		},
		Attributes: []string{"bucketName", "objectKey"},
		AttributeDocs: map[string]string{
			"bucketName": "The bucket the file was uploaded to.",
			"objectKey":  "The key it was uploaded at.",
		},
	})
}
