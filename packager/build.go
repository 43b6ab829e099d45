package packager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/digest"
	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/internal/hint"
	"github.com/cloud-assembly/assemble/internal/output"
	"github.com/cloud-assembly/assemble/internal/projectfs"
	"github.com/cloud-assembly/assemble/packager/artifacts"
	"github.com/cloud-assembly/assemble/packager/cdk"
	"github.com/cloud-assembly/assemble/packager/schema"
	"github.com/cloud-assembly/assemble/provenance"
)

// BuildOptions configures Load and Build.
type BuildOptions struct {
	// Strict makes missing information (a stack parameter with no value
	// and no default) an error instead of an entry in "missing".
	Strict bool
	// Environment is used by droplets that name none when the project names
	// none either. A single template with no Environment is built for
	// aws://unknown-account/unknown-region (environment-agnostic).
	Environment string
	// ModTime, Workers, Progress and Sealer are passed to
	// assembly.WriterOptions (a Sealer signs the assembly as it is written:
	// signing.StreamSigner).
	ModTime  time.Time
	Workers  int
	Progress func(done, total int64)
	Sealer   assembly.Sealer
	// Schemas, when set, checks every packaged template against these
	// resource type schemas: findings fail the build, or with SchemasWarn
	// become warnings.
	Schemas     *schema.Catalog
	SchemasWarn bool
	// AssetBucket and AssetKeyPrefix say where the local artifacts of
	// templates (Lambda code, nested templates, ...) are uploaded; they
	// override assets: in assembly.yaml. The bucket is a name or a
	// ${Id.output.Name} reference to a stack deployed first.
	AssetBucket    string
	AssetKeyPrefix string
	// Provenance are the explicit inputs of the provenance every build
	// writes (package provenance): the CI environment to read, builder,
	// invocation, times. The zero value makes a local provenance, the same
	// every time.
	Provenance provenance.Options
}

// A Plan is a loaded, validated project: the manifest to write and the
// files to ship. Nothing is written until Write.
type Plan struct {
	// Dir is the project folder.
	Dir string
	// Source is assembly.yaml, or the single template, as named.
	Source string
	// Manifest is the manifest.json to write; its paths are archive paths.
	Manifest *assembly.Manifest
	// Report is assembly.Check's report on what Write writes: deploy
	// order, graph, findings.
	Report *assembly.Report
	// Warnings found while building (the check's warnings and notes
	// included).
	Warnings []assembly.Finding

	writer  *assembly.Writer
	root    *os.Root          // the project's real folder: every file is read through it
	sources map[string]string // archive name -> what it is, for conflicts
	inputs  []string          // real paths of the project files read
	dirs    []string          // real paths of the folders shipped
	bodies  map[string][]byte // archive name -> packaged bytes
	read    []string          // files the packaging read (provenance dependencies)

	statement *provenance.Statement
}

// Files lists the archive's entries, sorted.
func (p *Plan) Files() []string { return p.writer.Names() }

// Inputs lists the files the build read: the project file, the files and
// folders its droplets name, and every template, module and included file
// their packaging read. No output may overwrite one of them.
func (p *Plan) Inputs() []string { return append([]string(nil), p.inputs...) }

// WriteOptions are Plan.Write's; nil is the zero value.
type WriteOptions struct {
	// Stdout receives the assembly when the output is "-" (default
	// os.Stdout).
	Stdout io.Writer
	// Inputs are more files the output may not be, beside the project's
	// own (the signing keys a caller read, say).
	Inputs []string
	// Waiting, if set, is called once when another writer holds the
	// output, with the path waited for.
	Waiting func(path string)
}

// Written is the assembly file Plan.Write wrote.
type Written struct {
	// Digest is the file's SHA-256, hashed from the bytes as they were
	// written (never by reading the file back); Size is its length.
	Digest digest.Digest
	Size   int64
	// Direct says the output was written as it went (standard output, a
	// pipe, a device) rather than renamed into place.
	Direct bool
}

