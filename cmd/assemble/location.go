package main

import (
	"errors"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/remote"
)

// Every command that reads an assembly takes a file or a remote location
// (oci://, s3://, https://) for it, and opens it here: openSource is the
// one place that tells them apart.

// openSource opens what an ASSEMBLY argument names: a remote location
// (remote.Open: ranged reads, nothing written to disk) or a file. digest,
// when not empty, pins the bytes that must arrive (pull --digest).
func openSource(c *cli.Context, name, digest string) (io.ReaderAt, int64, io.Closer, error) {
	if !remote.IsLocation(name) {
		f, size, err := openAssemblyFile(name)
		if err != nil {
			return nil, 0, nil, err
		}
		return f, size, f, nil
	}
	o, err := remote.Open(c.Context, name, &remote.Options{Digest: digest})
	if err != nil {
		return nil, 0, nil, remoteHint(err)
	}
	return o, o.Size(), o, nil
}

// openReader opens an assembly file or location and reads its structure,
// as assembly.Open does. Errors name it as given, after verb when it is
// not empty ("attest app.cloud: ...").
func openReader(c *cli.Context, verb, name string) (*assembly.Reader, io.Closer, error) {
	ra, size, cl, err := openSource(c, name, "")
	if err != nil {
		if verb != "" {
			err = onFile(verb, name, err)
		}
		return nil, nil, openError(name, err)
	}
	r, err := assembly.NewReader(ra, size)
	if err != nil {
		cl.Close()
		return nil, nil, openError(name, onFile(verb, name, err))
	}
	return r, cl, nil
}

// remoteHint adds the hint for a remote location's failure: its code's
// (codeHints), or how credentials are given when the server refused them.
func remoteHint(err error) error {
	switch {
	case isRemoteErr(err):
		return withHint(err, codeHints[codeOf(err)])
	case strings.Contains(err.Error(), "UNAUTHORIZED") || strings.Contains(err.Error(), "401 Unauthorized") || strings.Contains(err.Error(), "access denied") || strings.Contains(err.Error(), "AccessDenied"):
		return withHint(err, "registry credentials come from the Docker configuration ('docker login', credential helpers), S3's from the AWS default chain (AWS_PROFILE, AWS_ACCESS_KEY_ID, roles)")
	}
	return err
}

// isRemoteErr: err is a remote location's failure (of the transport, not
// of the assembly), whatever wraps it.
func isRemoteErr(err error) bool {
	for _, s := range []error{remote.ErrLocation, remote.ErrNotFound, remote.ErrChanged, remote.ErrBadResponse,
		remote.ErrDigestMismatch, remote.ErrRedirect, remote.ErrTimeout, remote.ErrNotAssembly, remote.ErrUnsupported} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
