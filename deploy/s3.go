package deploy

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"path"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sync/errgroup"

	"github.com/cloud-assembly/assemble/assembly"
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

// An object is one S3 object a droplet uploads: its verified content.
type object struct {
	bucket, key string
	name        string // the file in the assembly ("" for a zip made here)
	body        []byte
	sum         string // hex SHA-256 of body
}

func newObject(bucket, key, name string, body []byte) *object {
	s := sha256.Sum256(body)
	return &object{bucket: bucket, key: key, name: name, body: body, sum: hex.EncodeToString(s[:])}
}

func (o *object) url() string { return "s3://" + o.bucket + "/" + o.key }

// state compares the object in S3 with o: "" when it holds the same
// bytes (by the stored SHA-256, else, when byContent, by reading it),
// else what differs.
func (o *object) state(ctx context.Context, c *s3.Client, byContent bool) (string, error) {
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.key)})
	if err != nil {
		switch apiCode(err) {
		case "NotFound", "NoSuchKey", "404":
			return o.url() + " does not exist", nil
		case "NoSuchBucket":
			return fmt.Sprintf("bucket %s does not exist", o.bucket), nil
		}
		return "", fmt.Errorf("%w: s3:HeadObject %s: %s", ErrAWS, o.url(), apiMessage(err))
	}
	if sum := head.Metadata[MetaContentSHA256]; sum != "" {
		if sum == o.sum && aws.ToInt64(head.ContentLength) == int64(len(o.body)) {
			return "", nil
		}
		return fmt.Sprintf("%s holds other bytes (SHA-256 %s, want %s)", o.url(), sum, o.sum), nil
	}
	if !byContent {
		return o.url() + " was not uploaded by assemble (no SHA-256 recorded)", nil
	}
	get, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.key)})
	if err != nil {
		return "", fmt.Errorf("%w: s3:GetObject %s: %s", ErrAWS, o.url(), apiMessage(err))
	}
	defer get.Body.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(get.Body, int64(len(o.body))+1)); err != nil {
		return "", fmt.Errorf("%w: s3:GetObject %s: %v", ErrAWS, o.url(), err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != o.sum {
		return fmt.Sprintf("%s holds other bytes (SHA-256 %s, want %s)", o.url(), got, o.sum), nil
	}
	return "", nil
}

// put uploads o unless S3 holds its bytes already; it reports whether it
// uploaded.
func (o *object) put(ctx context.Context, d *droplet) (bool, error) {
	c := d.aws().s3
	st, err := o.state(ctx, c, false)
	if err != nil {
		return false, err
	}
	if st == "" {
		return false, nil
	}
	ctype := mime.TypeByExtension(path.Ext(o.key))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.key), Body: bytes.NewReader(o.body),
		ContentLength: aws.Int64(int64(len(o.body))), ContentType: aws.String(ctype),
		Metadata: map[string]string{MetaContentSHA256: o.sum, MetaSHA256: d.run.src.SHA256, MetaDroplet: d.id}})
	if err != nil {
		return false, fmt.Errorf("%w: s3:PutObject %s: %s", ErrUpload, o.url(), apiMessage(err))
	}
	d.progress("uploaded %s (%d bytes)", o.url(), len(o.body))
	return true, nil
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
			d.res.action("uploaded %s (%d bytes)", o.url(), len(o.body))
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
		st, err := o.state(ctx, d.aws().s3, false)
		if err != nil {
			return err
		}
		if st != "" {
			n++
			d.res.action("upload %s (%d bytes): %s", o.url(), len(o.body), st)
		}
	}
	if n == 0 {
		d.res.action("%s unchanged", plural(len(objs), "object"))
	}
	return nil
}

