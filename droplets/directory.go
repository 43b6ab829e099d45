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
			{Name: "objectKey", Type: "string", Doc: "When set, the folder is uploaded as one zip file at this key (the AWS CDK's zip packaging) instead of file by file under keyPrefix."},
			{Name: "executables", Type: "list", InDirectory: true, Doc: "The files under the folder (relative, `/`-separated) that carry the executable bit."},
		},
		Attributes: []string{"bucketName", "keyPrefix", "objectKey"},
		AttributeDocs: map[string]string{
			"bucketName": "The bucket the files were uploaded to.",
			"keyPrefix":  "The prefix of their keys.",
			"objectKey":  "The key of the zip file, when the folder is uploaded as one.",
		},
	})
}
