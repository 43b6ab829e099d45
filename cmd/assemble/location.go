package main

import (
	"io"

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
		return nil, 0, nil, err
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
		return nil, nil, err
	}
	r, err := assembly.NewReader(ra, size)
	if err != nil {
		cl.Close()
		return nil, nil, onFile(verb, name, err)
	}
	return r, cl, nil
}
