package packager

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/internal/output"
	"github.com/cloud-assembly/assemble/packager/artifacts"
)

// assetsConfig is the assets: section of assembly.yaml: where the local
// artifacts of the project's templates are uploaded.
type assetsConfig struct {
	bucket, prefix string
	line, col      int // of the section
}

// readAssets reads assets: {bucketName: ..., keyPrefix: ...}.
func (s *projectSpec) readAssets(n *yaml.Node) error {
	f, err := s.mapping(n, "", "assets", projectAssetsKeys)
	if err != nil {
		return err
	}
	c := &assetsConfig{line: n.Line, col: n.Column}
	bn := f["bucketName"]
	if bn == nil {
		return s.errAt(n, "", "assets", "no bucketName: name the bucket the artifacts are uploaded to (a name, or ${Stack.output.Name})")
	}
	if c.bucket, err = s.str(bn, "", "assets.bucketName"); err != nil {
		return err
	}
	if err := CheckAssetBucket(c.bucket); err != nil {
		return s.errAt(bn, "", "assets.bucketName", "%v", err)
	}
	if pn := f["keyPrefix"]; pn != nil {
		if c.prefix, err = s.str(pn, "", "assets.keyPrefix"); err != nil {
			return err
		}
		if err := artifacts.CheckKeyPrefix(c.prefix); err != nil {
			return s.errAt(pn, "", "assets.keyPrefix", "%v", err)
		}
	}
	s.assets = c
	return nil
}

// CheckAssetBucket checks an asset bucket of assemble build (assets:
// bucketName, --asset-bucket): an S3 bucket name by artifacts.CheckBucket,
// the rule assemble package applies too, or a ${Stack.output.Name}
// reference (checked with the manifest, on the file droplets that carry
// it).
func CheckAssetBucket(b string) error {
	if strings.Contains(b, "${") {
		return nil
	}
	if err := artifacts.CheckBucket(b); err != nil {
		return fmt.Errorf("%w, nor a ${Stack.output.Name} reference", err)
	}
	return nil
}

// noBucketHint is the fix for local artifacts with no bucket.
const noBucketHint = "add assets: {bucketName: BUCKET} to " + ProjectFile + ", or name one with BuildOptions.AssetBucket"

// assetSet returns the Set a stack's template packages its artifacts into.
func (b *builder) assetSet(read func(string), environment string) (*artifacts.Set, error) {
	opts := artifacts.Options{Root: relWD(b.rootReal), Parameter: true, Read: read}
	if env, err := assembly.ParseEnvironment(environment); err == nil && env.Protocol == "aws" && env.Region != assembly.UnknownRegion {
		opts.Region = env.Region
	}
	bucket, prefix := "", ""
	if b.spec != nil && b.spec.assets != nil {
		c := b.spec.assets
		bucket, prefix = c.bucket, c.prefix
	}
	if b.opts.AssetBucket != "" {
		if err := CheckAssetBucket(b.opts.AssetBucket); err != nil {
			return nil, fmt.Errorf("%w: BuildOptions.AssetBucket: %w", ErrProject, err)
		}
		bucket = b.opts.AssetBucket
	}
	if b.opts.AssetKeyPrefix != "" {
		if err := artifacts.CheckKeyPrefix(b.opts.AssetKeyPrefix); err != nil {
			return nil, fmt.Errorf("%w: BuildOptions.AssetKeyPrefix: %v", ErrProject, err)
		}
		prefix = b.opts.AssetKeyPrefix
	}
	switch {
	case bucket == "":
		opts.NoBucket = noBucketHint
	case !strings.Contains(bucket, "${"):
		opts.Bucket = bucket
	}
	opts.KeyPrefix = prefix
	b.assetBucket = bucket
	return artifacts.New(opts)
}

