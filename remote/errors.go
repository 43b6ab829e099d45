package remote

import (
	"strings"

	"github.com/cloud-assembly/assemble/errcode"
)

// Sentinels; every error of this package wraps one of them, or the
// context's error.
var (
	// ErrLocation: the location is not one this package reads (scheme,
	// syntax, or plain HTTP to a host that is not loopback).
	ErrLocation = errcode.New("bad_location", "invalid location",
		"locations look like oci://REGISTRY/REPOSITORY:TAG (or @sha256:DIGEST), s3://BUCKET/KEY[?versionId=V], https://HOST/PATH; a file whose name starts so is ./NAME")
	// ErrAccessDenied: the server refused the credentials, or asked for
	// some and none were given (HTTP 401 or 403, S3's AccessDenied, a
	// registry's UNAUTHORIZED or DENIED).
	ErrAccessDenied = errcode.New("access_denied", "access denied",
		"registry credentials come from the Docker configuration ('docker login', credential helpers), S3's from the AWS default chain (AWS_PROFILE, AWS_ACCESS_KEY_ID, roles)")
	// ErrNotFound: no object, tag, manifest or blob at the location.
	ErrNotFound = errcode.New("remote_not_found", "not found",
		"check the location; 'assemble push ASSEMBLY LOCATION' puts an assembly there")
	// ErrChanged: the object changed while it was read: another ETag,
	// version or size than the first response's, or a failed If-Match.
	ErrChanged = errcode.New("remote_changed", "object changed while being read",
		"the object was replaced while it was read: read it again, or name one version (oci://...@sha256:DIGEST, s3://...?versionId=V)")
	// ErrBadResponse: a response that does not answer the request: a
	// range with other bounds or length than asked, a server that ignores
	// ranges, an unexpected status.
	ErrBadResponse = errcode.New("bad_response", "bad response",
		"the server does not answer byte ranges as HTTP asks (RFC 9110); read the file from a server that does")
	// ErrDigestMismatch: the bytes read do not have the digest the
	// location or the caller asked for.
	ErrDigestMismatch = errcode.New("remote_digest_mismatch", "digest mismatch",
		"the bytes that arrived are not the ones asked for: the server or the digest asked for is wrong; do not use them")
	// ErrRedirect: a redirect to another scheme, refused.
	ErrRedirect = errcode.New("redirect_refused", "redirect refused",
		"the server redirected to another scheme, which is refused; use the final https:// location")
	// ErrTimeout: a request took longer than its deadline, or its body
	// stalled.
	ErrTimeout = errcode.New("timeout", "request timed out",
		"the server is slow or unreachable; try again")
	// ErrNotAssembly: an OCI manifest that is not a Cloud Assembly
	// artifact (docs/oci.md).
	ErrNotAssembly = errcode.New("not_assembly_artifact", "not a cloud assembly artifact",
		"the manifest is not a Cloud Assembly artifact (docs/oci.md); push one with 'assemble push'")
	// ErrUnsupported: an operation the location's scheme does not offer
	// (pushing to https://).
	ErrUnsupported = errcode.New("remote_unsupported", "not supported",
		"push to oci://REGISTRY/REPOSITORY:TAG or s3://BUCKET/KEY")
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
