package cfn

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/errcode"
	"github.com/cloud-assembly/assemble/internal/suggest"
)

// ErrNoArtifacts: a template ships a local file or folder (!Rain::S3,
// !Rain::S3Http) and the packaging was given nowhere to put it
// (Options.Artifacts is nil).
var ErrNoArtifacts = errcode.New("no_asset_bucket", "no place for local artifacts",
	"give the packaging a place for local artifacts (Options.Artifacts): a bucket, from assets: {bucketName: NAME} in assembly.yaml or the caller")

// An Artifact is a local file or folder that a template ships with it.
type Artifact struct {
	// Path is the file or folder: the path as written, joined to the
	// folder of File. The Artifacts implementation decides whether it may
	// be read (the project-path rule) and reads it.
	Path string
	// Zip asks for a file to be shipped zipped; a folder is always zipped.
	Zip bool
	// Extension is rain's Extension option ("" when not given): the object
	// key's extension, without the dot.
	Extension string
	// File, Line and Column say where the directive is written.
	File         string
	Line, Column int
}

// Artifacts adds the artifacts a template ships to what is being built.
// Add returns the template values that name the object's bucket and key
// once deployed: strings, or intrinsics written as Go values
// (map[string]any{"Ref": "AssetsBucket"}) or *yaml.Node in long form.
type Artifacts interface {
	Add(a Artifact) (bucket, key any, err error)
}

type rainArtifactKey struct {
	path, ext string
	zip       bool
}

type rainArtifact struct{ bucket, key *yaml.Node }

// s3Options are the options of the mapping form of !Rain::S3.
var s3Options = []string{"Path", "Zip", "BucketProperty", "KeyProperty", "Format", "Extension"}

// s3Formats are the values of Format.
var s3Formats = []string{"URI", "Http", "Object"}

// rainS3Http resolves !Rain::S3Http path: the object's https:// URL.
func (sc *scope) rainS3Http(n, arg *yaml.Node) (*yaml.Node, error) {
	p, err := sc.resolve(arg)
	if err != nil {
		return nil, err
	}
	if p == nil || !isStr(p) || p.Value == "" {
		return nil, sc.errorf(n, ErrInvalid, "!Rain::S3Http needs the path of a file or folder, relative to %s", sc.file)
	}
	a := Artifact{Path: p.Value}
	return sc.shipArtifact(n, p, a, "Http", "", "")
}

// rainS3 resolves !Rain::S3 path (the object's s3:// URI) and its mapping
// form, {Path, Zip, BucketProperty, KeyProperty, Format, Extension}.
func (sc *scope) rainS3(n, arg *yaml.Node) (*yaml.Node, error) {
	v, err := sc.resolve(arg)
	if err != nil {
		return nil, err
	}
	if v != nil && isStr(v) && v.Value != "" {
		return sc.shipArtifact(n, v, Artifact{Path: v.Value}, "URI", "", "")
	}
	if v == nil || v.Kind != yaml.MappingNode || isIntrinsic(v) {
		return nil, sc.errorf(n, ErrInvalid, "!Rain::S3 needs a path, or a mapping with Path (and Zip, BucketProperty, KeyProperty, Format)")
	}
	var a Artifact
	var pathNode *yaml.Node
	var format, bucketProp, keyProp string
	for k, x := range entries(v) {
		str := func() (string, error) {
			if !isStr(x) || x.Value == "" {
				return "", sc.errorf(x, ErrInvalid, "!Rain::S3 %s must be a string known when building (not a parameter of the template)", k.Value)
			}
			return x.Value, nil
		}
		var err error
		switch k.Value {
		case "Path":
			pathNode = x
			a.Path, err = str()
		case "Zip":
			if !isScalar(x) || x.Tag != tagBool {
				return nil, sc.errorf(x, ErrInvalid, "!Rain::S3 Zip must be true or false")
			}
			a.Zip = x.Value == "true"
		case "BucketProperty":
			bucketProp, err = str()
		case "KeyProperty":
			keyProp, err = str()
		case "Format":
			if format, err = str(); err == nil && !slices.Contains(s3Formats, format) {
				err = sc.errorf(x, ErrInvalid, "!Rain::S3 Format %s: use URI (s3://bucket/key), Http (https://...) or Object ({BucketProperty: bucket, KeyProperty: key})%s", format, suggest.Hint(format, s3Formats))
			}
		case "Extension":
			a.Extension, err = str()
			a.Extension = strings.TrimPrefix(a.Extension, ".")
		case "Run":
			return nil, sc.errorf(k, ErrInvalid, "!Rain::S3 Run runs a program, and a build runs none: run %v before assemble build, and name what it makes in Path", x.Value)
		default:
			return nil, sc.errorf(k, ErrInvalid, "!Rain::S3: unknown option %s%s; the options are %s", k.Value, suggest.Hint(k.Value, s3Options), strings.Join(s3Options, ", "))
		}
		if err != nil {
			return nil, err
		}
	}
	if pathNode == nil {
		return nil, sc.errorf(n, ErrInvalid, "!Rain::S3 needs a Path: the file or folder to ship")
	}
	if format == "" {
		format = "URI"
		if bucketProp != "" && keyProp != "" {
			format = "Object"
		}
	}
	if format == "Object" && (bucketProp == "" || keyProp == "") {
		return nil, sc.errorf(n, ErrInvalid, "!Rain::S3 Format Object needs BucketProperty and KeyProperty: the names of the properties that get the bucket and the key (S3Bucket and S3Key for a Lambda function's Code)")
	}
	return sc.shipArtifact(n, pathNode, a, format, bucketProp, keyProp)
}

