package cdk

import "encoding/json"

// The parts of the CDK cloud-assembly schema (aws-cdk-lib's
// @aws-cdk/cloud-assembly-schema) that the mapping reads. Fields it does
// not read are kept in the shipped files, never dropped.

// Artifact types.
const (
	typeStack         = "aws:cloudformation:stack"
	typeAssetManifest = "cdk:asset-manifest"
	typeNested        = "cdk:cloud-assembly"
	typeTree          = "cdk:tree"
	typeFlagReport    = "cdk:feature-flag-report"
	typeNone          = "none"
)

// Metadata entry types that carry messages, and the droplet metadata kind
// each becomes.
var messageKinds = map[string]string{
	"aws:cdk:warning": "warning",
	"aws:cdk:error":   "error",
	"aws:cdk:info":    "info",
}

type cloudManifest struct {
	Version   *string                    `json:"version"`
	Artifacts map[string]json.RawMessage `json:"artifacts"`
	Missing   []missingContext           `json:"missing"`
}

type artifact struct {
	Type                   string                     `json:"type"`
	Environment            string                     `json:"environment"`
	Metadata               map[string][]metadataEntry `json:"metadata"`
	AdditionalMetadataFile string                     `json:"additionalMetadataFile"`
	Dependencies           []string                   `json:"dependencies"`
	Properties             json.RawMessage            `json:"properties"`
	DisplayName            string                     `json:"displayName"`
}

type metadataEntry struct {
	Type string `json:"type"`
	Data any    `json:"data"`
}

type missingContext struct {
	Key      string         `json:"key"`
	Provider string         `json:"provider"`
	Props    map[string]any `json:"props"`
}

type stackProperties struct {
	TemplateFile          string            `json:"templateFile"`
	StackName             string            `json:"stackName"`
	Parameters            map[string]string `json:"parameters"`
	Tags                  map[string]string `json:"tags"`
	TerminationProtection *bool             `json:"terminationProtection"`
	NotificationArns      []string          `json:"notificationArns"`
}

type assetManifestProperties struct {
	File string `json:"file"`
}

type nestedProperties struct {
	DirectoryName string `json:"directoryName"`
	DisplayName   string `json:"displayName"`
}

// assetManifest is an asset manifest (<stack>.assets.json) with its asset
// kinds kept raw, so an unknown kind can be reported.
type assetManifest map[string]json.RawMessage

type fileAsset struct {
	DisplayName string `json:"displayName"`
	Source      struct {
		Path       string   `json:"path"`
		Executable []string `json:"executable"`
		Packaging  string   `json:"packaging"`
	} `json:"source"`
	Destinations map[string]json.RawMessage `json:"destinations"`
}

type fileDestination struct {
	BucketName string `json:"bucketName"`
	ObjectKey  string `json:"objectKey"`
	Region     string `json:"region"`
}

type imageAsset struct {
	DisplayName  string                     `json:"displayName"`
	Source       imageSource                `json:"source"`
	Destinations map[string]json.RawMessage `json:"destinations"`
}

type imageSource struct {
	Directory           string            `json:"directory"`
	Executable          []string          `json:"executable"`
	DockerFile          string            `json:"dockerFile"`
	DockerBuildTarget   string            `json:"dockerBuildTarget"`
	DockerBuildArgs     map[string]string `json:"dockerBuildArgs"`
	DockerBuildContexts map[string]string `json:"dockerBuildContexts"`
	DockerBuildSsh      string            `json:"dockerBuildSsh"`
	DockerBuildSecrets  map[string]string `json:"dockerBuildSecrets"`
	NetworkMode         string            `json:"networkMode"`
	Platform            string            `json:"platform"`
	DockerOutputs       []string          `json:"dockerOutputs"`
	CacheFrom           any               `json:"cacheFrom"`
	CacheTo             any               `json:"cacheTo"`
	CacheDisabled       *bool             `json:"cacheDisabled"`
}

type imageDestination struct {
	RepositoryName string `json:"repositoryName"`
	ImageTag       string `json:"imageTag"`
	Region         string `json:"region"`
}
