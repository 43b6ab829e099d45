package remote

import "errors"

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
