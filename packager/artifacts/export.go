package artifacts

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/cloud-assembly/assemble/packager/cfn"
)

// Export packages the local artifacts of the packaged template t (modules
// expanded), read from file: every property of Properties() and every
// AWS::Include Location that names a local path is added to the Set and
// rewritten in place to the form aws-cli writes for it; nested templates
// are packaged recursively. Paths are relative to the template's folder,
// as aws-cli resolves them (a module's resources are part of the template
// by then). Values that are not strings (intrinsic functions, {S3Bucket,
// S3Key} mappings), S3 and HTTP(S) locations, and absent properties are
// left as written.
//
// With Options.Parameter, a template that names the bucket declares the
// parameter BucketParameter; a template that declares it itself is an
// error.
func (s *Set) Export(t *cfn.Template, file string) error {
	ex := &exporter{s: s, t: t, file: file, dir: filepath.Dir(file)}
	top := len(s.files) == 0
	if top {
		// The top template starts the chain of nested templates.
		if abs, err := filepath.Abs(file); err == nil {
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				s.files, s.chain = append(s.files, real), append(s.chain, Pos{File: file})
				defer func() { s.files, s.chain = s.files[:0], s.chain[:0] }()
			}
		}
	}
	if s.pre == nil {
		s.pre = ex.startPrefetch()
		defer func() { s.pre.stop(); s.pre = nil }()
	}
	if err := ex.run(); err != nil {
		return err
	}
	if top {
		s.takesBucket = get(get(t.Root, "Parameters"), BucketParameter) != nil
	}
	return nil
}

type exporter struct {
	s    *Set
	t    *cfn.Template
	file string
	dir  string
}

func (ex *exporter) pos(n *yaml.Node, file string) Pos {
	if file == "" {
		file = ex.file
	}
	return Pos{File: file, Line: n.Line, Column: n.Column}
}

func (ex *exporter) run() error {
	root := ex.t.Root
	if ex.s.opts.Parameter {
		if p := get(get(root, "Parameters"), BucketParameter); p != nil {
			if d := get(p, "Description"); d == nil || d.Value != bucketDescription {
				return ex.s.errAt(ex.pos(p, ""), fmt.Errorf("%w: the template declares the parameter %s, which assemble adds to name the asset bucket: rename it", ErrArtifact, BucketParameter))
			}
		}
	}
	if err := ex.metadata(get(root, "Metadata")); err != nil {
		return err
	}
	res := get(root, "Resources")
	if res == nil {
		return nil // as aws-cli: no Resources, nothing else packaged
	}
	if err := ex.includes(root); err != nil {
		return err
	}
	if err := ex.globals(get(root, "Globals")); err != nil {
		return err
	}
	if err := ex.resources(res); err != nil {
		return err
	}
	if ex.s.opts.Parameter && usesBucket(root) {
		declareBucket(root)
	}
	return nil
}

// metadata packages the AWS::ServerlessRepo::Application entries.
func (ex *exporter) metadata(md *yaml.Node) error {
	for _, p := range Properties() {
		if !p.Metadata {
			continue
		}
		entry := get(md, p.Type)
		v := getPath(entry, p.Path)
		if err := ex.remote(p, v, ""); err != nil {
			return err
		}
		if !isLocal(v) {
			continue
		}
		if ex.s.opts.Bucket == "" && ex.s.opts.Parameter {
			return ex.s.errAt(ex.pos(v, ""), fmt.Errorf("%w: Metadata %s.%s is read by sam publish, not resolved at deploy time: give the asset bucket as a name, not a reference", ErrArtifact, p.Type, strings.Join(p.Path, ".")))
		}
		at := ex.pos(v, "")
		at.Name = UseName(ex.s.scope, "Metadata", p.Path)
		ref, err := ex.s.Add(ex.dir, v.Value, false, at)
		if err != nil {
			return err
		}
		replace(v, str("s3://"+ex.s.opts.Bucket+"/"+ref.Asset.Key))
	}
	return nil
}

