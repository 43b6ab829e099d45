package remote

import (
	"errors"
	"strings"

	"github.com/cloud-assembly/assemble/errcode"
)

// Sentinels; every error of this package wraps one of them, or the
// context's error.
var (
	// ErrLocation: the location is not one this package reads (scheme,
	// syntax, or plain HTTP to a host that is not loopback).
	ErrLocation = errors.New("invalid location")
	// ErrNotFound: no object, tag, manifest or blob at the location.
	ErrNotFound = errors.New("not found")
	// ErrChanged: the object changed while it was read: another ETag,
	// version or size than the first response's, or a failed If-Match.
	ErrChanged = errors.New("object changed while being read")
	// ErrBadResponse: a response that does not answer the request: a
	// range with other bounds or length than asked, a server that ignores
	// ranges, an unexpected status.
	ErrBadResponse = errors.New("bad response")
	// ErrDigestMismatch: the bytes read do not have the digest the
	// location or the caller asked for.
	ErrDigestMismatch = errors.New("digest mismatch")
	// ErrRedirect: a redirect to another scheme, refused.
	ErrRedirect = errors.New("redirect refused")
	// ErrTimeout: a request took longer than its deadline, or its body
	// stalled.
	ErrTimeout = errors.New("request timed out")
	// ErrNotAssembly: an OCI manifest that is not a Cloud Assembly
	// artifact (docs/oci.md).
	ErrNotAssembly = errors.New("not a cloud assembly artifact")
	// ErrUnsupported: an operation the location's scheme does not offer
	// (pushing to https://).
	ErrUnsupported = errors.New("not supported")
)

// ErrNoCredentials: S3 was asked with no AWS credentials to be found.
var ErrNoCredentials = errcode.New("remote_no_credentials", "no AWS credentials",
	"S3 credentials come from the AWS default chain: AWS_PROFILE, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, SSO, a web identity or an instance role")

// isNoCredentials reports whether an AWS SDK failure is that no
// credentials were found (the SDK has no type for it, only its words).
func isNoCredentials(err error) bool {
	msg := err.Error()
	for _, s := range []string{"failed to retrieve credentials", "failed to refresh cached credentials", "get credentials", "no valid credential sources", "static credentials are empty"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
