package droplets

// DockerImageType is the type specifier of the Docker image droplet (a
// "docker image save" tarball pushed to ECR).
const DockerImageType = "npm://@aws-cdk/aws-ecr.DockerImageDroplet"

func init() {
	Register(&Kind{
		Alias: "docker-image",
		Type:  DockerImageType,
		Properties: []Property{
			{Name: "savedImage", Required: true, Type: "string", Path: PathFile},
			{Name: "pushTarget", Required: true, Type: "string"},
			{Name: "tagName", Type: "string"},
		},
		Attributes: []string{"exactImageId", "imageName"},
	})
}