// includes packages the Location of every AWS::Include transform: a
// Fn::Transform anywhere, or the template's Transform section, each a
// mapping or a list of them (CloudFormation takes both).
func (ex *exporter) includes(root *yaml.Node) error {
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "Transform":
			if err := ex.transform(v, "Template"); err != nil {
				return err
			}
		case "Resources":
			// named after the resource they are in
			for j := 0; v.Kind == yaml.MappingNode && j+1 < len(v.Content); j += 2 {
				if err := ex.includesAt(v.Content[j+1], v.Content[j].Value); err != nil {
					return err
				}
			}
			continue
		}
		if err := ex.includesAt(v, k.Value); err != nil {
			return err
		}
	}
	return nil
}

// includesAt packages the AWS::Include transforms under n, used by user.
func (ex *exporter) includesAt(n *yaml.Node, user string) error {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "Fn::Transform" {
				if err := ex.transform(v, user); err != nil {
					return err
				}
			}
			if err := ex.includesAt(v, user); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if err := ex.includesAt(c, user); err != nil {
				return err
			}
		}
	}
	return nil
}

// transform packages the AWS::Include entries of a transform (one entry
// or a list).
func (ex *exporter) transform(v *yaml.Node, user string) error {
	entries := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		entries = v.Content
	}
	for _, e := range entries {
		if err := ex.include(e, user); err != nil {
			return err
		}
	}
	return nil
}

// include packages the Location of one transform entry when it is an
// AWS::Include.
func (ex *exporter) include(e *yaml.Node, user string) error {
	if name := get(e, "Name"); name == nil || name.Value != "AWS::Include" {
		return nil
	}
	loc := get(get(e, "Parameters"), "Location")
	if err := ex.remote(includeProperty, loc, ""); err != nil {
		return err
	}
	if !isLocal(loc) {
		return nil
	}
	at := ex.pos(loc, "")
	at.Name = UseName(ex.s.scope, user, []string{"Include"})
	ref, err := ex.s.AddFile(ex.dir, loc.Value, at)
	if err != nil {
		return err
	}
	replace(loc, ref.S3URI())
	return nil
}

// includeProperty is AWS::Include's Location, for remote's checks.
var includeProperty = Property{Type: "AWS::Include", Path: []string{"Location"}, Form: S3URI}

func (ex *exporter) resources(res *yaml.Node) error {
	if res.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(res.Content); i += 2 {
		k, r := res.Content[i], res.Content[i+1]
		if strings.HasPrefix(k.Value, "Fn::ForEach::") {
			if r.Kind == yaml.SequenceNode && len(r.Content) == 3 {
				if err := ex.resources(r.Content[2]); err != nil {
					return err
				}
			}
			continue
		}
		typ := get(r, "Type")
		props := get(r, "Properties")
		if typ == nil || props == nil {
			continue
		}
		file := ex.sourceFile(r)
		for _, p := range Properties() {
			if p.Metadata || p.Type != typ.Value {
				continue
			}
			if err := ex.property(p, props, file, k.Value); err != nil {
				return err
			}
		}
	}
	return nil
}

