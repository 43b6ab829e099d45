package deploy

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// A directory droplet uploaded file by file is the whole of its keyPrefix:
// an object under the prefix that it does not deploy is drift. Status names
// such extra objects; Deploy removes them only with Options.Prune (never
// by default: a plain deploy says they are there). Objects that another
// droplet of the assembly deploys (a file's objectKey, another directory's
// files or zip) are not extra, nor, in the staging bucket, the templates
// deploy staged there (assemble/templates/).

// maxNamedExtras bounds how many extra objects a message names.
const maxNamedExtras = 20

// dirPrefix is the droplet's keyPrefix when it is a directory droplet
// uploaded file by file (ok false otherwise).
func dirPrefix(k objectKind, d *droplet) (string, bool) {
	if _, ok := k.objectDroplet.(directoryKind); !ok || str(d.props, "objectKey") != "" {
		return "", false
	}
	return str(d.props, "keyPrefix"), true
}

// ownedKeys are the object keys the assembly's droplets deploy, as their
// manifest spells them.
func ownedKeys(src *Source) map[string]bool {
	owned := map[string]bool{}
	for _, id := range src.manifest.IDs() {
		spec := src.manifest.Droplets[id]
		k, _ := kindOf(spec.Type)
		switch k {
		case dropletKind(objectKind{fileKind{}}):
			owned[str(spec.Properties, "objectKey")] = true
		case dropletKind(objectKind{directoryKind{}}):
			if key := str(spec.Properties, "objectKey"); key != "" {
				owned[key] = true
				continue
			}
			dir := strings.TrimSuffix(str(spec.Properties, "directory"), "/")
			for _, n := range src.filesUnder(dir) {
				owned[str(spec.Properties, "keyPrefix")+strings.TrimPrefix(n, dir+"/")] = true
			}
		}
	}
	return owned
}

// extraObjects lists the keys under the droplet's prefix that no droplet
// of the assembly deploys, in S3's order.
func extraObjects(ctx context.Context, d *droplet, prefix string, objs []*object) ([]string, error) {
	if len(objs) == 0 {
		return nil, nil
	}
	bucket := objs[0].bucket
	mine := map[string]bool{}
	for _, o := range objs {
		mine[o.key] = true
	}
	owned := ownedKeys(d.run.src)
	staging := bucket == d.run.opts.StagingBucket
	var extra []string
	p := s3.NewListObjectsV2Paginator(d.aws().s3, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if apiCode(err) == "NoSuchBucket" {
			return nil, nil // nothing there, nothing extra
		}
		if err != nil {
			return nil, fmt.Errorf("%w: s3:ListObjectsV2 s3://%s/%s: %s", ErrAWS, bucket, prefix, apiMessage(err))
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			if mine[key] || owned[key] || staging && strings.HasPrefix(key, "assemble/templates/") {
				continue
			}
			extra = append(extra, key)
		}
	}
	return extra, nil
}

// extrasText names the extra objects (the first maxNamedExtras).
func extrasText(bucket string, keys []string) string {
	var names []string
	for i, k := range keys {
		if i == maxNamedExtras {
			names = append(names, fmt.Sprintf("and %d more", len(keys)-i))
			break
		}
		names = append(names, "s3://"+bucket+"/"+k)
	}
	return strings.Join(names, ", ")
}

// extrasDiff is Status's difference for extra objects.
func extrasDiff(bucket, prefix string, keys []string) string {
	return fmt.Sprintf("%s under s3://%s/%s not in the assembly: %s", plural(len(keys), "extra object"), bucket, prefix, extrasText(bucket, keys))
}

// prune deletes the extra objects, 1,000 a call (S3's DeleteObjects).
func prune(ctx context.Context, d *droplet, bucket string, keys []string) error {
	for start := 0; start < len(keys); start += 1000 {
		batch := keys[start:min(start+1000, len(keys))]
		ids := make([]s3types.ObjectIdentifier, len(batch))
		for i, k := range batch {
			ids[i] = s3types.ObjectIdentifier{Key: aws.String(k)}
		}
		out, err := d.aws().s3.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
		if err != nil {
			return fmt.Errorf("%w: s3:DeleteObjects in s3://%s: %s", ErrAWS, bucket, apiMessage(err))
		}
		if len(out.Errors) > 0 {
			e := out.Errors[0]
			return fmt.Errorf("%w: s3:DeleteObjects s3://%s/%s: %s", ErrAWS, bucket, aws.ToString(e.Key), aws.ToString(e.Message))
		}
		for _, k := range batch {
			d.progress("deleted extra object s3://%s/%s", bucket, k)
		}
	}
	return nil
}

// deployExtras handles a directory droplet's extra objects after its
// upload: deleted with Prune, else named in the actions. It reports
// whether it deleted anything.
func deployExtras(ctx context.Context, k objectKind, d *droplet, objs []*object) (bool, error) {
	prefix, ok := dirPrefix(k, d)
	if !ok {
		return false, nil
	}
	extra, err := extraObjects(ctx, d, prefix, objs)
	if err != nil || len(extra) == 0 {
		return false, err
	}
	bucket := objs[0].bucket
	if !d.run.opts.Plan && d.run.opts.Prune {
		if err := prune(ctx, d, bucket, extra); err != nil {
			return false, err
		}
		d.res.action("deleted %s under s3://%s/%s not in the assembly: %s", plural(len(extra), "extra object"), bucket, prefix, extrasText(bucket, extra))
		return true, nil
	}
	verb := "left"
	if d.run.opts.Prune {
		verb = "would delete" // a plan
	}
	d.res.action("%s %s under s3://%s/%s not in the assembly (prune deletes them): %s", verb, plural(len(extra), "extra object"), bucket, prefix, extrasText(bucket, extra))
	return false, nil
}
