package artifacts

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/packager/cfn"
)

// BucketParameter is the template parameter through which a packaged
// template built by assemble build names the asset bucket: the stack
// droplet gives it the value ${Asset.bucketName} of one of its file
// droplets, so the bucket may be the output of a stack deployed first.
const BucketParameter = "AssembleAssetBucket"

// Options configures a Set.
type Options struct {
	// Root is the project folder: no artifact may lie outside it, nor a
	// symbolic link lead out of it.
	Root string
	// Parameter makes templates take the bucket as the parameter
	// BucketParameter (assemble build).
	Parameter bool
	// NoBucket, when not empty, says that no bucket is set: the first
	// artifact fails (cfn.ErrNoArtifacts, the one sentinel of that cause)
	// with this text as the fix.
	NoBucket string
	// Bucket is the bucket's name when it is known (a name, not a
	// reference): assemble package writes it into templates (with
	// Parameter false), and template Metadata needs it either way.
	Bucket string
	// KeyPrefix is put before every object key, joined with "/".
	KeyPrefix string
	// NoSourceMap and Read are passed to cfn.Package for nested templates.
	NoSourceMap bool
	Read        func(path string)
	// Region is the region of the bucket, when known: the URL of an
	// AWS::Serverless::Application's template names it (see
	// Ref.PlainHTTPSURL).
	Region string
	// OutputDir is the folder assemble package writes into: the packaged
	// template, and the artifacts at OutputDir/KEY. No zip holds it, so a
	// run never packages the previous run's output: a folder zipped that
	// holds it leaves it out (and the key prefix's folder within it), and a
	// folder zipped that is it (or is the key prefix's folder) is refused.
	OutputDir string
}

// Pos is a place in a template: where an artifact path is written.
type Pos struct {
	File         string
	Line, Column int
	// Name names what uses the artifact there: the resource and property
	// ("Fn-Code"), see UseName. An asset is named after its first use.
	Name string
}

func (p Pos) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
	}
	return p.File
}

// An Asset is one artifact to upload: a zip made from a folder (or from a
// file Lambda needs zipped), a packaged nested template, or a project file
// shipped as it is. Equal contents are one Asset.
type Asset struct {
	// Use names what uses it (its first use: "Fn-Code",
	// "Nested/ChildFn-Code"), unique in the Set: a name that stays when
	// the content changes, for the file droplet. See UseName.
	Use string
	// Name is its suggested path in the assembly: assets/USE.ext.
	Name string
	// Key is the object key: KeyPrefix/SHA256 (.template for templates).
	Key string
	// SHA256 is the hex digest of the content; Size its length.
	SHA256 string
	Size   int64
	// Source is the project path it was made from, and At where it was
	// first named.
	Source string
	At     Pos
	// Template marks a packaged nested template, Folder a zip made from a
	// folder.
	Template bool
	Folder   bool

	data []byte    // the content, when made by the build
	sum  *[32]byte // its SHA-256, when known already
	rel  string    // else the file under the Root, read again by Open
	set  *Set
}

// Data returns the content when the build made it (a zip, a template),
// or nil for a project file shipped as it is (read it with Open).
func (a *Asset) Data() []byte { return a.data }

// Open streams the content. A project file is read again through the
// project's os.Root and must still have the size and digest it had when
// it was added (ErrChanged otherwise): the key named in the template is
// the content's digest.
func (a *Asset) Open() (io.ReadCloser, error) {
	if a.data != nil {
		return io.NopCloser(bytes.NewReader(a.data)), nil
	}
	f, err := a.set.root.Open(a.rel)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrChanged, a.Source, err)
	}
	return &checkedReader{f: f, h: sha256.New(), want: a.SHA256, left: a.Size, name: a.Source}, nil
}

type checkedReader struct {
	f    *os.File
	h    hash.Hash
	want string
	left int64
	name string
}