// Write writes the assembly to output through the project's one output
// writer (see internal/output: a temporary file renamed into place on
// success only, a symbolic link kept, "-" for standard output), refusing
// an output that is one of the project's files or opts.Inputs or lies in
// a folder the assembly ships. It returns the file's digest and size.
func (p *Plan) Write(ctx context.Context, out string, opts *WriteOptions) (*Written, error) {
	if opts == nil {
		opts = &WriteOptions{}
	}
	inputs := append(append([]string(nil), p.inputs...), opts.Inputs...)
	f, err := output.Create(ctx, out, output.Options{Stdout: opts.Stdout, Inputs: inputs, Waiting: opts.Waiting, Sync: true})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := p.CheckOutput(f.Target()); err != nil {
		return nil, err
	}
	dw := digest.NewWriter(f)
	defer dw.Close()
	if _, err := p.WriteTo(ctx, dw); err != nil {
		return nil, err
	}
	d, err := dw.Digest()
	if err != nil {
		return nil, err
	}
	if err := f.Commit(); err != nil {
		return nil, err
	}
	return &Written{Digest: d, Size: dw.Size(), Direct: f.Direct()}, nil
}

// WriteTo streams the assembly to w. Every project file is opened through
// the project folder's os.Root and must still be the file that was checked
// (ErrChanged otherwise): a file swapped for a symbolic link since the
// check is never followed.
func (p *Plan) WriteTo(ctx context.Context, w io.Writer) (int64, error) {
	return p.writer.WriteTo(ctx, w)
}

// CheckOutput refuses an output file that would land inside a folder the
// assembly ships (the next build would then ship the previous assembly) or
// be a file of the project. "" (standard output, a pipe) passes.
func (p *Plan) CheckOutput(output string) error {
	if output == "" {
		return nil
	}
	abs, err := filepath.Abs(output)
	if err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		// Not there yet: resolve its folder instead.
		dir, derr := filepath.EvalSymlinks(filepath.Dir(abs))
		if derr != nil {
			return nil // WriteFile reports the missing folder
		}
		real = filepath.Join(dir, filepath.Base(abs))
	}
	for _, in := range p.inputs {
		if in == real {
			return fmt.Errorf("%w: output %s would overwrite a file of the project: write the assembly elsewhere (-o NAME.cloud)", ErrProject, output)
		}
	}
	for _, d := range p.dirs {
		if rel, err := filepath.Rel(d, real); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return fmt.Errorf("%w: output %s lies inside %s, a folder the assembly ships: write the assembly outside it", ErrProject, output, relWD(d))
		}
	}
	return nil
}

// Build loads the project at path (a folder holding assembly.yaml, a
// folder holding one template, or a template file) and writes the assembly
// to output.
func Build(ctx context.Context, path, output string, opts BuildOptions) (*Plan, error) {
	p, err := Load(path, opts)
	if err != nil {
		return nil, err
	}
	if _, err := p.Write(ctx, output, nil); err != nil {
		return nil, err
	}
	return p, nil
}

// A Packer prepares the file a path property names for the assembly. It
// returns the bytes to ship, or nil to ship the file unchanged; an error
// stops the build.
type Packer func(file string, opts PackageOptions) ([]byte, error)

var (
	packersMu sync.RWMutex
	packers   = map[string]Packer{}
)

// RegisterPacker sets the Packer for one path property of one droplet
// kind (by its full type specifier). A new droplet kind registers its own
// from an init function in its own file. It panics on a duplicate.
func RegisterPacker(dropletType, property string, p Packer) {
	packersMu.Lock()
	defer packersMu.Unlock()
	key := dropletType + "\x00" + property
	if _, dup := packers[key]; dup {
		panic("packager: packer registered twice for " + dropletType + " " + property)
	}
	packers[key] = p
}

func packerFor(dropletType, property string) Packer {
	packersMu.RLock()
	defer packersMu.RUnlock()
	return packers[dropletType+"\x00"+property]
}

func init() {
	RegisterPacker(droplets.StackType, "template", PackageTemplate)
	RegisterPacker(droplets.DockerImageType, "savedImage", checkSavedImage)
}

