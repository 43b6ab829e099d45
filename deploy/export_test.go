package deploy

// Helpers of the package's tests, for its examples' tests (package
// deploy_test).
var (
	WriteAssemblyForTest = writeAssembly
	SignForTest          = sign
	AWSConfigForTest     = awsConfig
	MakeBucketForTest    = makeBucket
	UniqForTest          = uniq
	StackForTest         = stack
	ManifestForTest      = manifest
	ObjectsForTest       = objects
	StacksNamedForTest   = stacksNamed
)

// EnvForTest is the environment of moto's account.
const EnvForTest = env
