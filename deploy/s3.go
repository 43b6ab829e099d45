package deploy

import (
	"archive/zip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"path"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	tmtypes "github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager/types"
	"golang.org/x/sync/errgroup"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
)

// Object metadata deploy sets on every object it uploads (S3 user
// metadata names cannot hold ":", so the tags' names use "-").
const (
	// MetaContentSHA256 is the hex SHA-256 of the object's content: a
	// rerun skips an object that holds it already.
	MetaContentSHA256 = "assemble-content-sha256"
	// MetaSHA256 is the .cloud file's hex SHA-256 (the stacks' TagSHA256).
	MetaSHA256 = "assemble-sha256"
	// MetaDroplet is the droplet's logical ID (TagDroplet).
	MetaDroplet = "assemble-droplet"
)

// An object is one S3 object a droplet uploads: its verified content,
// streamed (never held whole in memory).
type object struct {
	bucket, key string
	name        string // the file in the assembly ("" for a zip made here)
	size        int64
	sum         []byte   // SHA-256 of the content
	parts       [][]byte // SHA-256 of each part of its multipart upload
	// open reads the content again, checked again as it is read (a
	// file's reader fails at its end, with signing's sentinel, when the
	// bytes are not the signed ones).
	open    func() (io.ReadCloser, error)
	release func() error // frees a spool; nil for a file
}

// fileObject is the object of a file of the assembly. A first pass reads
// it through the verification, to its end, for its plain SHA-256: what
// S3 stores with it and what a rerun compares; the upload reads it again.
func fileObject(src *Source, bucket, key, name string) (*object, error) {
	rc, err := src.Open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	h := newPartHasher()
	n, err := io.Copy(h, rc)
	if err != nil {
		return nil, err
	}
	sum, parts := h.sums()
	return &object{bucket: bucket, key: key, name: name, size: n, sum: sum, parts: parts,
		open: func() (io.ReadCloser, error) { return src.Open(name) }}, nil
}

// spooledObject is the object of content made here, held in sp.
func spooledObject(bucket, key string, sp *spool) *object {
	return &object{bucket: bucket, key: key, size: sp.size, sum: sp.sum, parts: sp.parts,
		open: func() (io.ReadCloser, error) { return io.NopCloser(sp.reader()), nil }, release: sp.Close}
}

// releaseAll frees the objects' spools.
func releaseAll(objs []*object) {
	for _, o := range objs {
		if o.release != nil {
			o.release()
		}
	}
}

func (o *object) url() string { return "s3://" + o.bucket + "/" + o.key }

func (o *object) hexSum() string { return hex.EncodeToString(o.sum) }

// Uploads stream: an object below multipartThreshold goes in one
// PutObject, read whole (to the end of the verification) before its first
// byte is sent and carrying the first pass's SHA-256 as
// x-amz-checksum-sha256, so that S3 refuses a body that differs; a larger
// one goes in parts of partSize, uploadConcurrency at a time, and the
// upload is completed only after the last read, which fails (and the
// upload is aborted) when the bytes are not the signed ones. An upload
// holds at most uploadBuffer bytes (more only over S3's 10,000 parts, from
// 50 GB, where the parts must grow); all uploads of a run together at
// most uploadMemory.
const (
	partSize           = 5 << 20 // S3's smallest part
	multipartThreshold = partSize
	uploadConcurrency  = 2
	uploadBuffer       = partSize * (uploadConcurrency + 2)
	uploadMemory       = 64 << 20
)

// MaxObjectSize is the largest object deploy uploads: S3's limit for one
// object (5 TiB).
const MaxObjectSize = 5 << 40

// put uploads o unless S3 holds its bytes already; it reports whether it
// uploaded.
func (o *object) put(ctx context.Context, d *droplet) (bool, error) {
	st, _, err := o.compare(ctx, d.aws().s3, forDeploy)
	if err != nil {
		return false, err
	}
	if st == "" {
		return false, nil
	}
	if err := o.upload(ctx, d); err != nil {
		if apiCode(err) != "" {
			return false, fmt.Errorf("%w: s3 upload %s: %s", ErrUpload, o.url(), apiMessage(err))
		}
		// a read of the content failed (not the signed bytes), or ctx ended
		return false, fmt.Errorf("%w: %s: %w", ErrUpload, o.url(), err)
	}
	d.progress("uploaded %s (%d bytes)", o.url(), o.size)
	return true, nil
}

func (o *object) upload(ctx context.Context, d *droplet) error {
	weight := min(o.size, uploadBuffer)
	mem := d.run.uploadMemory()
	if err := mem.Acquire(ctx, weight); err != nil {
		return err
	}
	defer mem.Release(weight)
	ctype := mime.TypeByExtension(path.Ext(o.key))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	body, err := o.open()
	if err != nil {
		return err
	}
	defer body.Close()
	d.progress("uploading %s (%d bytes)", o.url(), o.size)
	in := &transfermanager.UploadObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.key), Body: body,
		ContentLength: aws.Int64(o.size), ContentType: aws.String(ctype), ChecksumAlgorithm: tmtypes.ChecksumAlgorithmSha256,
		Metadata: map[string]string{MetaContentSHA256: o.hexSum(), MetaSHA256: d.run.src.SHA256.Hex(), MetaDroplet: d.id}}
	if o.size < multipartThreshold {
		in.ChecksumSHA256 = aws.String(base64.StdEncoding.EncodeToString(o.sum))
	}
	_, err = d.aws().uploader.UploadObject(ctx, in)
	return err
}

