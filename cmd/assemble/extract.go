package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/output"
	"github.com/cloud-assembly/assemble/internal/plural"
	"github.com/cloud-assembly/assemble/packager/cdk"
)

func extractCmd() *cli.Command {
	return &cli.Command{
		Name:      "extract",
		Usage:     "verify a signed assembly, then write its files to a folder",
		ArgsUsage: "ASSEMBLY",
		Description: `Runs every check of 'assemble verify' first; only a valid assembly signed by
trusted keys as the signature policy asks (--keyring, --min-signers,
--require-signer, --policy: as for verify) is written. The files go to a
temporary folder beside DIR (inside DIR when it is an existing empty folder,
such as a mounted volume), each checked again against its signed hash as it
is written, and moved into place at the end: on any failure nothing is
written. A run killed while it moves them into an existing folder is undone
by the next one (its journal names what it moved). DIR must not exist or be empty; every folder written gets the
same mode (0755 less the umask), every file 0644 less the umask.
signature.asc is written too.

--allow-unsigned extracts an unsigned assembly after checking its structure
and manifest, as verify does, and warns that nothing was authenticated.

With --cdk-out DIR instead of -d, an assembly built from a CDK cloud
assembly gives back that cdk.out, byte for byte (files its manifest records
as executable get 0755 less the umask), ready for 'cdk deploy --app DIR'.

Example:
   assemble extract --keyring release.pub.asc -d out app.cloud
   assemble extract --keyring release.pub.asc --cdk-out cdk.out app.cloud`,
		Flags: append(trustFlags(),
			digestFlag, timeoutFlag(),
			&cli.StringFlag{Name: "dir", Aliases: []string{"d"}, Usage: "write the files under `DIR`"},
			&cli.StringFlag{Name: "cdk-out", Usage: "write the CDK cloud assembly the assembly was built from to `DIR` (for cdk deploy --app DIR)"},
			&cli.BoolFlag{Name: "allow-unsigned", Usage: "extract an unsigned assembly after checking structure and manifest (authenticates nothing)"},
			strictFlag,
			jsonFlag,
			quietFlag,
			progressFlag,
		),
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
			if len(c.StringSlice("keyring")) == 0 && c.String("policy") == "" && !c.Bool("allow-unsigned") {
				return usagef("extract needs at least one --keyring FILE of trusted public keys")
			}
			// Refuse a full folder before verifying anything.
			out, err := output.CreateDir(dir)
			if errors.Is(err, fs.ErrNotExist) {
				return withHint(err, "create the folder it goes in first, or extract elsewhere")
			} else if err != nil {
				return withHint(err, "extract into a new or empty folder")
			}
			defer out.Close()
			res, err := verifyAssembly(c, c.Args().First(), c.Bool("allow-unsigned"))
			name := res.File // as messages show it: a location redacted
			defer res.close()
			if err != nil {
				return err
			}
			rc := res.reader
			open := func(f *assembly.File) (io.ReadCloser, error) {
				if res.verified == nil || f.Name() == assembly.SignatureName {
					// Unsigned (--allow-unsigned), or the signature that
					// verify just checked.
					return f.Open()
				}
				// Each byte checked again against its signed hash.
				return res.verified.Open(f.Name())
			}
			files := make([]extractFile, len(rc.Files()))
			for i, f := range rc.Files() {
				files[i] = extractFile{File: f, path: f.Name()}
			}
			what, written := plural.Count(res.Files, "file"), res.Files
			if cdkOut != "" {
				if files, err = cdkOutFiles(c, res, rc); err != nil {
					return withHint(onFile("extract", name, err), "extract --cdk-out gives back the cdk.out of an assembly built with 'assemble build CDK_OUT'; use -d DIR for the files of any assembly")
				}
				var size int64
				for _, f := range files {
					size += f.Size()
				}
				what, written = fmt.Sprintf("the cdk.out: %s", plural.Count(len(files), "file")), len(files)
				res.Bytes = size
			}
			prog := newProgress(c, "extracting "+name)
			err = extractAll(out, files, open, prog.Func())
			prog.Done()
			if err == nil {
				err = out.Commit()
			}
			if err != nil {
				return onFile("extract", name, err)
			}
			if c.Bool("json") {
				return printJSON(c, extractResult{File: name, Dir: dir, CDKOut: cdkOut != "", SHA256: res.SHA256, Files: written, Bytes: res.Bytes,
					Authenticated: res.Authenticated, Signer: res.Signer})
			}
			if res.Signer == nil {
				printf(c, c.App.Writer, "extracted %s (%s) from %s to %s: UNSIGNED, not authenticated\n",
					what, plural.Count(int(res.Bytes), "byte"), name, dir)
				return nil
			}
			printf(c, c.App.Writer, "extracted %s (%s) from %s to %s, signed by %q (%s)\n",
				what, plural.Count(int(res.Bytes), "byte"), name, dir, res.Signer.UserID, res.Signer.Fingerprint)
			return nil
		},
	}
}

// extractResult is what extract reports as JSON (docs/json/extract.json).
type extractResult struct {
	File          string        `json:"file"`
	Dir           string        `json:"dir"`
	CDKOut        bool          `json:"cdkOut,omitempty"`
	SHA256        digest.Digest `json:"sha256"`
	Files         int           `json:"files"`
	Bytes         int64         `json:"bytes"`
	Authenticated bool          `json:"authenticated"`
	Signer        *signerResult `json:"signer,omitempty"`
}

// An extractFile is an entry of the assembly and where extract writes it:
// its slash path below the folder, and whether it is executable.
type extractFile struct {
	*assembly.File
	path string
	exec bool
}

// cdkOutFiles lists the files of the cdk.out an assembly was built from,
// at their places in it (package cdk decides), from the verified manifest
// (or, with --allow-unsigned, the checked one).
func cdkOutFiles(c *cli.Context, res *verifyResult, rc *assembly.Reader) ([]extractFile, error) {
	var m *assembly.Manifest
	if res.verified != nil {
		m = res.verified.Manifest()
	} else {
		rep, err := rc.Check(checkOptions(c))
		if err != nil {
			return nil, err
		}
		m = rep.Manifest
	}
	names := make([]string, 0, len(rc.Files()))
	for _, f := range rc.Files() {
		names = append(names, f.Name())
	}
	outs, err := cdk.OutFiles(m, names)
	if err != nil {
		return nil, err
	}
	files := make([]extractFile, len(outs))
	for i, o := range outs {
		files[i] = extractFile{File: rc.File(o.Name), path: o.Path, exec: o.Executable}
	}
	return files, nil
}

// extractAll writes files into the output folder through its os.Root (no
// escape by symlink or ".."), telling progress the bytes written.
func extractAll(out *output.Dir, files []extractFile, open func(*assembly.File) (io.ReadCloser, error), progress func(done, total int64)) error {
	var total, done int64
	for _, f := range files {
		total += f.Size()
	}
	for _, f := range files {
		name := f.path
		if d := path.Dir(name); d != "." {
			if err := out.MkdirAll(d); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		r, err := open(f.File)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		mode := os.FileMode(0o644)
		if f.exec {
			mode = 0o755
		}
		dst, err := out.Root().OpenFile(filepath.FromSlash(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			r.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		n, err := io.Copy(dst, &limitio.Reader{R: r, Add: func(n int64) {
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