func statusAll(ctx context.Context, d *droplet, objs []*object) ([]string, error) {
	var diff []string
	for _, o := range objs {
		st, err := o.state(ctx, d.aws().s3, true)
		if err != nil {
			return nil, err
		}
		if st != "" {
			diff = append(diff, st)
		}
	}
	return diff, nil
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// MaxObjectSize is the largest object deploy uploads: S3's limit for one
// PutObject (each object is read whole from the verified archive, checked
// against its signed hash, before any byte is sent).
const MaxObjectSize = 5 << 30

// checkSizes refuses, before any change, a file too large for one PutObject.
func checkSizes(r *runner, names ...string) error {
	for _, n := range names {
		if size := r.src.sizes[n]; size > MaxObjectSize {
			return fmt.Errorf("%w: %s is %d bytes, over the %d bytes of one S3 PutObject (multipart uploads are not supported)", ErrUpload, n, size, int64(MaxObjectSize))
		}
	}
	return nil
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

func (k fileKind) objects(d *droplet) ([]*object, error) {
	name := str(d.props, "file")
	body, err := d.run.src.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return []*object{newObject(str(d.props, "bucketName"), str(d.props, "objectKey"), name, body)}, nil
}

func (k fileKind) current(ctx context.Context, d *droplet) (map[string]string, bool, error) {
	return k.attrs(d), true, nil
}

func (k fileKind) deploy(ctx context.Context, d *droplet) (Outcome, map[string]string, error) {
	objs, err := k.objects(d)
	if err != nil {
		return "", nil, err
	}
	out, err := putAll(ctx, d, objs)
	return out, k.attrs(d), err
}

func (k fileKind) plan(ctx context.Context, d *droplet) error {
	objs, err := k.objects(d)
	if err != nil {
		return err
	}
	if err := planAll(ctx, d, objs); err != nil {
		return err
	}
	if len(d.unknown) == 0 {
		d.run.setAttrs(d.id, k.attrs(d))
	}
	return nil
}

func (k fileKind) status(ctx context.Context, d *droplet) ([]string, error) {
	objs, err := k.objects(d)
	if err != nil {
		return nil, err
	}
	d.run.setAttrs(d.id, k.attrs(d))
	return statusAll(ctx, d, objs)
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
			body, err := d.run.src.ReadFile(n)
			if err != nil {
				return nil, err
			}
			objs = append(objs, newObject(bucket, prefix+strings.TrimPrefix(n, dir+"/"), n, body))
		}
		return objs, nil
	}
	// One zip, the same bytes every time: sorted, one time, modes fixed.
	exec := map[string]bool{}
	for _, e := range strList(d.props, "executables") {
		exec[e] = true
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		body, err := d.run.src.ReadFile(n)
		if err != nil {
			return nil, err
		}
		rel := strings.TrimPrefix(n, dir+"/")
		h := &zip.FileHeader{Name: rel, Method: zip.Deflate, Modified: time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)}
		mode := 0o644
		if exec[rel] {
			mode = 0o755
		}
		h.SetMode(fsMode(mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(body); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return []*object{newObject(bucket, zipKey, "", buf.Bytes())}, nil
}

func (k directoryKind) current(ctx context.Context, d *droplet) (map[string]string, bool, error) {
	return k.attrs(d), true, nil
}

func (k directoryKind) deploy(ctx context.Context, d *droplet) (Outcome, map[string]string, error) {
	objs, err := k.objects(d)
	if err != nil {
		return "", nil, err
	}
	out, err := putAll(ctx, d, objs)
	return out, k.attrs(d), err
}

func (k directoryKind) plan(ctx context.Context, d *droplet) error {
	objs, err := k.objects(d)
	if err != nil {
		return err
	}
	if err := planAll(ctx, d, objs); err != nil {
		return err
	}
	if len(d.unknown) == 0 {
		d.run.setAttrs(d.id, k.attrs(d))
	}
	return nil
}

func (k directoryKind) status(ctx context.Context, d *droplet) ([]string, error) {
	objs, err := k.objects(d)
	if err != nil {
		return nil, err
	}
	d.run.setAttrs(d.id, k.attrs(d))
	return statusAll(ctx, d, objs)
}

func fsMode(m int) fs.FileMode { return fs.FileMode(m) }