// Load reads and validates a project and packages its templates, without
// writing anything. A project is a folder holding assembly.yaml, a CDK
// cloud assembly (a cdk.out folder, its manifest.json, or a CDK app folder
// holding one; see package cdk), a folder holding one template, or a
// template file.
func Load(target string, opts BuildOptions) (plan *Plan, err error) {
	var single string // template file in single-template mode
	defer func() {
		if err != nil && single != "" && errors.Is(err, ErrProject) && hint.Of(err) == "" {
			// The hint of invalid_project names assembly.yaml, which a
			// single template does not have.
			err = hint.With(err, "fix the template at the place shown, or the flag named (a single template is built without "+ProjectFile+"; to say more, write one: see Projects in the README)")
		}
	}()
	st, err := os.Stat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist: name a folder holding %s, or a template file", ErrProject, target, ProjectFile)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProject, err)
	}
	var spec *projectSpec
	dir := target
	if st.IsDir() {
		file := filepath.Join(target, ProjectFile)
		if _, err := os.Stat(file); err == nil {
			if spec, err = loadProjectFile(file, opts.Environment); err != nil {
				return nil, err
			}
		} else if out, err := cdk.Find(target); err != nil || out != "" {
			if err != nil {
				return nil, err
			}
			return loadCDK(out, opts)
		} else if single, err = findTemplate(target); err != nil {
			return nil, err
		}
	} else if out, err := cdk.Find(target); err != nil || out != "" {
		// the manifest.json of a cdk.out
		if err != nil {
			return nil, err
		}
		return loadCDK(out, opts)
	} else if filepath.Base(target) == ProjectFile {
		// assemble build app/assembly.yaml means the project, not a
		// template named assembly.yaml.
		dir = filepath.Dir(target)
		if spec, err = loadProjectFile(target, opts.Environment); err != nil {
			return nil, err
		}
	} else {
		dir, single = filepath.Dir(target), target
	}
	if single != "" && strings.EqualFold(strings.TrimSuffix(filepath.Base(single), filepath.Ext(single)), "assembly") {
		// assembly.yml, Assembly.yaml, assembly.json: meant as the project
		// file, which would otherwise be packaged as a template.
		return nil, fmt.Errorf("%w: %s is not read as the project file: name it %s (or give a template another name)", ErrProject, single, ProjectFile)
	}
	var warnings []assembly.Finding
	if single != "" {
		var w *assembly.Finding
		spec, w = singleTemplate(single, opts.Environment)
		if w != nil {
			warnings = append(warnings, *w)
		}
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	rootReal, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	m := spec.manifest
	// What the project file says is checked first, where its lines are
	// known; what is written is checked again below.
	if _, err := m.Validate(writing); err != nil {
		return nil, spec.locate(err)
	}
	fsroot, err := os.OpenRoot(rootReal)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProject, err)
	}
	p := &Plan{Dir: dir, Source: spec.file, Manifest: m, root: fsroot,
		writer:  assembly.NewWriter(assembly.WriterOptions{ModTime: opts.ModTime, Workers: opts.Workers, Progress: opts.Progress, Sealer: opts.Sealer}),
		sources: map[string]string{}, bodies: map[string][]byte{}}
	if abs, err := filepath.Abs(spec.file); err == nil {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			p.inputs = append(p.inputs, real)
		}
	}
	b := &builder{plan: p, spec: spec, root: root, rootReal: rootReal, opts: opts}
	for _, id := range m.IDs() {
		if err := b.droplet(id); err != nil {
			return nil, err
		}
	}
	if err := b.schemaError(); err != nil {
		return nil, err
	}
	if err := b.checkOutputs(); err != nil {
		return nil, err
	}
	if len(b.missing) > 0 {
		return nil, errors.Join(b.missing...)
	}
	if err := p.addProvenance(opts, spec.file, p.fileDependencies()); err != nil {
		return nil, err
	}
	rep, err := p.finish()
	if err != nil {
		return nil, spec.locate(err)
	}
	p.Warnings = append(append(warnings, rep.Warnings()...), b.schemaWarnings...)
	return p, nil
}

// finish adds manifest.json to the plan and checks what Write will write:
// the verdict every command gives, so a build never writes an assembly
// that sign, verify or inspect refuses. It sets and returns p.Report.
func (p *Plan) finish() (*assembly.Report, error) {
	body, err := p.Manifest.Marshal()
	if err != nil {
		return nil, err
	}
	if err := p.writer.AddBytes(assembly.ManifestName, body); err != nil {
		return nil, err
	}
	files := assembly.NewFileSet()
	for _, name := range p.writer.Names() {
		files.Add(name, -1)
	}
	files.Add(assembly.ManifestName, int64(len(body)))
	rep, err := assembly.Check(body, files, writing)
	if err != nil {
		return nil, err
	}
	p.Report = rep
	return rep, nil
}

// writing is how a build checks what it writes: the property tables of the
// known droplet kinds and unknown keys are errors (see assembly.Rules).
var writing = assembly.CheckOptions{Writing: true}