func (c *checkedReader) Read(p []byte) (int, error) {
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.f.Read(p)
	c.h.Write(p[:n])
	c.left -= int64(n)
	if c.left < 0 {
		return n, fmt.Errorf("%w: %s grew since it was packaged: build again", ErrChanged, c.name)
	}
	if err == io.EOF && (c.left != 0 || hex.EncodeToString(c.h.Sum(nil)) != c.want) {
		return n, fmt.Errorf("%w: %s changed since it was packaged: build again", ErrChanged, c.name)
	}
	return n, err
}

func (c *checkedReader) Close() error { return c.f.Close() }

// A Set collects the artifacts of the templates of one stack (a template,
// its modules and its nested templates).
type Set struct {
	opts        Options
	root        *os.Root
	rootReal    string
	assets      []*Asset
	byHash      map[string]*Asset
	total       int64
	chain       []Pos    // nested templates being packaged, outermost first
	files       []string // their real paths
	takesBucket bool
	keyExt      string // AddJoined's extension, while it adds
	pre         *prefetcher
	joined      bool          // AddJoined is adding
	skip        []os.FileInfo // the output folders no zip holds (Options.OutputDir)
	scope       []string      // the nested stack resources being packaged, outermost first
	uses        map[string]bool
}

// keyPrefixRE is what an object key prefix may hold: S3's safe characters.
var keyPrefixRE = regexp.MustCompile(`^[A-Za-z0-9!_.*'()/-]*$`)

// CheckKeyPrefix checks an object key prefix: S3's safe characters only
// (letters, digits and !_.*'()/-), at most 512 bytes.
func CheckKeyPrefix(p string) error {
	if !keyPrefixRE.MatchString(p) || len(p) > 512 {
		return fmt.Errorf("%w: key prefix %q: use at most 512 letters, digits and !_.*'()/- only", ErrArtifact, p)
	}
	return nil
}

// bucketNameRE is an S3 bucket name (the rules for new buckets: 3 to 63
// lower-case letters, digits, dots and hyphens, a letter or digit at each
// end).
var bucketNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// regionRE is an AWS region name.
var regionRE = regexp.MustCompile(`^[a-z]+(-[a-z]+)*-[0-9]+$`)

// CheckBucket checks an asset bucket's name: the one rule of assemble
// package --asset-bucket and of assemble build's bucket when it is a name.
func CheckBucket(name string) error {
	if !bucketNameRE.MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("%q is %w", name, ErrBucketName)
	}
	return nil
}

// New returns an empty Set for the project folder opts.Root. A Bucket
// that is not an S3 bucket name (CheckBucket) or a KeyPrefix that
// CheckKeyPrefix refuses is an error.
func New(opts Options) (*Set, error) {
	if err := CheckKeyPrefix(opts.KeyPrefix); err != nil {
		return nil, err
	}
	if opts.Bucket != "" {
		if err := CheckBucket(opts.Bucket); err != nil {
			return nil, err
		}
	}
	if opts.Region != "" && !regionRE.MatchString(opts.Region) {
		return nil, fmt.Errorf("%w: region %q is not a region name like eu-west-1", ErrArtifact, opts.Region)
	}
	opts.KeyPrefix = strings.Trim(opts.KeyPrefix, "/")
	abs, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, err
	}
	s := &Set{opts: opts, root: root, rootReal: real, byHash: map[string]*Asset{}, uses: map[string]bool{}}
	if opts.OutputDir != "" {
		// What is not there yet holds nothing to leave out.
		for _, d := range []string{opts.OutputDir, filepath.Join(opts.OutputDir, filepath.FromSlash(opts.KeyPrefix))} {
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				s.skip = append(s.skip, st)
			}
		}
	}
	return s, nil
}

// checkNotOutput refuses to zip the folder rel when it is an output
// folder (Options.OutputDir).
func (s *Set) checkNotOutput(rel, local string) error {
	st, err := s.root.Stat(rel)
	if err != nil {
		return nil // collect reports it
	}
	for _, o := range s.skip {
		if os.SameFile(o, st) {
			return fmt.Errorf("%w: %q is the folder the output is written to, so each run would zip the previous run's output: write -o into a folder of its own (-o out/packaged.yaml), which zips leave out", ErrArtifact, local)
		}
	}
	return nil
}

