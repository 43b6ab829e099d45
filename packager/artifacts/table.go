package artifacts

// Form is how a packaged template names an uploaded artifact.
type Form int

const (
	// S3URI is the string s3://bucket/key.
	S3URI Form = iota + 1
	// BucketKey is a mapping of a bucket property and a key property,
	// such as Lambda's {S3Bucket, S3Key}.
	BucketKey
	// HTTPSURL is a path-style https://s3.REGION.URLSUFFIX/bucket/key URL
	// (a nested stack's TemplateURL).
	HTTPSURL
)

// A Property is one resource property (or template metadata entry) whose
// local path is packaged, as aws cloudformation package packages it.
type Property struct {
	// Type is the resource type, or for Metadata the metadata key.
	Type string
	// Path is the property's path under Properties (or under the metadata
	// entry): ["Code"], ["Command", "ScriptLocation"].
	Path []string
	Form Form
	// Bucket and Key name the two keys of a BucketKey form, Version its
	// object version key ("" when the property has none): an s3:// string
	// written there is turned into this mapping, as aws-cli does.
	Bucket, Key, Version string
	// ForceZip zips a single file that is not already a zip (Lambda code):
	// the zip holds the file under its base name. A folder is zipped
	// whatever ForceZip says.
	ForceZip bool
	// Template marks a nested template: packaged recursively, its
	// TemplateURL (or Location) an HTTPSURL.
	Template bool
	// Metadata marks an entry of the template's Metadata section
	// (AWS::ServerlessRepo::Application) rather than a resource property.
	Metadata bool
}

// Properties lists the properties packaged, in aws-cli's order
// (awscli/customizations/cloudformation/artifact_exporter.py, aws-cli 1.45:
// RESOURCES_EXPORT_LIST and METADATA_EXPORT_LIST). The Location of an
// AWS::Include transform (Fn::Transform anywhere in the template) is
// packaged too, as an S3URI of one file.
func Properties() []Property {
	return []Property{
		{Type: "AWS::Serverless::Function", Path: []string{"CodeUri"}, Form: S3URI, ForceZip: true},
		{Type: "AWS::Serverless::Api", Path: []string{"DefinitionUri"}, Form: S3URI},
		{Type: "AWS::AppSync::GraphQLSchema", Path: []string{"DefinitionS3Location"}, Form: S3URI},
		{Type: "AWS::AppSync::Resolver", Path: []string{"RequestMappingTemplateS3Location"}, Form: S3URI},
		{Type: "AWS::AppSync::Resolver", Path: []string{"ResponseMappingTemplateS3Location"}, Form: S3URI},
		{Type: "AWS::AppSync::FunctionConfiguration", Path: []string{"RequestMappingTemplateS3Location"}, Form: S3URI},
		{Type: "AWS::AppSync::FunctionConfiguration", Path: []string{"ResponseMappingTemplateS3Location"}, Form: S3URI},
		{Type: "AWS::ApiGateway::RestApi", Path: []string{"BodyS3Location"}, Form: BucketKey, Bucket: "Bucket", Key: "Key", Version: "Version"},
		{Type: "AWS::Lambda::Function", Path: []string{"Code"}, Form: BucketKey, Bucket: "S3Bucket", Key: "S3Key", Version: "S3ObjectVersion", ForceZip: true},
		{Type: "AWS::ElasticBeanstalk::ApplicationVersion", Path: []string{"SourceBundle"}, Form: BucketKey, Bucket: "S3Bucket", Key: "S3Key"},
		{Type: "AWS::CloudFormation::Stack", Path: []string{"TemplateURL"}, Form: HTTPSURL, Template: true},
		{Type: "AWS::Serverless::Application", Path: []string{"Location"}, Form: HTTPSURL, Template: true},
		{Type: "AWS::Serverless::LayerVersion", Path: []string{"ContentUri"}, Form: S3URI, ForceZip: true},
		{Type: "AWS::Lambda::LayerVersion", Path: []string{"Content"}, Form: BucketKey, Bucket: "S3Bucket", Key: "S3Key", Version: "S3ObjectVersion", ForceZip: true},
		{Type: "AWS::Glue::Job", Path: []string{"Command", "ScriptLocation"}, Form: S3URI},
		{Type: "AWS::StepFunctions::StateMachine", Path: []string{"DefinitionS3Location"}, Form: BucketKey, Bucket: "Bucket", Key: "Key", Version: "Version"},
		{Type: "AWS::Serverless::StateMachine", Path: []string{"DefinitionUri"}, Form: BucketKey, Bucket: "Bucket", Key: "Key", Version: "Version"},
		{Type: "AWS::CodeCommit::Repository", Path: []string{"Code", "S3"}, Form: BucketKey, Bucket: "Bucket", Key: "Key", Version: "ObjectVersion", ForceZip: true},
		{Type: "AWS::ServerlessRepo::Application", Path: []string{"ReadmeUrl"}, Form: S3URI, Metadata: true},
		{Type: "AWS::ServerlessRepo::Application", Path: []string{"LicenseUrl"}, Form: S3URI, Metadata: true},
	}
}