// addAssets adds a file droplet for each artifact of the stack id: the
// file in the archive under assets/, uploaded to the asset bucket at its
// content's SHA-256. The stack's template takes the bucket as the
// parameter artifacts.BucketParameter, which the stack droplet sets to
// ${Asset.bucketName}, and the stack depends on every file droplet, so
// deploy uploads them first.
//
// A file droplet is named after what uses it (Asset.Use: "Fn-Code",
// "Nested/ChildFn-Code"), not after its content, so that --only, status
// and a diff of two releases keep its name when the code changes; the
// object key stays the content's SHA-256, which is what makes
// CloudFormation update a function whose code changed, deploy skip an
// upload that is there already, and an older stack find its code. The
// same artifact (same environment, bucket and key) used by two stacks is
// one droplet; a name taken by another droplet gets the stack's ID as a
// suffix ("Fn-Code-Orders"), then a number.
func (b *builder) addAssets(id string, d *assembly.Droplet, set *artifacts.Set) error {
	m := b.plan.Manifest
	if b.assetIDs == nil {
		b.assetIDs = map[string]string{}
	}
	var ids []string
	for _, a := range set.Assets() {
		same := d.Environment + "\x00" + b.assetBucket + "\x00" + a.Key
		aid, ok := b.assetIDs[same]
		if !ok {
			aid = a.Use
			if _, taken := m.Droplets[aid]; taken {
				aid = a.Use + "-" + id
			}
			for n := 2; ; n++ {
				if _, taken := m.Droplets[aid]; !taken {
					break
				}
				aid = a.Use + "-" + id + "-" + strconv.Itoa(n)
			}
			name := "assets/" + aid + path.Ext(a.Name)
			if err := b.addAsset(name, a, set); err != nil {
				return err
			}
			m.Droplets[aid] = &assembly.Droplet{Type: droplets.FileType, Environment: d.Environment,
				Properties: map[string]any{"file": name, "bucketName": b.assetBucket, "objectKey": a.Key}}
			b.assetIDs[same] = aid
		}
		ids = append(ids, aid)
	}
	if len(ids) == 0 {
		return nil
	}
	if set.TakesBucket() {
		params, _ := d.Properties["parameters"].(map[string]any)
		if params == nil {
			params = map[string]any{}
			d.Properties["parameters"] = params
		}
		if _, taken := params[artifacts.BucketParameter]; taken {
			return fmt.Errorf("%w: properties.parameters sets %s, the parameter assemble adds for the asset bucket: remove it and set the bucket under assets: instead", ErrProject, artifacts.BucketParameter)
		}
		params[artifacts.BucketParameter] = "${" + ids[0] + ".bucketName}"
	}
	for _, aid := range ids {
		if !slices.Contains(d.DependsOn, aid) {
			d.DependsOn = append(d.DependsOn, aid)
		}
	}
	return nil
}

// addAsset adds an artifact's file to the archive as name, once.
func (b *builder) addAsset(name string, a *artifacts.Asset, set *artifacts.Set) error {
	what := "artifact " + a.Use + " (" + a.Source + ")"
	if prev, ok := b.plan.sources[name]; ok {
		return fmt.Errorf("%w: archive path %q would hold both the %s and the %s", ErrProject, name, prev, what)
	}
	b.plan.sources[name] = what
	if !a.Template {
		real := set.RealPath(a)
		b.plan.inputs = append(b.plan.inputs, real)
		if a.Folder {
			b.plan.dirs = append(b.plan.dirs, real)
		}
	}
	if data := a.Data(); data != nil {
		return b.plan.writer.AddBytes(name, data)
	}
	return b.plan.writer.AddOpener(name, a.Size, a.Open)
}

// WriteAssets writes every artifact of set into the folder dir, each at
// its object key (dir/KEY), for assemble package: upload the folder to
// the bucket (aws s3 sync DIR s3://BUCKET) before the packaged template
// is deployed. Each file goes through the project's one output writer and
// is never one of inputs. It returns the files written.
func WriteAssets(ctx context.Context, set *artifacts.Set, dir string, inputs []string) ([]string, error) {
	var written []string
	for _, a := range set.Assets() {
		name := filepath.Join(dir, filepath.FromSlash(a.Key))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return written, err
		}
		f, err := output.Create(ctx, name, output.Options{Inputs: inputs})
		if err != nil {
			return written, err
		}
		r, err := a.Open()
		if err == nil {
			_, err = io.Copy(f, r)
			r.Close()
		}
		if err == nil {
			err = f.Commit()
		}
		f.Close()
		if err != nil {
			return written, err
		}
		written = append(written, name)
	}
	return written, nil
}
