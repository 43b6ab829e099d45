package main

import (
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/output"
)

func extractCmd() *cli.Command {
	return &cli.Command{
		Name:      "extract",
		Usage:     "verify a signed assembly, then write its files to a folder",
		ArgsUsage: "ASSEMBLY",
		Description: `Runs every check of 'assemble verify' first; only a valid assembly signed by
a trusted key (--keyring, repeatable) is written. The files go to a temporary
folder beside DIR, each checked again against its signed hash as it is
written, and the folder is renamed to DIR at the end: on any failure nothing
is written. DIR must not exist or be empty; every folder written gets the
same mode (0755 less the umask), every file 0644 less the umask.
signature.asc is written too.

--allow-unsigned extracts an unsigned assembly after checking its structure
and manifest, as verify does, and warns that nothing was authenticated.

Example:
   assemble extract --keyring release.pub.asc -d out app.cloud`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "keyring", Usage: "trusted public keys `FILE` (repeatable)"},
			&cli.StringFlag{Name: "dir", Aliases: []string{"d"}, Usage: "write the files under `DIR`"},
			&cli.BoolFlag{Name: "allow-unsigned", Usage: "extract an unsigned assembly after checking structure and manifest (authenticates nothing)"},
			strictFlag,
			quietFlag,
			progressFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("extract takes one ASSEMBLY argument, got %d", c.NArg())
			}
			dir := c.String("dir")
			if dir == "" {
				return usagef("extract needs -d DIR")
			}
			if len(c.StringSlice("keyring")) == 0 && !c.Bool("allow-unsigned") {
				return usagef("extract needs at least one --keyring FILE of trusted public keys")
			}
			// Refuse a full folder before verifying anything.
			out, err := output.CreateDir(dir)
			if err != nil {
				return withHint(err, "extract into a new or empty folder")
			}
			defer out.Close()
			name := c.Args().First()
			res, rc, err := verifyAssembly(c, name, c.Bool("allow-unsigned"))
			if rc != nil {
				defer rc.Close()
			}
			if err != nil {
				return err
			}
			open := func(f *assembly.File) (io.ReadCloser, error) {
				if res.verified == nil || f.Name() == assembly.SignatureName {
					// Unsigned (--allow-unsigned), or the signature that
					// verify just checked.
					return f.Open()
				}
				// Each byte checked again against its signed hash.
				return res.verified.Open(f.Name())
			}
			prog := newProgress(c, "extracting "+name)
			err = extractAll(out, rc.Files(), open, prog.Func())
			prog.Done()
			if err == nil {
				err = out.Commit()
			}
			if err != nil {
				return fmt.Errorf("extract %s: %w", name, err)
			}
			if res.Signer == nil {
				printf(c, c.App.Writer, "extracted %s (%s) from %s to %s: UNSIGNED, not authenticated\n",
					count(res.Files, "file"), count(int(res.Bytes), "byte"), name, dir)
				return nil
			}
			printf(c, c.App.Writer, "extracted %s (%s) from %s to %s, signed by %q (%s)\n",
				count(res.Files, "file"), count(int(res.Bytes), "byte"), name, dir, res.Signer.UserID, res.Signer.Fingerprint)
			return nil
		},
	}
}

// extractAll writes every file of the assembly (signature.asc included)
// into the output folder through its os.Root (no escape by symlink or
// ".."), telling progress the bytes written.
func extractAll(out *output.Dir, files []*assembly.File, open func(*assembly.File) (io.ReadCloser, error), progress func(done, total int64)) error {
	var total, done int64
	for _, f := range files {
		total += f.Size()
	}
	for _, f := range files {
		name := f.Name()
		if d := path.Dir(name); d != "." {
			if err := out.MkdirAll(d); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		r, err := open(f)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		dst, err := out.Root().OpenFile(filepath.FromSlash(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			r.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		n, err := io.Copy(dst, &countingReader{r: r, add: func(n int64) {
			done += n
			if progress != nil {
				progress(done, total)
			}
		}})
		r.Close()
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		if err == nil && n != f.Size() {
			err = fmt.Errorf("%w: %d bytes, the header says %d", assembly.ErrFormat, n, f.Size())
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// countingReader tells add how many bytes each Read returned.
type countingReader struct {
	r   io.Reader
	add func(int64)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.add(int64(n))
	}
	return n, err
}
