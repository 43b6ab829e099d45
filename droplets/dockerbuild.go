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
		Doc:   "A Docker build context, built into an image and pushed to a repository at deploy time (what an AWS CDK Docker image asset is).",
		Type:  DockerBuildType,
		Properties: []Property{
			{Name: "directory", Required: true, Type: "string", Path: PathDirectory, Doc: "The build context."},
			{Name: "dockerFile", Type: "string", InDirectory: true, Doc: "The Dockerfile inside the context (default `Dockerfile`)."},
			{Name: "buildArgs", Type: "map", Doc: "Build arguments (`docker build --build-arg`)."},
			{Name: "buildTarget", Type: "string", Doc: "The stage to build (`docker build --target`)."},
			{Name: "buildSecrets", Type: "map", Doc: "Build secrets (`docker build --secret`)."},
			{Name: "buildSsh", Type: "string", Doc: "SSH agent socket or keys for the build (`docker build --ssh`)."},
			{Name: "buildContexts", Type: "map", Doc: "Additional build contexts (`docker build --build-context`)."},
			{Name: "networkMode", Type: "string", Doc: "The network mode of RUN instructions (`docker build --network`)."},
			{Name: "platform", Type: "string", Doc: "The target platform (`linux/arm64`)."},
			{Name: "outputs", Type: "list", Doc: "Build outputs (`docker build --output`), as CDK gives them."},
			{Name: "cacheFrom", Doc: "Cache sources (`docker build --cache-from`), as CDK gives them."},
			{Name: "cacheTo", Doc: "Cache destination (`docker build --cache-to`), as CDK gives it."},
			{Name: "cacheDisabled", Doc: "Build without the cache (`docker build --no-cache`)."},
			{Name: "repositoryName", Required: true, Type: "string", Doc: "The repository the image is pushed to."},
			{Name: "imageTag", Required: true, Type: "string", Doc: "The tag it is pushed with."},
			{Name: "executables", Type: "list", InDirectory: true, Doc: "The files under the context (relative, `/`-separated) that carry the executable bit."},
		},
		Attributes: []string{"exactImageId", "imageName"},
		AttributeDocs: map[string]string{
			"exactImageId": "The pushed image by digest.",
			"imageName":    "The pushed image by tag.",
		},
	})
}
