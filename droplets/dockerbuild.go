package droplets

// DockerBuildType is the type specifier of the Docker build-context droplet:
// a folder holding a Dockerfile, built into an image and pushed to a
// repository at deploy time. It is what an AWS CDK Docker image asset is:
// CDK builds images when it publishes them, so a cdk.out holds the build
// context, never a saved image (the spec's DockerImageDroplet).
const DockerBuildType = "npm://@cloud-assembly/docker.DockerBuildDroplet"

func init() {
	Register(&Kind{
		Alias: "docker-build",
		Type:  DockerBuildType,
		Properties: []Property{
			// directory is the build context.
			{Name: "directory", Required: true, Type: "string", Path: PathDirectory},
			// dockerFile names the Dockerfile inside directory (default
			// "Dockerfile").
			{Name: "dockerFile", Type: "string", InDirectory: true},
			{Name: "buildArgs", Type: "map"},
			{Name: "buildTarget", Type: "string"},
			{Name: "buildSecrets", Type: "map"},
			{Name: "buildSsh", Type: "string"},
			{Name: "buildContexts", Type: "map"},
			{Name: "networkMode", Type: "string"},
			// platform is the target platform (linux/arm64).
			{Name: "platform", Type: "string"},
			// outputs, cacheFrom, cacheTo and cacheDisabled are passed to
			// docker build as CDK gives them.
			{Name: "outputs", Type: "list"},
			{Name: "cacheFrom"},
			{Name: "cacheTo"},
			{Name: "cacheDisabled"},
			// repositoryName and imageTag say where the image is pushed.
			{Name: "repositoryName", Required: true, Type: "string"},
			{Name: "imageTag", Required: true, Type: "string"},
			// executables lists the files under directory (relative, "/"
			// separated) that carry the executable bit.
			{Name: "executables", Type: "list", InDirectory: true},
		},
		Attributes: []string{"exactImageId", "imageName"},
	})
}