// Close releases the project folder. Assets of project files can not be
// opened after it.
func (s *Set) Close() error { return s.root.Close() }

// RealPath returns the real path of an asset's source in the project.
func (s *Set) RealPath(a *Asset) string {
	return filepath.Join(s.rootReal, filepath.FromSlash(a.Source))
}

// HasBucket tells whether artifacts can be added: a bucket (a name or a
// parameter) is set.
func (s *Set) HasBucket() bool {
	return s.opts.NoBucket == "" && (s.opts.Parameter || s.opts.Bucket != "")
}

// BucketParameter returns the parameter the Set's template values name
// (BucketParameter with Options.Parameter), or "" when they name the
// bucket itself.
func (s *Set) BucketParameter() string {
	if s.opts.Parameter {
		return BucketParameter
	}
	return ""
}

// TakesBucket tells whether the last top template exported declares
// BucketParameter.
func (s *Set) TakesBucket() bool { return s.takesBucket }

// Assets lists the artifacts added, in the order first added.
func (s *Set) Assets() []*Asset { return append([]*Asset(nil), s.assets...) }

// A Ref is an added artifact as a template names it.
type Ref struct {
	Asset *Asset
	set   *Set
}

// Bucket is the bucket: {Ref: AssembleAssetBucket}, or the name.
func (r Ref) Bucket() *yaml.Node {
	if r.set.opts.Parameter {
		return fnNode("Ref", str(BucketParameter))
	}
	return str(r.set.opts.Bucket)
}

// Key is the object key, a string.
func (r Ref) Key() *yaml.Node { return str(r.Asset.Key) }

// S3URI is s3://bucket/key, a Fn::Sub when the bucket is a parameter.
func (r Ref) S3URI() *yaml.Node {
	if r.set.opts.Parameter {
		return fnNode("Fn::Sub", str("s3://${"+BucketParameter+"}/"+r.Asset.Key))
	}
	return str("s3://" + r.set.opts.Bucket + "/" + r.Asset.Key)
}

// HTTPSURL is the path-style URL https://s3.REGION.URLSUFFIX/bucket/key
// (as aws-cli writes a TemplateURL), a Fn::Sub of AWS::Region and
// AWS::URLSuffix so it holds in every partition.
func (r Ref) HTTPSURL() *yaml.Node {
	b := r.set.opts.Bucket
	if r.set.opts.Parameter {
		b = "${" + BucketParameter + "}"
	}
	return fnNode("Fn::Sub", str("https://s3.${AWS::Region}.${AWS::URLSuffix}/"+b+"/"+r.Asset.Key))
}

// PlainHTTPSURL is the path-style URL https://s3.REGION.SUFFIX/BUCKET/KEY
// as a string, with the bucket's name and Options.Region, as aws-cli
// writes it: for AWS::Serverless::Application's Location, which the SAM
// transform reads before any intrinsic function or parameter is resolved
// (a mapping there is {ApplicationId, SemanticVersion}). checkPlainURL
// says whether it can be written.
func (r Ref) PlainHTTPSURL() string {
	return "https://s3." + r.set.opts.Region + "." + urlSuffix(r.set.opts.Region) + "/" + r.set.opts.Bucket + "/" + r.Asset.Key
}

// checkPlainURL refuses, at at, a value PlainHTTPSURL can not write: the
// bucket is a reference or the region is unknown.
func (s *Set) checkPlainURL(at Pos) error {
	const why = "AWS::Serverless::Application's Location must be a URL string: the SAM transform reads it before parameters and intrinsic functions resolve"
	switch {
	case !s.HasBucket():
		return nil // resolve reports it
	case s.opts.Bucket == "":
		return s.errAt(at, fmt.Errorf("%w: %s, and the asset bucket is a reference: name the bucket (assets: {bucketName: NAME}, or Options.Bucket), or use AWS::CloudFormation::Stack with TemplateURL", ErrArtifact, why))
	case s.opts.Region == "":
		return s.errAt(at, fmt.Errorf("%w: %s, and the region of the bucket is not known: %s", ErrArtifact, why, s.regionHint()))
	}
	return nil
}