type builder struct {
	plan           *Plan
	spec           *projectSpec
	root, rootReal string
	opts           BuildOptions
	missing        []error // with Strict: what has no value
	schemaFindings []schema.Finding
	schemaWarnings []assembly.Finding
	outputs        map[string]templateOutputs // stack droplet -> its template's Outputs
	assetBucket    string                     // the bucket of the last assetSet
	assetIDs       map[string]string          // environment, bucket, key -> the file droplet (addAssets)
}

func (b *builder) errAt(id, field string, err error) error {
	line, col := b.spec.pos.find(id, field)
	return &ProjectError{File: b.spec.file, Line: line, Column: col, Droplet: id, Field: field, Err: err}
}

func (b *builder) droplet(id string) error {
	d := b.plan.Manifest.Droplets[id]
	sp, err := droplets.ParseSpecifier(d.Type)
	if err != nil {
		return b.errAt(id, "type", err)
	}
	kind, ok := droplets.Lookup(sp)
	if !ok {
		return nil
	}
	for _, prop := range kind.Properties {
		if prop.Path == 0 {
			continue
		}
		v, ok := d.Properties[prop.Name].(string)
		if !ok {
			continue
		}
		field := "properties." + prop.Name
		name, real, err := b.resolve(v, prop.Path)
		if err != nil {
			return b.errAt(id, field, err)
		}
		d.Properties[prop.Name] = name
		b.plan.inputs = append(b.plan.inputs, real)
		if prop.Path == droplets.PathDirectory {
			b.plan.dirs = append(b.plan.dirs, real)
			if err := b.addDirectory(name, real); err != nil {
				return b.errAt(id, field, err)
			}
			continue
		}
		var body []byte
		if pk := packerFor(kind.Type, prop.Name); pk != nil {
			// Packers see paths relative to the working folder, so what
			// they write (a template's SourceMap) does not depend on
			// where the project lies.
			addFile := func(rel string, body []byte) error {
				return b.add(path.Join(path.Dir(name), rel), "", body, "packaged "+real+" ("+rel+")")
			}
			read := func(file string) {
				b.plan.inputs = append(b.plan.inputs, file)
				b.plan.read = append(b.plan.read, file)
			}
			var set *artifacts.Set
			if prop.Template {
				if set, err = b.assetSet(read, d.Environment); err != nil {
					return b.errAt(id, field, err)
				}
			}
			if body, err = pk(relWD(real), PackageOptions{Root: relWD(b.rootReal), Properties: d.Properties, AddFile: addFile, Read: read, Assets: set}); err != nil {
				if errors.Is(err, artifacts.ErrOutsideProject) {
					err = also(err, ErrOutsideProject)
				}
				return b.errAt(id, field, err)
			}
			if set != nil {
				if err := b.addAssets(id, d, set); err != nil {
					return b.errAt(id, field, err)
				}
			}
		}
		if body == nil {
			err = b.add(name, real, nil, "file "+real)
		} else {
			err = b.add(name, "", body, "packaged "+real)
		}
		if err != nil {
			return b.errAt(id, field, err)
		}
		if prop.Template {
			if body == nil {
				if body, err = b.readFile(real); err != nil {
					return b.errAt(id, field, err)
				}
				if err := nodeLimit(real, body); err != nil {
					return b.errAt(id, field, err)
				}
			}
			if err := b.checkSchemas(id, field, v, real, body); err != nil {
				return b.errAt(id, field, err)
			}
			if err := b.template(id, d, kind, name, body); err != nil {
				return err
			}
		}
	}
	return nil
}

// add adds an entry once; the same name from another source is an error.
func (b *builder) add(name, file string, body []byte, what string) error {
	if prev, ok := b.plan.sources[name]; ok {
		if prev == what {
			// The same file packaged again (by another droplet) must come
			// out the same: a blueprint with other variables does not.
			if body != nil && !bytes.Equal(body, b.plan.bodies[name]) {
				return fmt.Errorf("%w: %s is packaged differently for another droplet (other variables?) but both copies would be %q in the archive: give such values at deploy time, or use a copy of the file per droplet", ErrProject, relWD(strings.TrimPrefix(what, "packaged ")), name)
			}
			return nil
		}
		return fmt.Errorf("%w: archive path %q would hold both the %s and the %s", ErrProject, name, prev, what)
	}
	b.plan.sources[name] = what
	if body != nil {
		b.plan.bodies[name] = body
		return b.plan.writer.AddBytes(name, body)
	}
	return b.addProjectFile(name, file)
}

