package deploy

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every refusal before a change and every failure wraps
// one; a *DropletError names the droplet.
var (
	// ErrAccount: a droplet's environment names an account other than the
	// caller's (STS GetCallerIdentity).
	ErrAccount = errors.New("deploy: wrong AWS account")
	// ErrMissing: a manifest `missing` entry is not supplied.
	ErrMissing = errors.New("deploy: missing information not supplied")
	// ErrParameter: a --parameter that names no stack droplet, a parameter
	// the droplet already sets, or is malformed.
	ErrParameter = errors.New("deploy: bad parameter")
	// ErrUndeployable: a targeted droplet's type has no deployer.
	ErrUndeployable = errors.New("deploy: no deployer for the droplet's type")
	// ErrEnvironment: a targeted droplet's environment is not aws://.
	ErrEnvironment = errors.New("deploy: unsupported environment")
	// ErrMetadataError: a targeted droplet carries `error` metadata.
	ErrMetadataError = errors.New("deploy: droplet carries an error")
	// ErrNoDocker: a docker-build droplet and no Docker engine answers.
	ErrNoDocker = errors.New("deploy: no Docker engine")
	// ErrStagingBucket: a template over 51,200 bytes and no staging bucket.
	ErrStagingBucket = errors.New("deploy: template too large to send inline")
	// ErrOnly: --only names a droplet the assembly does not hold.
	ErrOnly = errors.New("deploy: no such droplet")
	// ErrUnresolved: a reference to a droplet that is not deployed, or to an
	// attribute it does not have (a stack Output it does not publish).
	ErrUnresolved = errors.New("deploy: reference cannot be resolved")
	// ErrAWS: AWS could not be reached or refused a call.
	ErrAWS = errors.New("deploy: AWS call failed")
	// ErrStackFailed: a stack's create or update failed or rolled back.
	ErrStackFailed = errors.New("deploy: stack failed")
	// ErrUpload: an S3 upload failed.
	ErrUpload = errors.New("deploy: upload failed")
	// ErrPush: an image push failed.
	ErrPush = errors.New("deploy: image push failed")
	// ErrDependency: a droplet was not deployed because one it depends on
	// failed or was not deployed.
	ErrDependency = errors.New("deploy: dependency not deployed")
	// ErrInterrupted: the context was canceled; no new step was started.
	ErrInterrupted = errors.New("deploy: interrupted")
	// ErrDiffers: Status found something absent or different.
	ErrDiffers = errors.New("deploy: deployed state differs from the assembly")
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