func (s *Set) regionHint() string {
	if s.opts.Parameter {
		return "give the droplet an environment with its region (environment: aws://ACCOUNT/REGION, or BuildOptions.Environment), or use AWS::CloudFormation::Stack with TemplateURL"
	}
	return "give the region with Options.Region (or AWS_REGION), as aws cloudformation package takes its region"
}

// urlSuffix is the domain of S3 endpoints in region's partition.
func urlSuffix(region string) string {
	if strings.HasPrefix(region, "cn-") {
		return "amazonaws.com.cn"
	}
	return "amazonaws.com"
}

// BucketKeyMap is the mapping {bucketProp: Bucket, keyProp: Key}.
func (r Ref) BucketKeyMap(bucketProp, keyProp string) *yaml.Node {
	return mapN(str(bucketProp), r.Bucket(), str(keyProp), r.Key())
}

// Add adds the artifact at local, a path relative to the folder dir (the
// folder of the template or module that names it), named at at. A folder
// is zipped; a file is zipped when zip is true and it is not already a
// zip, and shipped as it is otherwise (a zip is checked first: see
// checkZip). It fails, naming at and the fix, for a path outside the
// project, a missing path, or a file or folder over the bounds.
func (s *Set) Add(dir, local string, zip bool, at Pos) (Ref, error) {
	return s.add(dir, local, zip, false, at)
}

// AddFile is Add for a property that takes one file (an AWS::Include
// Location): a folder is an error.
func (s *Set) AddFile(dir, local string, at Pos) (Ref, error) {
	return s.add(dir, local, false, true, at)
}

