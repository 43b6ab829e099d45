package trust

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/internal/limitio"
	"github.com/cloud-assembly/assemble/internal/output"
)

// ExtractOptions tune Extract. The zero value writes every file of the
// assembly at its name, signature.asc too.
type ExtractOptions struct {
	// Layout, when set, chooses the files written and their places from
	// the verified manifest and the names of the assembly's files:
	// cdk.OutFiles gives back the CDK cloud assembly (cdk.out) an assembly
	// was built from. Its error fails Extract as a *LayoutError.
	Layout func(m *assembly.Manifest, names []string) ([]assembly.Placement, error)
	// Progress, if set, is called as the files are written, with the
	// bytes written so far and the total.
	Progress func(done, total int64)
}

// An ExtractResult is what Extract wrote, as `assemble extract --json`
// prints it (docs/json/extract.json): the assembly (its SHA-256, taken
// while it was verified), the folder, the files and bytes written, and
// whether trusted keys authenticated them (Signer, the first trusted key
// that signed).
type ExtractResult struct {
	File string `json:"file"`
	Dir  string `json:"dir"`
	// CDKOut: ExtractOptions.Layout placed the files (Dir holds the
	// cdk.out the assembly was built from).
	CDKOut        bool          `json:"cdkOut,omitempty"`
	SHA256        digest.Digest `json:"sha256"`
	Files         int           `json:"files"`
	Bytes         int64         `json:"bytes"`
	Authenticated bool          `json:"authenticated"`
	Signer        *Signer       `json:"signer,omitempty"`
}

// A LayoutError is ExtractOptions.Layout's refusal of the assembly (one
// not built from a cdk.out, for cdk.OutFiles): Err says why.
type LayoutError struct{ Err error }

func (e *LayoutError) Error() string { return e.Err.Error() }
func (e *LayoutError) Unwrap() error { return e.Err }

// CheckExtractDir fails as Extract would on dir before it writes
// anything (code folder_not_empty, errcode.Of, for a folder that holds
// something; not_a_folder for a file; fs.ErrNotExist
// when the folder it goes in does not exist): a caller refuses the
// folder before it spends a verification on the assembly.
func CheckExtractDir(dir string) error {
	out, err := output.CreateDir(dir)
	if err != nil {
		return err
	}
	return out.Close()
}

// Extract writes the assembly's files under dir, which must not exist or
// be an empty folder (code folder_not_empty): into a temporary folder beside it (or
// inside it, for an existing empty folder), each file checked again
// against its signed hash as it is written (for an unsigned assembly,
// against its ZIP header's CRC-32), through a root that no name can
// leave, then moved into place: on any failure nothing is written. Every
// folder gets mode 0755 less the umask, every file 0644 (0755 for an
// executable Placement). Errors about one file start with its path.
func (a *Assembly) Extract(ctx context.Context, dir string, opts *ExtractOptions) (*ExtractResult, error) {
	if opts == nil {
		opts = &ExtractOptions{}
	}
	out, err := output.CreateDir(dir)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	res := &ExtractResult{File: a.Name(), Dir: dir, SHA256: a.res.SHA256, Files: a.res.Files(), Bytes: a.res.Bytes(), Authenticated: a.Authenticated()}
	if v := a.res.Verified; v != nil {
		res.Signer = &Signer{Fingerprint: v.Fingerprint(), SigningKey: v.SigningKeyFingerprint(), UserID: v.UserID()}
	}
	files := a.placements()
	if opts.Layout != nil {
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = f.Name
		}
		if files, err = opts.Layout(a.res.Manifest, names); err != nil {
			return nil, &LayoutError{Err: err}
		}
		res.CDKOut, res.Files, res.Bytes = true, len(files), 0
		for _, f := range files {
			n, ok := a.entrySize(f.Name)
			if !ok {
				return nil, &LayoutError{Err: fmt.Errorf("%s: %w", f.Name, errNotInAssembly)}
			}
			res.Bytes += n
		}
	}
	if err := a.extractAll(ctx, out, files, opts.Progress); err != nil {
		return nil, err
	}
	if err := out.Commit(); err != nil {
		return nil, err
	}
	return res, nil
}

// placements are every file of the archive (signature.asc too) at its
// own name, in archive order.
func (a *Assembly) placements() []assembly.Placement {
	fs := a.res.Reader.Files()
	out := make([]assembly.Placement, len(fs))
	for i, f := range fs {
		out[i] = assembly.Placement{Name: f.Name(), Path: f.Name()}
	}
	return out
}

// entrySize is the size of an archive entry, signature.asc included.
func (a *Assembly) entrySize(name string) (int64, bool) {
	f := a.res.Reader.File(name)
	if f == nil {
		return 0, false
	}
	return f.Size(), true
}

// openEntry reads an entry for Extract: a file through Open (checked as
// it is read), signature.asc as it is (the verification checked it).
func (a *Assembly) openEntry(name string) (io.ReadCloser, error) {
	if name == assembly.SignatureName {
		f := a.res.Reader.File(name)
		if f == nil {
			return nil, fmt.Errorf("%s: %w", name, errNotInAssembly)
		}
		return f.Open()
	}
	return a.Open(name)
}

// extractAll writes files into out through its os.Root (no escape by
// symbolic link or ".."), telling progress the bytes written.
func (a *Assembly) extractAll(ctx context.Context, out *output.Dir, files []assembly.Placement, progress func(done, total int64)) error {
	var total, done int64
	for _, f := range files {
		n, _ := a.entrySize(f.Name)
		total += n
	}
	for _, f := range files {
		name := f.Path
		if err := ctx.Err(); err != nil {
			return err
		}
		if d := path.Dir(name); d != "." {
			if err := out.MkdirAll(d); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		size, _ := a.entrySize(f.Name)
		r, err := a.openEntry(f.Name)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		mode := os.FileMode(0o644)
		if f.Executable {
			mode = 0o755
		}
		dst, err := out.Root().OpenFile(filepath.FromSlash(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if err != nil {
			r.Close()
			return fmt.Errorf("%s: %w", name, err)
		}
		n, err := io.Copy(dst, &ctxReader{ctx, &limitio.Reader{R: r, Add: func(n int64) {
			done += n
			if progress != nil {
				progress(done, total)
			}
		}}})
		r.Close()
		if cerr := dst.Close(); err == nil {
			err = cerr
		}
		if err == nil && n != size {
			err = fmt.Errorf("%w: %d bytes, the header says %d", assembly.ErrFormat, n, size)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}