// property packages the property p of props (a resource's Properties, or
// a SAM Globals section), written in file ("" for the template), of user
// (the resource's logical ID, or GlobalsFunction).
func (ex *exporter) property(p Property, props *yaml.Node, file, user string) error {
	v := getPath(props, p.Path)
	if err := ex.remote(p, v, file); err != nil {
		return err
	}
	if !isLocal(v) {
		return nil
	}
	at := ex.pos(v, file)
	at.Name = UseName(ex.s.scope, user, p.Path)
	if p.Template {
		plain := p.Type == "AWS::Serverless::Application"
		if plain {
			if err := ex.s.checkPlainURL(at); err != nil {
				return err
			}
		}
		ref, child, err := ex.nested(v.Value, at, user)
		if err != nil {
			return err
		}
		if plain {
			replace(v, str(ref.PlainHTTPSURL()))
		} else {
			replace(v, ref.HTTPSURL())
		}
		if child && ex.s.opts.Parameter {
			return passBucket(props, at, ex.s)
		}
		return nil
	}
	ref, err := ex.s.Add(ex.dir, v.Value, p.ForceZip, at)
	if err != nil {
		return err
	}
	switch {
	case p.Form == BucketKey:
		replace(v, ref.BucketKeyMap(p.Bucket, p.Key))
	case ex.s.opts.Parameter && strings.HasPrefix(p.Type, "AWS::Serverless::"):
		// The SAM transform reads an s3:// string before any intrinsic
		// function is resolved; its {Bucket, Key} form passes the Ref on
		// to the resource it makes.
		replace(v, ref.BucketKeyMap("Bucket", "Key"))
	default:
		replace(v, ref.S3URI())
	}
	return nil
}

// remote handles a property value that names a remote location: an s3://
// string where CloudFormation takes a mapping becomes the mapping (with
// the object version of ?versionId=), as aws-cli writes it; an http(s)://
// URL where only S3 is read (anything but a nested template) is refused
// here, not at deploy time.
func (ex *exporter) remote(p Property, v *yaml.Node, file string) error {
	if v == nil || v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		return nil
	}
	at := ex.pos(v, file)
	prop := strings.Join(p.Path, ".")
	l := strings.ToLower(v.Value)
	switch {
	case strings.HasPrefix(l, "s3://") && !strings.HasPrefix(v.Value, "s3://"):
		return ex.s.errAt(at, fmt.Errorf("%w: %s %q: write the scheme s3:// in lower case", ErrArtifact, prop, v.Value))
	case strings.HasPrefix(l, "s3://"):
		if p.Form != BucketKey {
			return nil
		}
		m, err := s3Mapping(v.Value, p)
		if err != nil {
			return ex.s.errAt(at, fmt.Errorf("%w: %s %q: %v", ErrArtifact, prop, v.Value, err))
		}
		replace(v, m)
	case (strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "http://")) && !p.Template:
		return ex.s.errAt(at, fmt.Errorf("%w: %s %q: %s reads its %s from S3 only, not from a web address: upload the object and write s3://BUCKET/KEY, or name a local file or folder to package", ErrArtifact, prop, v.Value, p.Type, prop))
	}
	return nil
}

// s3Mapping parses s3://BUCKET/KEY[?versionId=V] into p's mapping
// {Bucket: BUCKET, Key: KEY[, Version: V]}, as aws-cli's parse_s3_url
// does; what aws-cli would drop or misread (no key, a version the
// property can not take, other query keys) is an error.
func s3Mapping(u string, p Property) (*yaml.Node, error) {
	rest := strings.TrimPrefix(u, "s3://")
	rest, query, _ := strings.Cut(rest, "?")
	bucket, key, _ := strings.Cut(rest, "/")
	key = strings.TrimLeft(key, "/")
	if bucket == "" || key == "" {
		return nil, fmt.Errorf("no object key: write s3://BUCKET/KEY")
	}
	if strings.Contains(key, "#") {
		return nil, fmt.Errorf("an object key with # is read as a fragment by aws-cli: rename the object")
	}
	m := mapN(str(p.Bucket), str(bucket), str(p.Key), str(key))
	if query == "" {
		return m, nil
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("query %q: %v", query, err)
	}
	for k := range q {
		if k != "versionId" {
			return nil, fmt.Errorf("query key %q: only ?versionId=VERSION is read", k)
		}
	}
	vs := q["versionId"]
	switch {
	case len(vs) != 1 || vs[0] == "":
		return nil, fmt.Errorf("give one ?versionId=VERSION")
	case p.Version == "":
		return nil, fmt.Errorf("%s takes no object version: remove ?versionId=", p.Type)
	}
	m.Content = append(m.Content, str(p.Version), str(vs[0]))
	return m, nil
}

