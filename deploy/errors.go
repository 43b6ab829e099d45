package deploy

import (
	"fmt"

	"github.com/cloud-assembly/assemble/errcode"
)

// Sentinel errors. Every refusal before a change and every failure wraps
// one; a *DropletError names the droplet.
var (
	// ErrAccount: a droplet's environment names an account other than the
	// caller's (STS GetCallerIdentity).
	ErrAccount = errcode.New("wrong_account", "wrong AWS account",
		"use credentials of the droplet's account, or name a role that reaches it: the target's deployRole, Options.RoleARN, or a CDK-bootstrapped account (Options.Qualifier)")
	// ErrRoleAccount: the credentials a role gave (or the caller's own)
	// belong to another account than the droplet's: STS
	// GetCallerIdentity, asked after the role is assumed, says so. AWS
	// refuses a role whose trust policy does not admit the caller; this is
	// the check of the other half, that the role is the pair's at all.
	ErrRoleAccount = errcode.Sub(ErrAccount, "role_wrong_account", "credentials of another account",
		"name a role of the pair's own account: write the account in the target's deployRole (or the role ARN option) as ${AWS::AccountId}, which stands for each pair's")
	// ErrMissing: a manifest `missing` entry is not supplied.
	ErrMissing = errcode.New("missing_information", "missing information not supplied",
		"supply each value the assembly lists under missing with Options.Parameters ID.NAME=VALUE")
	// ErrParameter: a --parameter that names no stack droplet, no
	// parameter its template declares, one the signer did not leave open
	// (missing, or the policy's deployer-parameters), or is malformed.
	ErrParameter = errcode.New("bad_parameter", "bad parameter",
		"write Options.Parameters as DROPLET.NAME=VALUE, naming a parameter the template declares and the assembly lists under missing (or the policy file names under deployer-parameters)")
	// ErrOption: an Options field holds a value Deploy does not take (a
	// Method other than change-set or direct, a negative MaxFailures,
	// NoExecute without a change set); the error is an
	// *errcode.FieldError naming the field.
	ErrOption = errcode.New("deploy_option", "invalid deploy option",
		"stacks deploy by change-set or direct, no-execute needs change-set, and the failures allowed are 0 or more")
	// ErrUndeployable: a targeted droplet's type has no deployer.
	ErrUndeployable = errcode.New("undeployable", "no deployer for the droplet's type",
		"this tool has no deployer for the droplet's type: deploy it another way, or leave it out with Options.Only")
	// ErrEnvironment: a targeted droplet's environment is not aws://.
	ErrEnvironment = errcode.New("unsupported_environment", "unsupported environment",
		"deploy droplets whose environment is aws://ACCOUNT/REGION")
	// ErrMetadataError: a targeted droplet carries `error` metadata.
	ErrMetadataError = errcode.New("error_metadata", "droplet carries an error",
		"fix what the error says and build again, or deploy anyway with Options.Force")
	// ErrNoDocker: a docker-build droplet and no Docker engine answers.
	ErrNoDocker = errcode.New("no_docker", "no Docker engine",
		"start a Docker engine (or set DOCKER_HOST) to build and push images, or leave the image droplets out with Options.Only")
	// ErrStagingBucket: a template over 51,200 bytes and no staging bucket.
	ErrStagingBucket = errcode.New("no_staging_bucket", "template too large to send inline",
		"give Options.StagingBucket BUCKET (an existing bucket in the stack's region; or staging-bucket in the policy file) for templates over 51,200 bytes")
	// ErrOnly: --only names a droplet the assembly does not hold.
	ErrOnly = errcode.New("no_such_droplet", "no such droplet",
		"name droplets the assembly holds ('assemble inspect' lists them)")
	// ErrUnresolved: a reference to a droplet that is not deployed, or to an
	// attribute it does not have (a stack Output it does not publish).
	ErrUnresolved = errcode.New("unresolved", "reference cannot be resolved",
		"the reference names an attribute no deployed droplet gave: deploy the droplet it names first")
	// ErrAWS: AWS could not be reached or refused a call.
	ErrAWS = errcode.New("aws_failed", "AWS call failed",
		"check the credentials, the region and the network (AWS_PROFILE, AWS_REGION), then try again")
	// ErrStackFailed: a stack's create or update failed or rolled back.
	ErrStackFailed = errcode.New("stack_failed", "stack failed",
		"see the stack's events in CloudFormation for the cause, fix it, and deploy again")
	// ErrUpload: an S3 upload failed.
	ErrUpload = errcode.New("upload_failed", "upload failed",
		"check the bucket, the credentials and the network, then deploy again")
	// ErrPush: an image push failed.
	ErrPush = errcode.New("push_failed", "image push failed",
		"check the repository, the credentials and the network, then deploy again")
	// ErrDependency: a droplet was not deployed because one it depends on
	// failed or was not deployed.
	ErrDependency = errcode.New("dependency_failed", "dependency not deployed",
		"fix the cause, then deploy again: what was deployed is skipped")
	// ErrInterrupted: the context was canceled; no new step was started.
	ErrInterrupted = errcode.New("interrupted", "interrupted",
		"")
	// ErrDiffers: Status found something absent or different.
	ErrDiffers = errcode.New("differs", "deployed state differs from the assembly",
		"what runs is not what was signed: deploy it again with 'assemble deploy', or find who changed it")
)

// A DropletError is a problem with one droplet.
type DropletError struct {
	Droplet string
	Err     error
}

func (e *DropletError) Error() string { return fmt.Sprintf("droplet %s: %v", e.Droplet, e.Err) }
func (e *DropletError) Unwrap() error { return e.Err }

func dropletErr(id string, sentinel error, format string, args ...any) error {
	return &DropletError{Droplet: id, Err: fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)}
}
