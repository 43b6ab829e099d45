package droplets

// DockerImageType is the type specifier of the Docker image droplet (a
// "docker image save" tarball pushed to ECR).
const DockerImageType = "npm://@aws-cdk/aws-ecr.DockerImageDroplet"

func init() {
	Register(&Kind{
		Alias: "docker-image",
		Doc:   "A Docker image pushed to a registry (ECR).",
		Type:  DockerImageType,
		Properties: []Property{
			{Name: "savedImage", Required: true, Type: "string", Path: PathFile, Doc: "The tar archive `docker image save` wrote."},
			{Name: "pushTarget", Required: true, Type: "string", Doc: "Where the image is pushed (`<account>.dkr.ecr.<region>.amazonaws.com/<name>`); `\\${AWS::AccountId}` and `\\${AWS::Region}` stand for the droplet's account and region."},
			{Name: "tagName", Type: "string", Doc: "The tag it is pushed with (default `latest`)."},
		},
		Attributes: []string{"exactImageId", "imageName"},
		AttributeDocs: map[string]string{
			"exactImageId": "The pushed image by digest (`<pushTarget>@sha256:...`).",
			"imageName":    "The pushed image by tag (`<pushTarget>:<tagName>`).",
		},
	})
}