// globalProperties are the SAM Globals that take a local path (the SAM
// transform's supported globals: Function.CodeUri, Api.DefinitionUri).
var globalProperties = map[string]string{"Function": "AWS::Serverless::Function", "Api": "AWS::Serverless::Api"}

// globals packages the SAM Globals that name a local path, in the form of
// the property they give every resource of their type that does not set
// it: the SAM transform merges the packaged value into those resources,
// as SAM CLI's package gives them the global's value. (aws-cli packages
// the template's whole folder for each of them instead.)
func (ex *exporter) globals(g *yaml.Node) error {
	if g == nil || g.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(g.Content); i += 2 {
		typ, ok := globalProperties[g.Content[i].Value]
		if !ok {
			continue
		}
		for _, p := range Properties() {
			if p.Type != typ {
				continue
			}
			if err := ex.property(p, g.Content[i+1], "", "Globals"+g.Content[i].Value); err != nil {
				return err
			}
		}
	}
	return nil
}

// sourceFile is the file a module's resource was written in, from the
// SourceMap the module expansion leaves ("./mod.yaml:Name:line", relative
// to the template's folder), or "" for the template's own.
func (ex *exporter) sourceFile(r *yaml.Node) string {
	sm := get(get(r, "Metadata"), "SourceMap")
	if sm == nil || sm.Kind != yaml.ScalarNode {
		return ""
	}
	v := sm.Value
	for range 2 {
		i := strings.LastIndexByte(v, ':')
		if i < 0 {
			return ""
		}
		v = v[:i]
	}
	if strings.HasPrefix(v, "$") || strings.Contains(v, "://") {
		return v
	}
	return filepath.Join(ex.dir, filepath.FromSlash(v))
}

// nested packages the nested template at local: its modules, its
// artifacts, its own nested templates. It reports whether the packaged
// child takes the bucket parameter.
func (ex *exporter) nested(local string, at Pos, user string) (Ref, bool, error) {
	s := ex.s
	rel, st, err := s.resolve(ex.dir, local, at)
	if err != nil {
		return Ref{}, false, err
	}
	if !st.Mode().IsRegular() {
		return Ref{}, false, s.errAt(at, fmt.Errorf("%w: %s is not a template file: name the nested stack's template", ErrArtifact, rel))
	}
	real := filepath.Join(s.rootReal, filepath.FromSlash(rel))
	display := filepath.Join(ex.dir, filepath.FromSlash(local))
	for i, f := range s.files {
		if f == real {
			var names []string
			for _, p := range s.chain[i:] {
				names = append(names, p.File)
			}
			names = append(names, display)
			return Ref{}, false, s.errAt(at, fmt.Errorf("%w: %s: a nested stack can not include itself; break the cycle", ErrCycle, strings.Join(names, " -> ")))
		}
	}
	if len(s.files) > maxNesting {
		return Ref{}, false, s.errAt(at, fmt.Errorf("%w: nested stacks more than %d deep", ErrTooLarge, maxNesting))
	}
	s.files = append(s.files, real)
	s.chain = append(s.chain, Pos{File: display})
	s.scope = append(s.scope, user)
	defer func() {
		s.files, s.chain, s.scope = s.files[:len(s.files)-1], s.chain[:len(s.chain)-1], s.scope[:len(s.scope)-1]
	}()
	t, err := cfn.Package(display, cfn.Options{Root: s.opts.Root, NoSourceMap: s.opts.NoSourceMap, Read: s.opts.Read})
	if err != nil {
		return Ref{}, false, err
	}
	if err := s.Export(t, display); err != nil {
		return Ref{}, false, err
	}
	var body []byte
	ext := ".yaml"
	if t.JSON {
		body, err = cfn.EncodeJSON(t.Root)
		ext = ".json"
	} else {
		body, err = cfn.EncodeYAML(t.Root)
	}
	if err != nil {
		return Ref{}, false, s.errAt(at, err)
	}
	ref, err := s.put(&Asset{data: body, Source: rel, Template: true}, at, ext, ".template")
	if err != nil {
		return Ref{}, false, err
	}
	return ref, get(get(t.Root, "Parameters"), BucketParameter) != nil, nil
}