// AddJoined is Add for a path already joined to the folder of the file
// that names it (absolute, or relative to the working folder), as rain's
// !Rain::S3 gives it; ext, when not empty, is put after the object key
// (rain's Extension option, without the dot). The same content added
// again keeps the key it got first.
func (s *Set) AddJoined(path string, zip bool, ext string, at Pos) (Ref, error) {
	if ext != "" && !extRE.MatchString("."+strings.ToLower(ext)) {
		return Ref{}, s.errAt(at, fmt.Errorf("%w: extension %q: use up to 10 letters and digits", ErrArtifact, ext))
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if base == "" || base == "." || base == ".." {
		dir, base = path, "."
	}
	s.keyExt, s.joined = ext, true
	defer func() { s.keyExt, s.joined = "", false }()
	return s.add(dir, base, zip, false, at)
}

// relativeTo says what a missing path was resolved against.
func (s *Set) relativeTo(local, absDir string) string {
	if s.joined {
		return ""
	}
	return fmt.Sprintf(" %q, which is relative to %s (the template's folder, for a module's resources too, as aws-cli resolves them)", local, relWD(absDir))
}

func (s *Set) errAt(at Pos, err error) error { return &Error{At: at, Err: err} }

// resolve checks local and returns its path under the root, slash
// separated, and what it is.
func (s *Set) resolve(dir, local string, at Pos) (string, fs.FileInfo, error) {
	if !s.HasBucket() {
		hint := s.opts.NoBucket
		if hint == "" {
			hint = "name a bucket for the artifacts"
		}
		return "", nil, s.errAt(at, fmt.Errorf("%w: %q is a local artifact, to be uploaded to S3, and no bucket is set: %s", cfn.ErrNoArtifacts, local, hint))
	}
	switch {
	case local == "":
		return "", nil, s.errAt(at, fmt.Errorf("%w: empty path: name a file or folder of the project", ErrArtifact))
	case filepath.IsAbs(local) || path.IsAbs(local) || filepath.VolumeName(local) != "":
		return "", nil, s.errAt(at, fmt.Errorf("%w: %q is absolute: write it relative to the template's folder", ErrOutsideProject, local))
	case strings.Contains(local, `\`):
		return "", nil, s.errAt(at, fmt.Errorf("%w: %q: write paths with / separators", ErrArtifact, local))
	}
	absDir, err := filepath.Abs(dir)
	if err == nil {
		absDir, err = filepath.EvalSymlinks(absDir)
	}
	if err != nil {
		return "", nil, s.errAt(at, fmt.Errorf("%w: %v", ErrArtifact, err))
	}
	full := filepath.Join(absDir, filepath.FromSlash(local))
	rel, err := filepath.Rel(s.rootReal, full)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", nil, s.errAt(at, fmt.Errorf("%w: %q leaves the project folder %s: keep artifacts inside it", ErrOutsideProject, local, s.opts.Root))
	}
	rel = filepath.ToSlash(rel)
	st, err := s.root.Stat(rel)
	if err != nil {
		var pe *fs.PathError
		switch {
		case errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes"):
			return "", nil, s.errAt(at, fmt.Errorf("%w: %q leads out of the project through a symbolic link: copy what it points at into the project", ErrOutsideProject, local))
		case errors.Is(err, fs.ErrNotExist):
			return "", nil, s.errAt(at, fmt.Errorf("%w: %w: no file or folder %s in the project: fix the path%s", ErrArtifact, fs.ErrNotExist, rel, s.relativeTo(local, absDir)))
		}
		return "", nil, s.errAt(at, fmt.Errorf("%w: %s: %v", ErrArtifact, local, err))
	}
	return rel, st, nil
}

func (s *Set) add(dir, local string, zip, fileOnly bool, at Pos) (Ref, error) {
	rel, st, err := s.resolve(dir, local, at)
	if err != nil {
		return Ref{}, err
	}
	display := rel
	var a *Asset
	switch {
	case st.IsDir():
		if fileOnly {
			return Ref{}, s.errAt(at, fmt.Errorf("%w: %s is a folder and this property takes one file: name the file", ErrArtifact, rel))
		}
		if data, sum, ok := s.pre.take(rel, true); ok {
			a = &Asset{data: data, sum: &sum, Source: rel, Folder: true}
			break
		}
		if err := s.checkNotOutput(rel, local); err != nil {
			return Ref{}, s.errAt(at, err)
		}
		files, err := collect(s.root, rel, display, s.skip...)
		if err != nil {
			return Ref{}, s.errAt(at, err)
		}
		if len(files) == 0 {
			return Ref{}, s.errAt(at, fmt.Errorf("%w: folder %s holds no files: an empty zip deploys nothing", ErrArtifact, rel))
		}
		data, err := makeZip(s.root, files)
		if err != nil {
			return Ref{}, s.errAt(at, err)
		}
		a = &Asset{data: data, Source: rel, Folder: true}
	case st.Mode().IsRegular():
		if st.Size() > artifactLimit {
			return Ref{}, s.errAt(at, fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, rel, artifactLimit))
		}
		f, err := s.root.Open(rel)
		if err != nil {
			return Ref{}, s.errAt(at, fmt.Errorf("%w: %s: %v", ErrArtifact, rel, err))
		}
		isZ := isZipFile(f, st.Size())
		if isZ {
			if err := checkZip(f, st.Size(), rel); err != nil {
				f.Close()
				return Ref{}, s.errAt(at, err)
			}
		}
		if zip && !isZ {
			f.Close()
			if data, sum, ok := s.pre.take(rel, false); ok {
				a = &Asset{data: data, sum: &sum, Source: rel}
				break
			}
			name := path.Base(rel)
			data, err := makeZip(s.root, []zipFile{{name: name, rel: rel, exec: st.Mode()&0o111 != 0, size: st.Size()}})
			if err != nil {
				return Ref{}, s.errAt(at, err)
			}
			a = &Asset{data: data, Source: rel}
			break
		}
		h := sha256.New()
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			f.Close()
			return Ref{}, err
		}
		size, err := io.Copy(h, io.LimitReader(f, artifactLimit+1))
		f.Close()
		if err != nil {
			return Ref{}, s.errAt(at, fmt.Errorf("%w: %s: %v", ErrArtifact, rel, err))
		}
		a = &Asset{rel: rel, Source: rel, Size: size, SHA256: hex.EncodeToString(h.Sum(nil))}
	default:
		return Ref{}, s.errAt(at, fmt.Errorf("%w: %s is not a regular file or folder", ErrArtifact, rel))
	}
	ext := ".zip"
	if a.data == nil {
		ext = fileExt(rel)
	}
	return s.put(a, at, ext, "")
}

// put names an asset and adds it, or returns the one of equal content.
func (s *Set) put(a *Asset, at Pos, ext, keyExt string) (Ref, error) {
	if a.data != nil {
		sum := a.sum
		if sum == nil {
			h := sha256.Sum256(a.data)
			sum = &h
		}
		a.sum = nil
		a.SHA256, a.Size = hex.EncodeToString(sum[:]), int64(len(a.data))
	}
	if prev := s.byHash[a.SHA256]; prev != nil {
		return Ref{Asset: prev, set: s}, nil
	}
	use := at.Name
	if use == "" {
		// rain's !Rain::S3: no resource is known, the path is
		use = UseName(s.scope, "Rain", []string{a.Source})
	}
	for n, base := 2, use; s.uses[use]; n++ {
		use = base + "-" + strconv.Itoa(n)
	}
	s.uses[use] = true
	a.Use, a.Name = use, "assets/"+use+ext
	if a.data != nil {
		s.total += a.Size
		if s.total > MaxTotalBytes {
			return Ref{}, s.errAt(at, fmt.Errorf("%w: the zips and templates of this stack add up to more than %d bytes", ErrTooLarge, int64(MaxTotalBytes)))
		}
	}
	if s.keyExt != "" {
		keyExt = "." + s.keyExt
	}
	a.Key = a.SHA256 + keyExt
	if s.opts.KeyPrefix != "" {
		a.Key = s.opts.KeyPrefix + "/" + a.Key
	}
	a.At, a.set = at, s
	s.byHash[a.SHA256] = a
	s.assets = append(s.assets, a)
	return Ref{Asset: a, set: s}, nil
}

var extRE = regexp.MustCompile(`^\.[a-z0-9]{1,10}$`)

// UseName names an artifact after what uses it: the user (a resource's
// logical ID, "Metadata", "Globals.Function", ...) under the nested stack
// resources scope, and the property path: "Fn-Code",
// "Nested/ChildFn-Code", "Glue-CommandScriptLocation". Only the characters
// a droplet's logical ID may hold are kept (letters, digits, +/_-).
func UseName(scope []string, user string, prop []string) string {
	var b strings.Builder
	for _, sc := range scope {
		b.WriteString(idChars(sc) + "/")
	}
	b.WriteString(idChars(user))
	b.WriteString("-")
	for _, p := range prop {
		b.WriteString(idChars(p))
	}
	n := b.String()
	if len(n) > maxUseName {
		n = n[:maxUseName]
	}
	return n
}

// maxUseName leaves room for a suffix within a logical ID's 256 bytes.
const maxUseName = 200

func idChars(s string) string {
	return strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("+/_-", r)) {
			return r
		}
		return -1
	}, s)
}

// fileExt keeps a shipped file's extension in its assembly name when it
// is a plain one.
func fileExt(name string) string {
	e := strings.ToLower(path.Ext(name))
	if extRE.MatchString(e) {
		return e
	}
	return ""
}

// relWD returns p relative to the working folder when it can.
func relWD(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	if rel, err := filepath.Rel(wd, p); err == nil && rel == "." {
		return "."
	}
	return p
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func mapN(kv ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: kv}
}

func fnNode(name string, arg *yaml.Node) *yaml.Node { return mapN(str(name), arg) }
