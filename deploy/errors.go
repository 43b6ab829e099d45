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
	ErrAccount = errors.New("wrong AWS account")
	// ErrMissing: a manifest `missing` entry is not supplied.
	ErrMissing = errors.New("missing information not supplied")
	// ErrParameter: a --parameter that names no stack droplet, a parameter
	// the droplet already sets, or is malformed.
	ErrParameter = errors.New("bad parameter")
	// ErrUndeployable: a targeted droplet's type has no deployer.
	ErrUndeployable = errors.New("no deployer for the droplet's type")
	// ErrEnvironment: a targeted droplet's environment is not aws://.
	ErrEnvironment = errors.New("unsupported environment")
	// ErrMetadataError: a targeted droplet carries `error` metadata.
	ErrMetadataError = errors.New("droplet carries an error")
	// ErrNoDocker: a docker-build droplet and no Docker engine answers.
	ErrNoDocker = errors.New("no Docker engine")
	// ErrStagingBucket: a template over 51,200 bytes and no staging bucket.
	ErrStagingBucket = errors.New("template too large to send inline")
	// ErrOnly: --only names a droplet the assembly does not hold.
	ErrOnly = errors.New("no such droplet")
	// ErrUnresolved: a reference to a droplet that is not deployed, or to an
	// attribute it does not have (a stack Output it does not publish).
	ErrUnresolved = errors.New("reference cannot be resolved")
	// ErrAWS: AWS could not be reached or refused a call.
	ErrAWS = errors.New("AWS call failed")
	// ErrStackFailed: a stack's create or update failed or rolled back.
	ErrStackFailed = errors.New("stack failed")
	// ErrUpload: an S3 upload failed.
	ErrUpload = errors.New("upload failed")
	// ErrPush: an image push failed.
	ErrPush = errors.New("image push failed")
	// ErrDependency: a droplet was not deployed because one it depends on
	// failed or was not deployed.
	ErrDependency = errors.New("dependency not deployed")
	// ErrInterrupted: the context was canceled; no new step was started.
	ErrInterrupted = errors.New("interrupted")
	// ErrDiffers: Status found something absent or different.
	ErrDiffers = errors.New("deployed state differs from the assembly")
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
