package droplets

// DirectoryType is the type specifier of the directory droplet (a folder
// uploaded to S3).
const DirectoryType = "npm://@aws-cdk/assets.DirectoryDroplet"

func init() {
	Register(&Kind{
		Alias: "directory",
		Doc:   "A folder of files uploaded to an S3 bucket, file by file.",
		Type:  DirectoryType,
		Properties: []Property{
			{Name: "directory", Required: true, Type: "string", Path: PathDirectory, Doc: "The folder to upload; every file under it is in the assembly."},
			{Name: "bucketName", Required: true, Type: "string", Doc: "The bucket the files are uploaded to."},
			{Name: "keyPrefix", Type: "string", Doc: "The prefix of their keys (`www/`); the files' paths below the folder follow it."},
		},
		Attributes: []string{"bucketName", "keyPrefix"},
		AttributeDocs: map[string]string{
			"bucketName": "The bucket the files were uploaded to.",
			"keyPrefix":  "The prefix of their keys.",
		},
	})
}