// objectConcurrency is how many objects of one droplet go at once.
const objectConcurrency = 8

// putAll uploads the objects that differ, several at a time; the actions
// are recorded in the objects' order.
func putAll(ctx context.Context, d *droplet, objs []*object) (Outcome, error) {
	uploaded := make([]bool, len(objs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(objectConcurrency)
	for i, o := range objs {
		g.Go(func() error {
			up, err := o.put(gctx, d)
			uploaded[i] = up
			return err
		})
	}
	err := g.Wait()
	n := 0
	for i, o := range objs {
		if uploaded[i] {
			n++
			d.res.action("uploaded %s (%d bytes)", o.url(), o.size)
		}
	}
	if err != nil {
		return "", err
	}
	if n == 0 {
		d.res.action("%s already hold these bytes", plural(len(objs), "object"))
		return Unchanged, nil
	}
	return Uploaded, nil
}

// planAll records which objects would be uploaded.
func planAll(ctx context.Context, d *droplet, objs []*object) error {
	if len(d.unknown) > 0 {
		d.res.action("upload %s to a place known after deploy (%s)", plural(len(objs), "object"), strings.Join(d.unknown, ", "))
		return nil
	}
	n := 0
	for _, o := range objs {
		st, _, err := o.compare(ctx, d.aws().s3, forDeploy)
		if err != nil {
			return err
		}
		if st != "" {
			n++
			d.res.action("upload %s (%d bytes): %s", o.url(), o.size, st)
		}
	}
	if n == 0 {
		d.res.action("%s unchanged", plural(len(objs), "object"))
	}
	return nil
}

func statusAll(ctx context.Context, d *droplet, objs []*object) ([]string, error) {
	var diff []string
	missing := 0
	for _, o := range objs {
		st, how, err := o.compare(ctx, d.aws().s3, forStatus)
		if err != nil {
			return nil, err
		}
		if st != "" {
			diff = append(diff, st)
		}
		if how == byAbsence {
			missing++
		}
	}
	if missing > 0 && missing == len(objs) {
		// Nothing of the droplet is there.
		if len(objs) == 1 {
			return nil, absent("%s", diff[0])
		}
		return nil, absent("none of its %d objects exists (%s, ...)", len(objs), diff[0])
	}
	return diff, nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// checkSizes refuses, before any change, a file too large for S3.
func checkSizes(r *runner, names ...string) error {
	for _, n := range names {
		if size := r.src.sizes[n]; size > MaxObjectSize {
			return fmt.Errorf("%w: %s is %d bytes, over the %d bytes of one S3 object", ErrUpload, n, size, int64(MaxObjectSize))
		}
	}
	return nil
}

// objectKind deploys the droplets that upload objects, the file and the
// directory kinds: they differ only in their check, their objects and
// their attributes.
type objectKind struct{ objectDroplet }

type objectDroplet interface {
	check(r *runner, id string, spec *assembly.Droplet) error
	attrs(d *droplet) map[string]string
	objects(d *droplet) ([]*object, error)
}

func init() {
	registerKind(droplets.FileType, objectKind{fileKind{}})
	registerKind(droplets.DirectoryType, objectKind{directoryKind{}})
}

func (objectKind) resolved(d *droplet) { assetDestination(d) }

func (objectKind) purpose() purpose { return forFiles }

// usable: every object there with the signed bytes (extra objects under
// a prefix do not matter here).
func (k objectKind) usable(ctx context.Context, d *droplet) ([]string, error) {
	return k.present(ctx, d)
}

func (k objectKind) current(ctx context.Context, d *droplet) (map[string]string, bool, error) {
	return k.attrs(d), true, nil
}

func (k objectKind) deploy(ctx context.Context, d *droplet) (Outcome, map[string]string, error) {
	objs, err := k.objects(d)
	if err != nil {
		return "", nil, err
	}
	defer releaseAll(objs)
	out, err := putAll(ctx, d, objs)
	if err != nil {
		return "", nil, err
	}
	pruned, err := deployExtras(ctx, k, d, objs)
	if err != nil {
		return "", nil, err
	}
	if pruned && out == Unchanged {
		out = Updated
	}
	return out, k.attrs(d), nil
}

func (k objectKind) plan(ctx context.Context, d *droplet) error {
	objs, err := k.objects(d)
	if err != nil {
		return err
	}
	defer releaseAll(objs)
	if err := planAll(ctx, d, objs); err != nil {
		return err
	}
	if len(d.unknown) == 0 {
		if _, err := deployExtras(ctx, k, d, objs); err != nil {
			return err
		}
		d.run.setAttrs(d.id, k.attrs(d))
	}
	return nil
}

func (k objectKind) status(ctx context.Context, d *droplet) ([]string, error) {
	objs, err := k.objects(d)
	if err != nil {
		return nil, err
	}
	defer releaseAll(objs)
	d.run.setAttrs(d.id, k.attrs(d))
	diff, err := statusAll(ctx, d, objs)
	if err != nil {
		return nil, err
	}
	if prefix, ok := dirPrefix(k, d); ok {
		extra, err := extraObjects(ctx, d, prefix, objs)
		if err != nil {
			return nil, err
		}
		if len(extra) > 0 {
			diff = append(diff, extrasDiff(objs[0].bucket, prefix, extra))
		}
	}
	return diff, nil
}

// present lists how the droplet's objects differ from the signed bytes
// (extra objects aside): none when every one is there.
func (k objectKind) present(ctx context.Context, d *droplet) ([]string, error) {
	objs, err := k.objects(d)
	if err != nil {
		return nil, err
	}
	defer releaseAll(objs)
	return statusAll(ctx, d, objs)
}

// fileKind uploads one file.
type fileKind struct{}

func (fileKind) check(r *runner, id string, spec *assembly.Droplet) error {
	p := spec.Properties
	if _, ok := r.src.sizes[str(p, "file")]; !ok {
		return fmt.Errorf("properties.file: %q is not in the assembly", str(p, "file"))
	}
	if str(p, "bucketName") == "" || str(p, "objectKey") == "" {
		return fmt.Errorf("properties: a file droplet needs bucketName and objectKey")
	}
	return checkSizes(r, str(p, "file"))
}

func (fileKind) attrs(d *droplet) map[string]string {
	return map[string]string{"bucketName": str(d.props, "bucketName"), "objectKey": str(d.props, "objectKey")}
}

func (fileKind) objects(d *droplet) ([]*object, error) {
	o, err := fileObject(d.run.src, str(d.props, "bucketName"), str(d.props, "objectKey"), str(d.props, "file"))
	if err != nil {
		return nil, err
	}
	return []*object{o}, nil
}

// directoryKind uploads a folder, file by file under keyPrefix, or as one
// zip at objectKey.
type directoryKind struct{}

func (directoryKind) check(r *runner, id string, spec *assembly.Droplet) error {
	p := spec.Properties
	if len(r.src.filesUnder(str(p, "directory"))) == 0 {
		return fmt.Errorf("properties.directory: %q holds no file of the assembly", str(p, "directory"))
	}
	if str(p, "bucketName") == "" {
		return fmt.Errorf("properties.bucketName: a directory droplet needs a bucket")
	}
	names := r.src.filesUnder(str(p, "directory"))
	if str(p, "objectKey") != "" {
		var total int64
		for _, n := range names {
			total += r.src.sizes[n]
		}
		if total > MaxObjectSize {
			return fmt.Errorf("%w: the folder %s holds %d bytes, over the %d bytes of one zip object", ErrUpload, str(p, "directory"), total, int64(MaxObjectSize))
		}
	}
	return checkSizes(r, names...)
}

func (directoryKind) attrs(d *droplet) map[string]string {
	a := map[string]string{"bucketName": str(d.props, "bucketName"), "keyPrefix": str(d.props, "keyPrefix")}
	if k := str(d.props, "objectKey"); k != "" {
		a["objectKey"] = k
	}
	return a
}

func (directoryKind) objects(d *droplet) ([]*object, error) {
	dir := strings.TrimSuffix(str(d.props, "directory"), "/")
	bucket, prefix, zipKey := str(d.props, "bucketName"), str(d.props, "keyPrefix"), str(d.props, "objectKey")
	names := d.run.src.filesUnder(dir)
	if zipKey == "" {
		var objs []*object
		for _, n := range names {
			o, err := fileObject(d.run.src, bucket, prefix+strings.TrimPrefix(n, dir+"/"), n)
			if err != nil {
				return nil, err
			}
			objs = append(objs, o)
		}
		return objs, nil
	}
	// One zip, the same bytes every time: sorted, one time, modes fixed.
	exec := map[string]bool{}
	for _, e := range strList(d.props, "executables") {
		exec[e] = true
	}
	sp, err := newSpool(func(out io.Writer) error {
		zw := zip.NewWriter(out)
		for _, n := range names {
			rel := strings.TrimPrefix(n, dir+"/")
			h := &zip.FileHeader{Name: rel, Method: zip.Deflate, Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)}
			mode := 0o644
			if exec[rel] {
				mode = 0o755
			}
			h.SetMode(fsMode(mode))
			w, err := zw.CreateHeader(h)
			if err != nil {
				return err
			}
			if err := copyFile(w, d.run.src, n); err != nil {
				return err
			}
		}
		return zw.Close()
	})
	if err != nil {
		return nil, err
	}
	return []*object{spooledObject(bucket, zipKey, sp)}, nil
}

// copyFile copies a file of the assembly to w through the verification:
// it fails, at the file's end, when the bytes are not the signed ones.
func copyFile(w io.Writer, src *Source, name string) error {
	rc, err := src.Open(name)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(w, rc)
	return err
}

func fsMode(m int) fs.FileMode { return fs.FileMode(m) }
