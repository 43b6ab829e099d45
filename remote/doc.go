// Package remote opens assemblies where teams keep them, an OCI registry,
// S3 or an HTTPS server, as an io.ReaderAt with a size for
// assembly.NewReader, and pushes them there.
//
// # Locations
//
//	oci://REGISTRY/REPOSITORY[:TAG|@sha256:DIGEST]
//	s3://BUCKET/KEY[?versionId=VERSION]
//	https://HOST/PATH              (http:// only to a loopback host)
//
// An OCI location names an artifact manifest with artifactType
// application/vnd.cloud-assembly.v1 and one layer of media type
// application/vnd.cloud-assembly.v1+zip holding the .cloud file unchanged
// (docs/oci.md).
//
// # Reading
//
// An Object reads ranges of the remote file and fetches each byte at most
// once: the last bytes come with the first request and stay in memory,
// every other byte goes, as it arrives, to an unnamed temporary file (the
// spool, Options.TempDir), and every read is served from there. So the
// bytes a caller verified, the bytes SHA256 hashed and the bytes read
// again to be written or uploaded are the same bytes, whatever a server
// would send a second time (no validator, If-Match ignored, a file
// replaced). Sequential reads fetch in runs with read-ahead, large reads
// as several ranged requests in flight, a stream of reads a block apart
// (a ZIP's local headers) in runs. Memory stays bounded whatever the
// file's size. Every request has a deadline and a limit on how long its
// body may stall; the context given to Open bounds them all; transient
// failures (network errors, 5xx, 429) are retried with backoff.
//
// The first response pins the object: its ETag (HTTPS, S3, with If-Match
// on every later range), its version (S3), or its digest (OCI, where blobs
// are addressed by content). A later response for another version, or of
// another size, fails with ErrChanged rather than mix two files; a range
// response with other bounds or length than asked fails with
// ErrBadResponse. The bytes themselves are checked by the reader's
// caller, as for a local file (assembly.NewReader, trust.Verify); the
// whole file's SHA-256 is Object.SHA256, which fails with
// ErrDigestMismatch when the bytes are not the ones the location (an OCI
// blob's digest) or Options.Digest named. Locations are redacted (Redact)
// in every error.
//
// # Pushing
//
// Push uploads a file to OCI (an artifact manifest that depends on the file
// alone, docs/oci.md; a source's manifest copied as it is) or S3
// (PutObject with its SHA-256 checksum, multipart above Options.PartSize,
// user metadata assemble-sha256). Every upload body is a digest.Reader:
// the bytes sent are checked against File.SHA256 as they pass and the last
// of them withheld unless the whole matches, so nothing else is
// committed. HTTPS locations are read-only.
//
// Credentials come the standard way: the Docker configuration and
// credential helpers for registries (go-containerregistry's
// authn.DefaultKeychain), the AWS SDK's default chain for S3
// (AWS_ENDPOINT_URL included). Nothing is taken from arguments.
package remote