// shipArtifact adds the artifact through Options.Artifacts (once per
// path) and returns its location in the given format.
func (sc *scope) shipArtifact(n, at *yaml.Node, a Artifact, format, bucketProp, keyProp string) (*yaml.Node, error) {
	e := sc.e
	if isRemote(sc.file) {
		return nil, sc.errorf(at, ErrInvalid, "%s ships %s, but %s is a module from a package or a URL, which has no local files; ship it from the template or a local module", directiveName(n), a.Path, sc.file)
	}
	p := filepath.FromSlash(a.Path)
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(sc.file), p)
	}
	a.Path = filepath.Clean(p)
	a.File, a.Line, a.Column = sc.file, at.Line, at.Column
	if lc, ok := e.srcs.(localChecker); ok {
		// The project-path rule of every file the template names.
		if err := lc.checkLocal(a.Path, at.Value); err != nil {
			return nil, wrapLoad(sc.file, at.Line, at.Column, sc.chain, err)
		}
	}
	if e.opts.Artifacts == nil {
		return nil, sc.errorf(at, ErrNoArtifacts, "%s ships %s as a local artifact, and this packaging has nowhere to put it: give a bucket (Options.Artifacts, or assets: {bucketName: NAME} in assembly.yaml)", directiveName(n), at.Value)
	}
	k := rainArtifactKey{a.Path, a.Extension, a.Zip}
	got, ok := e.rainArtifacts[k]
	if !ok {
		b, key, err := e.opts.Artifacts.Add(a)
		if err != nil {
			var ce *Error
			if errors.As(err, &ce) {
				return nil, err
			}
			msg := strings.TrimPrefix(err.Error(), "cfn: ")
			return nil, &Error{File: sc.file, Line: at.Line, Col: at.Column, Chain: sc.chain, Msg: fmt.Sprintf("%s %s: %s", directiveName(n), at.Value, msg), Err: sentinelError{sourceSentinel(err), err}}
		}
		if got.bucket, err = valueNode(b); err == nil {
			got.key, err = valueNode(key)
		}
		if err != nil {
			return nil, sc.errorf(at, ErrInvalid, "%s %s: the artifact's location: %v", directiveName(n), at.Value, err)
		}
		if e.rainArtifacts == nil {
			e.rainArtifacts = map[rainArtifactKey]rainArtifact{}
		}
		e.rainArtifacts[k] = got
	}
	bucket, key := clone(got.bucket), clone(got.key)
	var out *yaml.Node
	switch format {
	case "Object":
		out = mapNode(strNode(bucketProp), bucket, strNode(keyProp), key)
	case "Http":
		out = join(strNode("https://"), bucket, strNode(".s3."), fn("Ref", strNode("AWS::Region"), nil),
			strNode("."), fn("Ref", strNode("AWS::URLSuffix"), nil), strNode("/"), key)
	default:
		out = join(strNode("s3://"), bucket, strNode("/"), key)
	}
	out.Line, out.Column = n.Line, n.Column
	return out, nil
}

// localChecker is a Sources that can check a local path (a file or a
// folder) against its project folder.
type localChecker interface {
	checkLocal(path, written string) error
}

// checkLocal applies the project-path rule of the resolver (inside the
// project folder, links included) to a file or folder.
func (s *resolverSources) checkLocal(path, written string) error {
	if _, err := s.r.FileLocation(path); err != nil {
		// Name the path as written, not as joined to the file's folder.
		return &rewordedError{strings.Replace(err.Error(), path, written, 1), err}
	}
	return nil
}

type rewordedError struct {
	msg string
	err error
}

func (e *rewordedError) Error() string { return e.msg }
func (e *rewordedError) Unwrap() error { return e.err }

func directiveName(n *yaml.Node) string {
	k, _, _ := single(n)
	return "!" + k
}

// join concatenates parts: a string when all are strings, else an
// Fn::Join with adjacent strings merged.
func join(parts ...*yaml.Node) *yaml.Node {
	var items []*yaml.Node
	for _, p := range parts {
		if last := len(items) - 1; last >= 0 && isStr(p) && isStr(items[last]) {
			items[last] = strNode(items[last].Value + p.Value)
			continue
		}
		items = append(items, p)
	}
	if len(items) == 1 && isStr(items[0]) {
		return items[0]
	}
	return fn("Fn::Join", seqNode(strNode(""), seqNode(items...)), nil)
}

// valueNode turns a template value given by an Artifacts implementation
// into a node in long form.
func valueNode(v any) (*yaml.Node, error) {
	var x *yaml.Node
	switch v := v.(type) {
	case nil:
		return nil, errors.New("no value")
	case string:
		return strNode(v), nil
	case *yaml.Node:
		x = v
	default:
		x = &yaml.Node{}
		if err := x.Encode(v); err != nil {
			return nil, err
		}
	}
	n := &normalizer{name: "artifact"}
	return n.norm(x, 0)
}