// openChecked opens the project file real (a real path inside the
// project's real folder) through the project's os.Root, so that no
// symbolic link can lead the read outside the project, and checks on the
// handle that it is a regular file.
func (b *builder) openChecked(real string) (*os.File, os.FileInfo, error) {
	rel, err := filepath.Rel(b.rootReal, real)
	if err != nil || !filepath.IsLocal(rel) {
		return nil, nil, fmt.Errorf("%w: %s lies outside the project", ErrOutsideProject, real)
	}
	// The one rule for a path a project names (internal/projectfs).
	f, err := projectfs.Open(b.plan.root, rel)
	switch {
	case errors.Is(err, projectfs.ErrOutside):
		return nil, nil, fmt.Errorf("%w: %s now leads outside the project (a symlink?)", ErrOutsideProject, relWD(real))
	case errors.Is(err, projectfs.ErrNotRegular):
		return nil, nil, fmt.Errorf("%w: %s is not a regular file", ErrProject, relWD(real))
	case err != nil:
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// readFile reads a project file through the project's os.Root.
func (b *builder) readFile(real string) ([]byte, error) {
	f, _, err := b.openChecked(real)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// addProjectFile adds the project file real as the entry name. It is
// checked now, on a handle; when the archive is written it is opened again
// through the project's os.Root and must be the same file (ErrChanged
// otherwise): what was checked is what is shipped.
func (b *builder) addProjectFile(name, real string) error {
	f, checked, err := b.openChecked(real)
	if err != nil {
		return err
	}
	f.Close()
	open := func() (io.ReadCloser, error) {
		f, st, err := b.openChecked(real)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrChanged, name, err)
		}
		if !os.SameFile(st, checked) {
			f.Close()
			return nil, fmt.Errorf("%w: %s was replaced since it was checked: build again", ErrChanged, name)
		}
		return f, nil
	}
	return b.plan.writer.AddOpener(name, checked.Size(), open)
}

// resolve checks a project path and returns its archive name (the cleaned
// slash path) and the real file it names.
func (b *builder) resolve(v string, kind droplets.PathKind) (name, real string, err error) {
	switch {
	case v == "":
		return "", "", fmt.Errorf("%w: empty path", ErrProject)
	case strings.Contains(v, "${"):
		return "", "", fmt.Errorf("%w: %q: a path must name a file in the project, not a reference", ErrProject, v)
	case strings.Contains(v, `\`):
		return "", "", fmt.Errorf("%w: %q: write paths with / separators", ErrProject, v)
	case path.IsAbs(v) || filepath.IsAbs(v) || filepath.VolumeName(v) != "":
		return "", "", fmt.Errorf("%w: %q is absolute: write it relative to the project folder", ErrOutsideProject, v)
	}
	name = path.Clean(v)
	if name == ".." || strings.HasPrefix(name, "../") {
		return "", "", fmt.Errorf("%w: %q leaves the project folder: keep assets inside it", ErrOutsideProject, v)
	}
	if name == "." {
		return "", "", fmt.Errorf("%w: %q: name a file or folder inside the project", ErrProject, v)
	}
	if err := assembly.CheckName(name); err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrProject, err)
	}
	if name == assembly.ManifestName || name == assembly.SignatureName {
		return "", "", fmt.Errorf("%w: %q is reserved at the root of an assembly: move the file into a folder", ErrProject, name)
	}
	full := filepath.Join(b.root, filepath.FromSlash(name))
	real, err = filepath.EvalSymlinks(full)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", "", also(fmt.Errorf("%w: no such %s in the project: %s", fs.ErrNotExist, kindWord(kind), name), assembly.ErrMissingFile)
		}
		return "", "", fmt.Errorf("%w: %s: can not follow its symlinks (%v): point them at a file inside the project", ErrProject, name, linkErr(err))
	}
	if err := b.inside(v, real); err != nil {
		return "", "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", "", err
	}
	if kind == droplets.PathDirectory && !st.IsDir() {
		return "", "", fmt.Errorf("%w: %s is not a folder", ErrProject, name)
	}
	if kind == droplets.PathFile && !st.Mode().IsRegular() {
		return "", "", fmt.Errorf("%w: %s is not a regular file", ErrProject, name)
	}
	return name, real, nil
}

// linkErr says why filepath.EvalSymlinks failed, without its operation
// and absolute path (the message names the project path already).
func linkErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	if strings.Contains(err.Error(), "too many links") {
		return "a symlink loop"
	}
	return err.Error()
}

// relWD returns p relative to the working folder when it can.
func relWD(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if wd, err = filepath.EvalSymlinks(wd); err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil {
		return rel
	}
	return p
}

func kindWord(k droplets.PathKind) string {
	if k == droplets.PathDirectory {
		return "folder"
	}
	return "file"
}

// inside checks that the real path lies in the project's real folder.
func (b *builder) inside(v, real string) error {
	rel, err := filepath.Rel(b.rootReal, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%w: %q resolves to %s, outside the project (a symlink?): keep assets inside the project folder", ErrOutsideProject, v, real)
	}
	return nil
}

// addDirectory adds every file under the folder real as name/....
func (b *builder) addDirectory(name, real string) error {
	count := 0
	err := filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(real, p)
		if err != nil {
			return err
		}
		entry := path.Join(name, filepath.ToSlash(rel))
		src := p
		switch {
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			if src, err = filepath.EvalSymlinks(p); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return fmt.Errorf("%w: %s is a broken symlink: remove it or point it at a file inside the project", ErrProject, entry)
				}
				return fmt.Errorf("%w: %s: can not follow its symlinks (%v): point them at a file inside the project", ErrProject, entry, linkErr(err))
			}
			if err := b.inside(entry, src); err != nil {
				return err
			}
			st, err := os.Stat(src)
			if err != nil {
				return err
			}
			if !st.Mode().IsRegular() {
				return fmt.Errorf("%w: %s is a symlink to a folder or special file: copy the files instead", ErrProject, entry)
			}
		case !d.Type().IsRegular():
			return fmt.Errorf("%w: %s is not a regular file", ErrProject, entry)
		}
		count++
		return b.add(entry, src, nil, "file "+src)
	})
	if err != nil {
		return err
	}
	if count == 0 {
		return fmt.Errorf("%w: folder %s holds no files (an assembly cannot hold an empty folder)", ErrProject, name)
	}
	return nil
}

// templateExts are the extensions a single-template project may use.
var templateExts = []string{".yaml", ".yml", ".json", ".template"}

// findTemplate returns the one template in dir.
func findTemplate(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var found []string
	for _, e := range ents {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		for _, t := range templateExts {
			if ext == t && e.Type().IsRegular() {
				found = append(found, e.Name())
			}
		}
	}
	sort.Strings(found)
	switch len(found) {
	case 1:
		return filepath.Join(dir, found[0]), nil
	case 0:
		return "", fmt.Errorf("%w: %s holds no %s and no template: add %s, or build a template file", ErrProject, dir, ProjectFile, ProjectFile)
	}
	return "", fmt.Errorf("%w: %s holds no %s and %d templates (%s): add %s, or build one template file", ErrProject, dir, ProjectFile, len(found), strings.Join(found, ", "), ProjectFile)
}

var badIDChars = regexp.MustCompile(`[^A-Za-z0-9-]+`)

// singleTemplate makes the project of one template: one stack droplet
// named after the file.
func singleTemplate(file, env string) (*projectSpec, *assembly.Finding) {
	base := filepath.Base(file)
	id := badIDChars.ReplaceAllString(strings.TrimSuffix(base, filepath.Ext(base)), "-")
	id = strings.Trim(id, "-")
	if id == "" {
		id = "Stack"
	}
	stackName := id
	if c := stackName[0]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
		stackName = "stack-" + stackName
	}
	var warn *assembly.Finding
	if env == "" {
		env = "aws://" + assembly.UnknownAccount + "/" + assembly.UnknownRegion
		warn = &assembly.Finding{Severity: assembly.Warning, Droplet: id, Field: "environment", Message: "no environment given: built for " + env + " (choose one with BuildOptions.Environment)"}
	}
	m := &assembly.Manifest{Schema: assembly.SchemaVersion, Droplets: map[string]*assembly.Droplet{
		id: {Type: droplets.StackType, Environment: env, Properties: map[string]any{"stackName": stackName, "template": base}},
	}}
	return &projectSpec{file: file, manifest: m, pos: positions{}}, warn
}
