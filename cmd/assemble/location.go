package main

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/remote"
	"github.com/cloud-assembly/assemble/trust"
)

// Every command that reads an assembly takes a file or a remote location
// (oci://, s3://, https://) for it; trust.Open (verifying) and
// trust.OpenUnverified (inspect, graph, attest) tell them apart.

// digestFlag names the assembly by its .cloud file's SHA-256 (one
// identity everywhere): every command that reads an assembly takes it,
// for a file or a location.
var digestFlag = &cli.StringFlag{Name: "digest", Usage: "require the .cloud file's SHA-256 to be `sha256:HEX` (its name, as build, sign, verify and push print it)"}

// timeoutFlag bounds the whole of a command's work with remote locations
// (opening, every read, an upload), however many requests it takes.
// A new flag each time: urfave/cli keeps the value it read from the
// environment in the flag itself, which must not outlive one run.
func timeoutFlag() cli.Flag {
	return &cli.DurationFlag{Name: "timeout", EnvVars: []string{"ASSEMBLE_TIMEOUT"},
		Usage: "give up on remote locations after `DURATION` in all, reading and uploading (e.g. 10m; default none, each request still bounded)"}
}

// remoteContext is the command's context for remote locations: with
// --timeout (or ASSEMBLE_TIMEOUT), one deadline for the whole run, set
// when it is first asked for.
func remoteContext(c *cli.Context) (context.Context, context.CancelFunc) {
	d := c.Duration("timeout")
	if d <= 0 {
		return c.Context, func() {}
	}
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	deadline, ok := c.App.Metadata["deadline"].(time.Time)
	if !ok {
		deadline = time.Now().Add(d)
		c.App.Metadata["deadline"] = deadline
	}
	return context.WithDeadline(c.Context, deadline)
}

// digestOption is --digest, parsed (the zero Digest when not given).
func digestOption(c *cli.Context) (digest.Digest, error) {
	s := c.String("digest")
	if s == "" {
		return digest.Digest{}, nil
	}
	d, err := digest.Parse(s)
	if err != nil {
		return d, withHint(usagef("--digest %q is not a SHA-256 digest", s), "give it as sha256: and 64 lowercase hex digits, as 'assemble verify' and 'assemble push' print it")
	}
	return d, nil
}

// shown is how messages and JSON name an ASSEMBLY or LOCATION argument: a
// location with its secrets redacted (remote.Redact), a file as given.
func shown(name string) string {
	if remote.IsLocation(name) {
		return remote.Redact(name)
	}
	return name
}

// closers closes the file or object, then ends its context.
type closers struct {
	o      io.Closer
	cancel context.CancelFunc
}

func (c closers) Close() error {
	err := c.o.Close()
	c.cancel()
	return err
}

// openReader opens an assembly file or location and reads its structure,
// verifying nothing (trust.OpenUnverified); --digest, when the command
// has it, pins the file's SHA-256. Errors name it as given, after verb
// when it is not empty ("attest app.cloud: ...").
func openReader(c *cli.Context, verb, name string) (*assembly.Reader, io.Closer, error) {
	want, err := digestOption(c)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := remoteContext(c)
	r, cl, err := trust.OpenUnverified(ctx, name, &trust.OpenOptions{Digest: want})
	if err != nil {
		cancel()
		return nil, nil, openError(verb, err)
	}
	return r, closers{cl, cancel}, nil
}

// openError says the failure of trust.Open or OpenUnverified to open an
// assembly as the commands say it: the error as it is when nothing could
// be opened (it names the file) or, with no verb, when the file opened
// (a wrong digest); else about the file, after verb.
func openError(verb string, err error) error {
	var ve *trust.VerifyError
	if !errors.As(err, &ve) {
		return err
	}
	switch {
	case ve.Result == nil && verb == "", ve.Result != nil && ve.Result.Reader != nil && verb == "":
		return ve.Err
	}
	return onFile(verb, ve.Name, ve.Err)
}