// maxNesting bounds the depth of nested templates.
const maxNesting = 32

// passBucket gives a nested stack the bucket parameter.
func passBucket(props *yaml.Node, at Pos, s *Set) error {
	params := get(props, "Parameters")
	if params == nil {
		params = mapN()
		props.Content = append(props.Content, str("Parameters"), params)
	}
	if params.Kind != yaml.MappingNode {
		return s.errAt(at, fmt.Errorf("%w: the nested stack's Parameters is not a mapping, and its template needs the parameter %s: write Parameters as a mapping", ErrArtifact, BucketParameter))
	}
	if get(params, BucketParameter) == nil {
		params.Content = append(params.Content, str(BucketParameter), fnNode("Ref", str(BucketParameter)))
	}
	return nil
}

// usesBucket tells whether the template names the bucket parameter.
func usesBucket(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "Ref" && v.Kind == yaml.ScalarNode && v.Value == BucketParameter {
				return true
			}
			if k.Value == "Fn::Sub" {
				s := v
				if v.Kind == yaml.SequenceNode && len(v.Content) > 0 {
					s = v.Content[0]
				}
				if s.Kind == yaml.ScalarNode && strings.Contains(s.Value, "${"+BucketParameter+"}") {
					return true
				}
			}
			if usesBucket(v) {
				return true
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if usesBucket(c) {
				return true
			}
		}
	}
	return false
}

// bucketDescription marks the bucket parameter as the one assemble adds.
const bucketDescription = "The S3 bucket of the template's artifacts (added by assemble)"

// DeclareBucket adds the parameter BucketParameter to a template's
// Parameters (making the section when there is none), unless it is there.
// Export does it for a template that names the bucket; code that adds
// {Ref: AssembleAssetBucket} to a template before it is packaged (where
// every Ref must name a parameter) calls it first.
func DeclareBucket(root *yaml.Node) { declareBucket(root) }

// declareBucket adds the bucket parameter to the template's Parameters.
func declareBucket(root *yaml.Node) {
	decl := mapN(str("Type"), str("String"), str("Description"), str(bucketDescription))
	params := get(root, "Parameters")
	if params != nil && params.Kind == yaml.MappingNode {
		if get(params, BucketParameter) == nil {
			params.Content = append(params.Content, str(BucketParameter), decl)
		}
		return
	}
	sec := mapN(str(BucketParameter), decl)
	at := len(root.Content)
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "Rules", "Mappings", "Conditions", "Resources", "Outputs", "Modules":
			at = i
		}
		if at != len(root.Content) {
			break
		}
	}
	root.Content = append(root.Content[:at], append([]*yaml.Node{str("Parameters"), sec}, root.Content[at:]...)...)
}

// isLocal tells a string that may name a local path: not an S3 or HTTP(S)
// location.
func isLocal(v *yaml.Node) bool {
	if v == nil || v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		return false
	}
	l := strings.ToLower(v.Value)
	return !strings.HasPrefix(l, "s3://") && !strings.HasPrefix(l, "https://") && !strings.HasPrefix(l, "http://")
}

// replace puts the new value in the place of v, keeping its position.
func replace(v, with *yaml.Node) {
	line, col := v.Line, v.Column
	*v = *with
	v.Line, v.Column = line, col
	v.Style = 0
}

func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func getPath(m *yaml.Node, p []string) *yaml.Node {
	for _, k := range p {
		m = get(m, k)
	}
	return m
}
