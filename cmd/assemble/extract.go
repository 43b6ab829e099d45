package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/signing"
)

// readSignature reads signature.asc (already verified), bounded.
func readSignature(f *assembly.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, assembly.MaxSignatureSize))
}

func extractCmd() *cli.Command {
	return &cli.Command{
		Name:      "extract",
		Usage:     "verify a signed assembly, then write its files to a folder",
		ArgsUsage: "ASSEMBLY",
		Description: `Runs every check of 'assemble verify' first; only a valid assembly signed by
a trusted key (--keyring, repeatable) is written. The files go to a temporary
folder beside DIR, each checked again against its signed hash as it is
written, and the folder is renamed to DIR at the end: on any failure nothing
is written. DIR must not exist or be empty. signature.asc is written too.

Example:
   assemble extract --keyring release.pub.asc -d out app.cloud`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "keyring", Usage: "trusted public keys `FILE` (repeatable)"},
			&cli.StringFlag{Name: "dir", Aliases: []string{"d"}, Usage: "write the files under `DIR`"},
			strictFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("extract takes one ASSEMBLY argument, got %d", c.NArg())
			}
			dir := c.String("dir")
			if dir == "" {
				return usagef("extract needs -d DIR")
			}
			if len(c.StringSlice("keyring")) == 0 {
				return usagef("extract needs at least one --keyring FILE of trusted public keys")
			}
			if err := checkEmptyDir(dir); err != nil {
				return err
			}
			name := c.Args().First()
			res, rc, err := verifyAssembly(c, name, false)
			if rc != nil {
				defer rc.Close()
			}
			if err != nil {
				return err
			}
			sig, err := readSignature(rc.File(assembly.SignatureName))
			if err != nil {
				return fmt.Errorf("extract %s: %w", name, err)
			}
			if err := extractAll(res.verified, sig, dir); err != nil {
				return fmt.Errorf("extract %s: %w", name, err)
			}
			fmt.Fprintf(c.App.Writer, "extracted %d files (%d bytes) from %s to %s, signed by %q (%s)\n",
				res.Files, res.Bytes, name, dir, res.Signer.UserID, res.Signer.Fingerprint)
			return nil
		},
	}
}

// checkEmptyDir fails unless dir is absent or an empty folder.
func checkEmptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(entries) > 0:
		return withHint(fmt.Errorf("%s is not empty", dir), "extract into a new or empty folder")
	}
	return nil
}

// extractAll writes every verified file under a temporary folder beside
// dir through os.Root (no escape by symlink or "..") and renames it to dir.
func extractAll(v *signing.Verified, sig []byte, dir string) (err error) {
	parent := filepath.Dir(filepath.Clean(dir))
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".extract-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return err
	}
	defer root.Close()
	write := func(name string, src io.Reader) error {
		if d := path.Dir(name); d != "." {
			if err := root.MkdirAll(filepath.FromSlash(d), 0o755); err != nil {
				return err
			}
		}
		f, err := root.OpenFile(filepath.FromSlash(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, src); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	for _, name := range v.Files() {
		rc, err := v.Open(name)
		if err != nil {
			return err
		}
		err = write(name, rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := write(assembly.SignatureName, bytes.NewReader(sig)); err != nil {
		return err
	}
	// An empty dir may exist: replace it.
	if _, err := os.Stat(dir); err == nil {
		if err := os.Remove(dir); err != nil {
			return err
		}
	}
	return os.Rename(tmp, dir)
}
