// Package deploy is a Cloud Runtime: it deploys a verified Cloud Assembly's
// droplets to AWS, in dependency order, from the verified bytes only, and
// tells whether what is deployed matches the assembly (Status).
//
// Run deploys what trust.Open verified (a *trust.Assembly) under its
// policy file's deploy section, as 'assemble deploy' does. A Source is
// made only from a verification's outcome: FromAssembly, FromVerified (a
// *signing.Verified), or FromTrust (trust.Verify's result, which may be an
// unsigned assembly its caller allowed and trust.Verify checked); nothing
// in it reads a file on disk. Deploy then runs every check before anything that
// changes the cloud is called: the account of each targeted droplet's
// environment (STS GetCallerIdentity; the AWS CDK's unknown-account and
// unknown-region mean the caller's own), every manifest `missing` entry
// supplied, no droplet carrying `error` metadata (unless Force), and a
// deployer for every targeted droplet's type. Only then are the droplets
// deployed, each when its dependencies (dependsOn and ${Id.attr}
// references) are, up to Options.Concurrency at a time.
//
// One deployer per droplet kind sits behind the interface dropletKind
// (check, plan, deploy, status, diff, destroy, ...), each registered
// beside its code in one table (registerKind), so a kind is one file:
// stacks (CloudFormation change sets, or CreateStack/UpdateStack), files
// and directories (S3 objects, skipped when the object already holds the
// same bytes), saved Docker images (pushed with go-containerregistry).
// Docker build contexts (docker-build) are built by the local engine from
// the verified files and pushed to ECR; with no engine they are refused.
// Blueprint documents and unknown types have no deployer and are refused
// unless Options.Only leaves them out.
//
// # Review before change
//
// Diff says what a deploy would change, reading only (a change set only
// with DiffOptions.ChangeSet, deleted after by its ID): each stack's
// property-level diff and security changes (package deploy/review, the
// broadening rule), objects by signed SHA-256, images by digest. Deploy
// computes the same diff after its checks and before its first write
// when Options.RequireApproval asks (the default: broadening) and stops
// with ErrApprovalRequired unless Options.Approve approves it; after an
// approval the caller's account is checked again (ErrAccountChanged).
//
// AWS is configured the standard way (config.LoadDefaultConfig: profiles,
// SSO, the environment, AWS_ENDPOINT_URL), retried by the SDK's retryer.
package deploy
