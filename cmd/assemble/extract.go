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
	"github.com/cloud-assembly/assemble/packager/cdk"
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

With --cdk-out DIR instead of -d, an assembly built from a CDK cloud
assembly gives back that cdk.out, byte for byte (asset files keep their
executable bit), ready for 'cdk deploy --app DIR'.

Example:
   assemble extract --keyring release.pub.asc -d out app.cloud
   assemble extract --keyring release.pub.asc --cdk-out cdk.out app.cloud`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "keyring", Usage: "trusted public keys `FILE` (repeatable)"},
			&cli.StringFlag{Name: "dir", Aliases: []string{"d"}, Usage: "write the files under `DIR`"},
			&cli.StringFlag{Name: "cdk-out", Usage: "write the CDK cloud assembly the assembly was built from to `DIR` (for cdk deploy --app DIR)"},
			strictFlag,
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef("extract takes one ASSEMBLY argument, got %d", c.NArg())
			}
			dir, cdkOut := c.String("dir"), c.String("cdk-out")
			switch {
			case dir != "" && cdkOut != "":
				return usagef("extract takes -d DIR or --cdk-out DIR, not both: run it twice for both")
			case cdkOut != "":
				dir = cdkOut
			case dir == "":
				return usagef("extract needs -d DIR (or --cdk-out DIR)")
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
			if cdkOut != "" {
				return extractCDKOut(c, res, name, cdkOut)
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

// extractAll writes every verified file and the signature to dir.
func extractAll(v *signing.Verified, sig []byte, dir string) error {
	var files []treeFile
	for _, name := range v.Files() {
		files = append(files, treeFile{path: name, open: func() (io.ReadCloser, error) { return v.Open(name) }})
	}
	files = append(files, treeFile{path: assembly.SignatureName, open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(sig)), nil
	}})
	_, err := writeTree(files, dir)
	return err
}

// extractCDKOut writes the cdk.out a verified assembly was built from.
func extractCDKOut(c *cli.Context, res *verifyResult, name, dir string) error {
	v := res.verified
	out, err := cdk.OutFiles(v.Manifest(), v.Files())
	if err != nil {
		return withHint(fmt.Errorf("extract %s: %w", name, err), "extract --cdk-out gives back the cdk.out of an assembly built with 'assemble build CDK_OUT'; use -d DIR for the files of any assembly")
	}
	files := make([]treeFile, len(out))
	for i, f := range out {
		files[i] = treeFile{path: f.Path, executable: f.Executable, open: func() (io.ReadCloser, error) { return v.Open(f.Name) }}
	}
	size, err := writeTree(files, dir)
	if err != nil {
		return fmt.Errorf("extract %s: %w", name, err)
	}
	fmt.Fprintf(c.App.Writer, "extracted the cdk.out (%d files, %d bytes) from %s to %s, signed by %q (%s)\n",
		len(out), size, name, dir, res.Signer.UserID, res.Signer.Fingerprint)
	return nil
}

// A treeFile is one file writeTree writes: its slash path below the
// folder, its mode, and its content.
type treeFile struct {
	path       string
	executable bool
	open       func() (io.ReadCloser, error)
}

// writeTree writes files under a temporary folder beside dir through
// os.Root (no escape by symlink or "..") and renames it to dir. It
// returns the bytes written.
func writeTree(files []treeFile, dir string) (size int64, err error) {
	parent := filepath.Dir(filepath.Clean(dir))
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".extract-*")
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	write := func(tf treeFile) error {
		if d := path.Dir(tf.path); d != "." {
			if err := root.MkdirAll(filepath.FromSlash(d), 0o755); err != nil {
				return err
			}
		}
		mode := os.FileMode(0o644)
		if tf.executable {
			mode = 0o755
		}
		src, err := tf.open()
		if err != nil {
			return err
		}
		defer src.Close()
		f, err := root.OpenFile(filepath.FromSlash(tf.path), os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			return err
		}
		n, err := io.Copy(f, src)
		size += n
		if err != nil {
			f.Close()
			return err
		}
		if tf.executable {
			// The umask may have cleared bits of the mode asked for.
			if err := f.Chmod(mode); err != nil {
				f.Close()
				return err
			}
		}
		return f.Close()
	}
	for _, tf := range files {
		if err := write(tf); err != nil {
			return 0, fmt.Errorf("%s: %w", tf.path, err)
		}
	}
	// An empty dir may exist: replace it.
	if _, err := os.Stat(dir); err == nil {
		if err := os.Remove(dir); err != nil {
			return 0, err
		}
	}
	return size, os.Rename(tmp, dir)
}
