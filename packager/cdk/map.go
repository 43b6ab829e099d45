package cdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
)

// A File is one file of the cdk.out and its name in the archive.
type File struct {
	Name string // archive name, below ArchiveDir
	Path string // the file on disk
}

// A Mapping is a cdk.out read into droplets. Nothing is written.
type Mapping struct {
	// Dir is the cdk.out folder, as given.
	Dir string
	// Manifest describes the cdk.out with droplets; its paths are archive
	// paths below ArchiveDir.
	Manifest *assembly.Manifest
	// Files lists every file of the cdk.out, sorted by Name.
	Files []File
	// Warnings: unknown artifact and asset kinds, assets no droplet can
	// describe, messages of artifacts that have no droplet, empty folders.
	Warnings []assembly.Finding

	// bound is the lower bound on the size of Manifest as manifest.json
	// that the mapping kept under assembly.MaxManifestSize.
	bound int64
}

// maxEmptyNamed bounds the warnings that name empty folders one by one.
const maxEmptyNamed = 10

// maxNesting bounds how deep nested assemblies (stages in stages) go.
const maxNesting = 32

// Map reads the cdk.out folder dir and describes it with droplets (see the
// package documentation). Errors wrap ErrCloudAssembly, ErrNotCopied,
// ErrOutside or assembly.ErrTooLarge, and name the file and field.
func Map(dir string) (*Mapping, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	t, err := walk(dir, root)
	if err != nil {
		return nil, err
	}
	mp := &mapper{t: t, ids: newIDSet(), visited: map[string]bool{}, covered: map[string]bool{}, execs: map[string]execList{},
		m: &assembly.Manifest{Schema: assembly.SchemaVersion, Droplets: map[string]*assembly.Droplet{}, Missing: map[string]*assembly.Missing{}}}
	if err := mp.assembly("", "", 0); err != nil {
		return nil, err
	}
	if err := notCopied(mp.absent); err != nil {
		return nil, err
	}
	out := &Mapping{Dir: dir, Manifest: mp.m, bound: mp.size}
	rels := make([]string, 0, len(t.files))
	for rel := range t.files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		out.Files = append(out.Files, File{Name: archiveName(rel), Path: t.files[rel].real})
		if t.files[rel].exec && !mp.covered[rel] {
			mp.warn(t.name(rel), "", "executable, but outside the asset folders whose droplets record executables: extract --cdk-out writes it without the executable bit")
		}
	}
	// Empty folders: the outermost of each, the first few by name.
	var empty []string
	for _, e := range t.empty {
		if p := path.Dir(e); p == "." || !t.isEmpty(p) {
			empty = append(empty, e)
		}
	}
	for i, e := range empty {
		if i == maxEmptyNamed {
			mp.warn(t.dir, "", "%d more empty folders, which extract --cdk-out does not write either", len(empty)-i)
			break
		}
		mp.warn(t.name(e), "", "an empty folder: an assembly holds files only, so extract --cdk-out does not write it")
	}
	out.Warnings = mp.warnings
	return out, nil
}

type mapper struct {
	t        *tree
	m        *assembly.Manifest
	ids      *idSet
	warnings []assembly.Finding
	visited  map[string]bool // nested assembly folders mapped
	covered  map[string]bool // files whose mode a droplet records or does not need
	execs    map[string]execList

	// absent: the errors for files and folders the cloud assembly names
	// that are not there, all reported together (a partial copy lacks
	// many).
	absent []error

	// size is a lower bound on the bytes the droplets made so far take in
	// manifest.json (IDs, types, properties, dependsOn and metadata, as
	// compact JSON). Parts of a cdk.out are copied to many droplets (an
	// asset manifest's droplets to each stack that depends on it, an
	// image's properties to each destination, an artifact's messages to
	// each of its droplets), so a small cdk.out can describe a manifest of
	// gigabytes: the mapping stops once size passes the bound every
	// manifest.json is held to.
	size int64
}

// notThere is the error for rel, which the cloud assembly names and the
// cdk.out lacks: format says what it is, with one %s for its name.
func (mp *mapper) notThere(rel, format string) error {
	name := mp.t.name(rel)
	return &absentError{name: name, msg: fmt.Sprintf(format, name)}
}

// skip records err, when it says a file or folder is not there, and
// reports whether it did: the mapping goes on without what needs it, so
// that Map names everything missing at once.
func (mp *mapper) skip(err error) bool {
	var ae *absentError
	if !errors.As(err, &ae) {
		return false
	}
	mp.absent = append(mp.absent, err)
	return true
}

// An absentError says a file or folder the cloud assembly names is not
// there. It wraps ErrNotCopied.
type absentError struct{ name, msg string }

func (e *absentError) Error() string {
	return ErrNotCopied.Error() + ": " + e.msg + ": copy the whole cdk.out folder, or synthesize it again"
}

func (e *absentError) Unwrap() error { return ErrNotCopied }

// maxAbsentNamed bounds how many missing names one error lists.
const maxAbsentNamed = 10

// notCopied is the error for every missing file and folder: the first in
// full, then the names of the others.
func notCopied(all []error) error {
	// A template is also a file asset: name it once.
	seen := map[string]bool{}
	var errs []error
	for _, err := range all {
		var ae *absentError
		if errors.As(err, &ae) && !seen[ae.name] {
			seen[ae.name] = true
			errs = append(errs, err)
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return &partialCopyError{errs: errs}
}

type partialCopyError struct{ errs []error }

func (e *partialCopyError) Error() string {
	var names []string
	for i, err := range e.errs[1:] {
		if i == maxAbsentNamed {
			names = append(names, fmt.Sprintf("and %d more", len(e.errs)-1-i))
			break
		}
		var ae *absentError
		errors.As(err, &ae)
		names = append(names, ae.name)
	}
	return fmt.Sprintf("%v (not there either: %s)", e.errs[0], strings.Join(names, ", "))
}

func (e *partialCopyError) Unwrap() []error { return e.errs }

// grow adds n bytes to the manifest's size, failing with
// assembly.ErrTooLarge past assembly.MaxManifestSize.
func (mp *mapper) grow(n int) error {
	if mp.size += int64(n); mp.size > assembly.MaxManifestSize {
		return fmt.Errorf("%w: the droplets that describe the cdk.out would take more than the %d bytes a manifest.json may hold (assets copied to many destinations, or depended on by many stacks?)", assembly.ErrTooLarge, assembly.MaxManifestSize)
	}
	return nil
}

// jsonSize is the size of v as compact JSON.
func jsonSize(v any) int {
	b, _ := json.Marshal(v)
	return len(b)
}

// add puts d in the manifest under the logical ID of id in the assembly at
// stage, its properties taking propSize bytes, and returns that ID.
func (mp *mapper) add(stage, id string, d *assembly.Droplet, propSize int) (string, error) {
	if len(mp.m.Droplets) >= assembly.MaxDroplets {
		return "", fmt.Errorf("%w: the cdk.out is described by more than %d droplets, the most a manifest may hold", assembly.ErrTooLarge, assembly.MaxDroplets)
	}
	did := mp.dropletID(stage, id)
	if err := mp.grow(len(did) + len(d.Type) + len(d.Environment) + propSize); err != nil {
		return "", err
	}
	mp.m.Droplets[did] = d
	return did, nil
}

func (mp *mapper) warn(file, field, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if field != "" {
		msg = field + ": " + msg
	}
	mp.warnings = append(mp.warnings, assembly.Finding{Severity: assembly.Warning, Message: file + ": " + msg})
}

// An asset droplet waits for its environment until the stacks of its
// assembly are mapped.
type pendingAsset struct {
	id     string
	region string
}

// assembly maps the CDK manifest in dir (a slash path below the root, ""
// for the root itself). stage is the stage path of a nested assembly.
func (mp *mapper) assembly(dir, stage string, depth int) error {
	rel := path.Join(dir, manifestFile)
	name := mp.t.name(rel)
	var cm cloudManifest
	if err := mp.t.readJSON(rel, &cm); err != nil {
		return err
	}
	if cm.Version == nil {
		return &Error{File: name, Err: fmt.Errorf(`%w: no "version": not a CDK cloud assembly manifest`, ErrCloudAssembly)}
	}
	for i, mc := range cm.Missing {
		field := fmt.Sprintf("missing[%d]", i)
		switch {
		case mc.Key == "":
			return &Error{File: name, Field: field, Err: fmt.Errorf(`%w: no "key"`, ErrCloudAssembly)}
		case mc.Provider == "":
			return &Error{File: name, Field: field, Err: fmt.Errorf(`%w: no "provider"`, ErrCloudAssembly)}
		case mc.Props == nil:
			return &Error{File: name, Field: field, Err: fmt.Errorf(`%w: no "props"`, ErrCloudAssembly)}
		}
		if _, dup := mp.m.Missing[mc.Key]; !dup {
			mp.m.Missing[mc.Key] = &assembly.Missing{Provider: mc.Provider, Props: mc.Props}
		}
	}
	ids := slices.Sorted(maps.Keys(cm.Artifacts))
	arts := make(map[string]*artifact, len(ids))
	for _, id := range ids {
		a := &artifact{}
		if err := decodeRaw(name, "artifacts."+id, cm.Artifacts[id], a); err != nil {
			return err
		}
		arts[id] = a
	}
	produced := map[string][]string{} // artifact -> its droplets
	stackEnv := map[string]string{}   // stack artifact -> droplet environment
	pending := map[string][]pendingAsset{}
	for _, id := range ids {
		a, field := arts[id], "artifacts."+id
		var err error
		switch a.Type {
		case typeStack:
			var did string
			did, err = mp.stack(dir, stage, id, a, name)
			if err == nil {
				produced[id] = []string{did}
				stackEnv[id] = mp.m.Droplets[did].Environment
			}
		case typeAssetManifest:
			pending[id], err = mp.assets(dir, stage, id, a, name)
			for _, p := range pending[id] {
				produced[id] = append(produced[id], p.id)
			}
		case typeNested:
			err = mp.nested(dir, stage, id, a, name, depth)
		case typeTree, typeFlagReport, typeNone:
		case "":
			err = &Error{File: name, Field: field, Err: fmt.Errorf(`%w: no "type"`, ErrCloudAssembly)}
		default:
			mp.warn(name, field, "artifact type %q is not known: its files are kept in the cdk.out, but no droplet describes it", a.Type)
		}
		if err != nil && !mp.skip(err) {
			return err
		}
		if err := mp.messages(dir, id, a, name, produced[id]); err != nil && !mp.skip(err) {
			return err
		}
	}
	for _, id := range ids {
		a := arts[id]
		var deps []string
		for i, dep := range a.Dependencies {
			if arts[dep] == nil {
				return &Error{File: name, Field: fmt.Sprintf("artifacts.%s.dependencies[%d]", id, i), Err: fmt.Errorf("%w: depends on %q, which is not an artifact of this manifest", ErrCloudAssembly, dep)}
			}
			deps = append(deps, produced[dep]...)
		}
		slices.Sort(deps)
		deps = slices.Compact(deps)
		// An artifact that depends on itself makes a droplet that does:
		// a cycle, which assembly.Check refuses as it refuses any other.
		for _, did := range produced[id] {
			for _, d := range deps {
				if err := mp.grow(len(d) + 3); err != nil {
					return &Error{File: name, Field: fmt.Sprintf("artifacts.%s.dependencies", id), Err: err}
				}
				mp.m.Droplets[did].DependsOn = append(mp.m.Droplets[did].DependsOn, d)
			}
		}
	}
	// The stack that depends on each asset manifest, the first by ID.
	dependent := map[string]string{}
	for _, id := range ids {
		if _, ok := stackEnv[id]; ok {
			for _, dep := range arts[id].Dependencies {
				if _, seen := dependent[dep]; !seen {
					dependent[dep] = id
				}
			}
		}
	}
	for _, id := range ids {
		if len(pending[id]) == 0 {
			continue
		}
		env := mp.assetEnvironment(id, arts[id], stackEnv, dependent)
		for _, p := range pending[id] {
			mp.m.Droplets[p.id].Environment = withRegion(env, p.region)
		}
	}
	return nil
}

// assetEnvironment is where the assets of an asset manifest go: the
// environment of the stack that depends on the manifest (CDK writes one
// manifest per stack), else the manifest's own, else an agnostic one.
// dependent maps an artifact to the first stack (by ID) that depends on it.
func (mp *mapper) assetEnvironment(id string, a *artifact, stackEnv, dependent map[string]string) string {
	if sid, ok := dependent[id]; ok {
		return stackEnv[sid]
	}
	if env, _, err := environment(a.Environment); err == nil && a.Environment != "" {
		return env
	}
	return "aws://" + assembly.UnknownAccount + "/" + assembly.UnknownRegion
}

// withRegion replaces the region of env by a destination's own region, when
// it names a real one.
func withRegion(env, region string) string {
	if region == "" {
		return env
	}
	e, err := assembly.ParseEnvironment(env)
	if err != nil {
		return env
	}
	if _, err := assembly.ParseEnvironment("aws://" + e.Account + "/" + region); err != nil {
		return env
	}
	return "aws://" + e.Account + "/" + region
}

var cdkEnvironmentRE = regexp.MustCompile(`^aws://([^/]+)/([^/]+)$`)

// environment maps a CDK environment ("aws://ACCOUNT/REGION", any account
// and region CDK accepts) to a droplet environment. One the spec's
// environment rules refuse (an account that is not 12 digits) becomes
// agnostic in that part, with a note saying so; the cdk.out keeps it.
func environment(s string) (env, note string, err error) {
	m := cdkEnvironmentRE.FindStringSubmatch(s)
	if m == nil {
		return "", "", fmt.Errorf("%w: environment %q: want aws://ACCOUNT/REGION", ErrCloudAssembly, s)
	}
	if _, err := assembly.ParseEnvironment(s); err == nil {
		return s, "", nil
	}
	account, region := m[1], m[2]
	var why []string
	if _, err := assembly.ParseEnvironment("aws://" + account + "/" + assembly.UnknownRegion); err != nil {
		why = append(why, fmt.Sprintf("account %q is not 12 digits", account))
		account = assembly.UnknownAccount
	}
	if _, err := assembly.ParseEnvironment("aws://" + assembly.UnknownAccount + "/" + region); err != nil {
		why = append(why, fmt.Sprintf("region %q is not a region name", region))
		region = assembly.UnknownRegion
	}
	env = "aws://" + account + "/" + region
	return env, fmt.Sprintf("CDK environment %s is not one AWS can deploy to (%s): the droplet names %s, the cdk.out keeps the original", s, strings.Join(why, ", "), env), nil
}

// dropletID is the logical ID of something named id in the assembly at
// stage: "Stage/Id", valid and unique.
func (mp *mapper) dropletID(stage, id string) string {
	if stage != "" {
		id = stage + "/" + id
	}
	return mp.ids.add(id)
}

// pathProperty is the archive path of rel as a droplet path property: a
// path holding "${" or a backslash would read as a reference or an escape.
func pathProperty(rel string) (string, error) {
	if strings.Contains(rel, "${") || strings.Contains(rel, `\`) {
		return "", fmt.Errorf("%w: %q: a file name holding \"${\" or a backslash cannot be a droplet path: rename it", ErrCloudAssembly, rel)
	}
	return archiveName(rel), nil
}

func (mp *mapper) stack(dir, stage, id string, a *artifact, name string) (string, error) {
	field := "artifacts." + id
	var p stackProperties
	if err := decodeRaw(name, field+".properties", a.Properties, &p); err != nil {
		return "", err
	}
	if p.TemplateFile == "" {
		return "", &Error{File: name, Field: field + ".properties", Err: fmt.Errorf(`%w: a stack artifact needs "templateFile"`, ErrCloudAssembly)}
	}
	tmpl, err := mp.t.resolve(dir, p.TemplateFile)
	if err != nil {
		return "", &Error{File: name, Field: field + ".properties.templateFile", Err: err}
	}
	if mp.t.files[tmpl] == nil {
		return "", &Error{File: name, Field: field + ".properties.templateFile", Err: mp.notThere(tmpl, "template %s is not there")}
	}
	template, err := pathProperty(tmpl)
	if err != nil {
		return "", &Error{File: name, Field: field + ".properties.templateFile", Err: err}
	}
	if a.Environment == "" {
		return "", &Error{File: name, Field: field, Err: fmt.Errorf(`%w: a stack artifact needs an "environment" (aws://ACCOUNT/REGION)`, ErrCloudAssembly)}
	}
	env, note, err := environment(a.Environment)
	if err != nil {
		return "", &Error{File: name, Field: field + ".environment", Err: err}
	}
	stackName := p.StackName
	if stackName == "" {
		stackName = id // CDK's default
	}
	if !assembly.ValidStackName(stackName) {
		// CDK refuses such a name at synthesis; a cdk.out that has one
		// was not made by it, and CloudFormation would refuse the stack.
		return "", &Error{File: name, Field: field, Err: fmt.Errorf(`%w: stack name %q is not one CloudFormation accepts (a letter, then letters, digits and hyphens, at most 128 characters): set "stackName" in the artifact's properties`, ErrCloudAssembly, stackName)}
	}
	props := map[string]any{"stackName": literal(stackName), "template": template}
	if len(p.Parameters) > 0 {
		props["parameters"] = literalMap(p.Parameters)
	}
	if len(p.Tags) > 0 {
		props["tags"] = literalMap(p.Tags)
	}
	if p.TerminationProtection != nil && *p.TerminationProtection {
		props["terminationProtection"] = true
	}
	if len(p.NotificationArns) > 0 {
		props["notificationArns"] = literalList(p.NotificationArns)
	}
	d := &assembly.Droplet{Type: droplets.StackType, Environment: env, Properties: props}
	if note != "" {
		d.Metadata = map[string]*assembly.Metadata{"cdk:environment": {Kind: "warning", Value: note}}
	}
	did, err := mp.add(stage, id, d, jsonSize(props)+len(note))
	if err != nil {
		return "", &Error{File: name, Field: field, Err: err}
	}
	mp.covered[tmpl] = true
	return did, nil
}

func (mp *mapper) nested(dir, stage, id string, a *artifact, name string, depth int) error {
	field := "artifacts." + id + ".properties"
	var p nestedProperties
	if err := decodeRaw(name, field, a.Properties, &p); err != nil {
		return err
	}
	if p.DirectoryName == "" {
		return &Error{File: name, Field: field, Err: fmt.Errorf(`%w: a nested assembly needs "directoryName"`, ErrCloudAssembly)}
	}
	rel, err := mp.t.resolve(dir, p.DirectoryName)
	if err != nil {
		return &Error{File: name, Field: field + ".directoryName", Err: err}
	}
	switch {
	case depth+1 > maxNesting:
		return &Error{File: name, Field: field + ".directoryName", Err: fmt.Errorf("%w: nested assemblies go deeper than %d levels", ErrCloudAssembly, maxNesting)}
	case mp.visited[rel] || rel == dir:
		return &Error{File: name, Field: field + ".directoryName", Err: fmt.Errorf("%w: %s is nested twice (a cycle?)", ErrCloudAssembly, mp.t.name(rel))}
	case mp.t.files[path.Join(rel, "manifest.json")] == nil:
		return &Error{File: name, Field: field + ".directoryName", Err: mp.notThere(path.Join(rel, manifestFile), "nested assembly %s is not there")}
	}
	mp.visited[rel] = true
	display := p.DisplayName
	if display == "" {
		display = a.DisplayName
	}
	if display == "" {
		display = id
	}
	return mp.assembly(rel, stagePath(stage, display), depth+1)
}

// stagePath is the path of a nested assembly named name inside the stage
// at parent. CDK names a stage by its full construct path ("Outer/Inner"),
// so a name that already starts with the parent's path is kept.
func stagePath(parent, name string) string {
	if parent == "" || strings.HasPrefix(name, parent+"/") {
		return name
	}
	return parent + "/" + name
}

// messages turns an artifact's aws:cdk:warning, aws:cdk:error and
// aws:cdk:info metadata (from the manifest, then from its
// additionalMetadataFile) into metadata of its droplets, keyed by construct
// path ("/Stack/Bucket", then "/Stack/Bucket#2", ...). An artifact without
// droplets reports them as build warnings.
func (mp *mapper) messages(dir, id string, a *artifact, name string, dids []string) error {
	entries := a.Metadata
	file := name
	if a.AdditionalMetadataFile != "" {
		field := "artifacts." + id + ".additionalMetadataFile"
		rel, err := mp.t.resolve(dir, a.AdditionalMetadataFile)
		if err != nil {
			return &Error{File: name, Field: field, Err: err}
		}
		if mp.t.files[rel] == nil {
			return &Error{File: name, Field: field, Err: mp.notThere(rel, "%s is not there")}
		}
		var more map[string][]metadataEntry
		if err := mp.t.readJSON(rel, &more); err != nil {
			return err
		}
		merged := make(map[string][]metadataEntry, len(entries)+len(more))
		for k, v := range entries {
			merged[k] = v
		}
		for k, v := range more {
			merged[k] = append(merged[k], v...)
		}
		entries, file = merged, mp.t.name(rel)
	}
	// A message's key is its construct path, or "<path>#2", "#3", ... for
	// the next ones there, skipping keys the droplets hold already (a
	// construct path "/A#2" beside two messages at "/A"; the environment
	// note), so no message replaces another.
	next := map[string]int{}
	key := func(cpath string) string {
		n, k := max(next[cpath], 1), cpath
		if n > 1 {
			k = fmt.Sprintf("%s#%d", cpath, n)
		}
		for slices.ContainsFunc(dids, func(did string) bool { return mp.m.Droplets[did].Metadata[k] != nil }) {
			n++
			k = fmt.Sprintf("%s#%d", cpath, n)
		}
		next[cpath] = n + 1
		return k
	}
	for _, cpath := range slices.Sorted(maps.Keys(entries)) {
		for _, e := range entries[cpath] {
			kind, ok := messageKinds[e.Type]
			if !ok {
				continue
			}
			if len(dids) == 0 {
				mp.warn(file, "", "%s at %s: %v", kind, cpath, e.Data)
				continue
			}
			key := key(cpath)
			size := len(key) + len(kind) + jsonSize(e.Data)
			for _, did := range dids {
				if err := mp.grow(size); err != nil {
					return &Error{File: file, Field: cpath, Err: err}
				}
				d := mp.m.Droplets[did]
				if d.Metadata == nil {
					d.Metadata = map[string]*assembly.Metadata{}
				}
				d.Metadata[key] = &assembly.Metadata{Kind: kind, Value: e.Data}
			}
		}
	}
	return nil
}

// assets maps the assets of an asset manifest artifact, one droplet per
// asset and destination.
func (mp *mapper) assets(dir, stage, id string, a *artifact, name string) ([]pendingAsset, error) {
	field := "artifacts." + id + ".properties"
	var p assetManifestProperties
	if err := decodeRaw(name, field, a.Properties, &p); err != nil {
		return nil, err
	}
	if p.File == "" {
		return nil, &Error{File: name, Field: field, Err: fmt.Errorf(`%w: an asset manifest artifact needs "file"`, ErrCloudAssembly)}
	}
	rel, err := mp.t.resolve(dir, p.File)
	if err != nil {
		return nil, &Error{File: name, Field: field + ".file", Err: err}
	}
	if mp.t.files[rel] == nil {
		return nil, &Error{File: name, Field: field + ".file", Err: mp.notThere(rel, "asset manifest %s is not there")}
	}
	var am assetManifest
	if err := mp.t.readJSON(rel, &am); err != nil {
		return nil, err
	}
	as := &assetSet{mp: mp, file: mp.t.name(rel), base: path.Dir(rel), prefix: stage, artifact: id}
	for _, kind := range slices.Sorted(maps.Keys(am)) {
		switch kind {
		case "version":
		case "files":
			err = as.files(am[kind])
		case "dockerImages":
			err = as.images(am[kind])
		default:
			mp.warn(as.file, "", "asset kind %q is not known: its files are kept in the cdk.out, but no droplet describes them", kind)
		}
		if err != nil {
			return nil, err
		}
	}
	return as.out, nil
}

// An assetSet maps the assets of one asset manifest.
type assetSet struct {
	mp       *mapper
	file     string // archive name of the asset manifest
	base     string // its folder, below the cdk.out
	prefix   string // stage path
	artifact string // the asset manifest artifact's ID
	out      []pendingAsset
}

func (as *assetSet) errAt(field string, err error) error {
	return &Error{File: as.file, Field: field, Err: err}
}

// source resolves an asset's source path and says whether it is a file
// or a folder holding files.
func (as *assetSet) source(field, p string) (rel string, isDir bool, err error) {
	t := as.mp.t
	rel, err = t.resolve(as.base, p)
	if err != nil {
		return "", false, as.errAt(field, err)
	}
	switch {
	case t.files[rel] != nil:
		return rel, false, nil
	case t.dirs[rel]:
		return rel, true, nil
	case t.isEmpty(rel):
		return "", false, as.errAt(field, fmt.Errorf("%w: %s is an empty folder, which an assembly cannot hold: give the asset a file", ErrCloudAssembly, t.name(rel)))
	}
	return "", false, as.errAt(field, as.mp.notThere(rel, "%s is not there (the asset folders were not copied?)"))
}

// destinations decodes an asset's destinations, sorted by ID.
func (as *assetSet) destinations(field string, raw map[string]json.RawMessage, each func(destID, field string, multi bool) error) error {
	if len(raw) == 0 {
		as.mp.warn(as.file, field, "no destinations: nothing publishes this asset, so no droplet describes it")
		return nil
	}
	for _, destID := range slices.Sorted(maps.Keys(raw)) {
		if err := each(destID, field+".destinations."+destID, len(raw) > 1); err != nil {
			return err
		}
	}
	return nil
}

// assetID names an asset at one destination, for mapper.add:
// "<stage>/<manifest artifact>/<asset>[/<destination>]", where the asset is
// named by its display name when CDK gives one ("Service.assets" and
// "Handler/Code" make "Service-assets/Handler/Code"), so the ID does not
// change with the asset's content hash; else by that hash.
func (as *assetSet) assetID(assetID, displayName, destID string, multi bool) string {
	if displayName != "" {
		assetID = displayName
	}
	id := as.artifact + "/" + assetID
	if multi {
		id += "/" + destID
	}
	return id
}

func (as *assetSet) files(raw json.RawMessage) error {
	var all map[string]json.RawMessage
	if err := decodeRaw(as.file, "files", raw, &all); err != nil {
		return err
	}
	for _, assetID := range slices.Sorted(maps.Keys(all)) {
		field := "files." + assetID
		var fa fileAsset
		if err := decodeRaw(as.file, field, all[assetID], &fa); err != nil {
			return err
		}
		if fa.Source.Path == "" {
			if len(fa.Source.Executable) > 0 {
				as.mp.warn(as.file, field, "made by a command when it is published (source.executable): the assembly cannot hold what it makes, so no droplet describes it")
				continue
			}
			return as.errAt(field+".source", fmt.Errorf(`%w: a file asset needs "path" or "executable"`, ErrCloudAssembly))
		}
		rel, isDir, err := as.source(field+".source.path", fa.Source.Path)
		if err != nil {
			if as.mp.skip(err) {
				continue
			}
			return err
		}
		src, err := pathProperty(rel)
		if err != nil {
			return as.errAt(field+".source.path", err)
		}
		var ex execList
		if isDir {
			ex = as.mp.executables(rel)
		}
		err = as.destinations(field, fa.Destinations, func(destID, dfield string, multi bool) error {
			var d fileDestination
			if err := decodeRaw(as.file, dfield, fa.Destinations[destID], &d); err != nil {
				return err
			}
			if d.BucketName == "" || d.ObjectKey == "" {
				return as.errAt(dfield, fmt.Errorf(`%w: a file destination needs "bucketName" and "objectKey"`, ErrCloudAssembly))
			}
			props := map[string]any{"bucketName": literal(d.BucketName), "objectKey": literal(d.ObjectKey)}
			typ := droplets.FileType
			if isDir {
				typ = droplets.DirectoryType
				props["directory"] = src
				if len(ex.list) > 0 {
					props["executables"] = ex.list
				}
			} else {
				props["file"] = src
				as.mp.covered[rel] = true // S3 keeps no file mode
			}
			id, err := as.mp.add(as.prefix, as.assetID(assetID, fa.DisplayName, destID, multi), &assembly.Droplet{Type: typ, Properties: props},
				len(d.BucketName)+len(d.ObjectKey)+len(src)+ex.size)
			if err != nil {
				return as.errAt(dfield, err)
			}
			as.out = append(as.out, pendingAsset{id: id, region: d.Region})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (as *assetSet) images(raw json.RawMessage) error {
	var all map[string]json.RawMessage
	if err := decodeRaw(as.file, "dockerImages", raw, &all); err != nil {
		return err
	}
	for _, assetID := range slices.Sorted(maps.Keys(all)) {
		field := "dockerImages." + assetID
		var ia imageAsset
		if err := decodeRaw(as.file, field, all[assetID], &ia); err != nil {
			return err
		}
		s := ia.Source
		if s.Directory == "" {
			if len(s.Executable) > 0 {
				as.mp.warn(as.file, field, "built by a command when it is published (source.executable): the assembly cannot hold what it builds, so no droplet describes it")
				continue
			}
			return as.errAt(field+".source", fmt.Errorf(`%w: a Docker image asset needs "directory" or "executable"`, ErrCloudAssembly))
		}
		rel, isDir, err := as.source(field+".source.directory", s.Directory)
		if err != nil {
			if as.mp.skip(err) {
				continue
			}
			return err
		}
		if !isDir {
			return as.errAt(field+".source.directory", fmt.Errorf("%w: %s is a file, not a build context folder", ErrCloudAssembly, as.mp.t.name(rel)))
		}
		ctx, err := pathProperty(rel)
		if err != nil {
			return as.errAt(field+".source.directory", err)
		}
		dockerFile := s.DockerFile
		if dockerFile == "" {
			dockerFile = "Dockerfile"
		}
		// Whether the context holds it is assembly.Check's to say (the
		// dockerFile property names a file below directory).
		props := map[string]any{"directory": ctx, "dockerFile": literal(dockerFile)}
		for k, v := range map[string]string{"buildTarget": s.DockerBuildTarget, "buildSsh": s.DockerBuildSsh, "networkMode": s.NetworkMode, "platform": s.Platform} {
			if v != "" {
				props[k] = literal(v)
			}
		}
		for k, v := range map[string]map[string]string{"buildArgs": s.DockerBuildArgs, "buildSecrets": s.DockerBuildSecrets, "buildContexts": s.DockerBuildContexts} {
			if len(v) > 0 {
				props[k] = literalMap(v)
			}
		}
		if len(s.DockerOutputs) > 0 {
			props["outputs"] = literalList(s.DockerOutputs)
		}
		if s.CacheFrom != nil {
			props["cacheFrom"] = literalValue(s.CacheFrom)
		}
		if s.CacheTo != nil {
			props["cacheTo"] = literalValue(s.CacheTo)
		}
		if s.CacheDisabled != nil {
			props["cacheDisabled"] = *s.CacheDisabled
		}
		if ex := as.mp.executables(rel); len(ex.list) > 0 {
			props["executables"] = ex.list
		}
		size := jsonSize(props)
		err = as.destinations(field, ia.Destinations, func(destID, dfield string, multi bool) error {
			var d imageDestination
			if err := decodeRaw(as.file, dfield, ia.Destinations[destID], &d); err != nil {
				return err
			}
			if d.RepositoryName == "" || d.ImageTag == "" {
				return as.errAt(dfield, fmt.Errorf(`%w: an image destination needs "repositoryName" and "imageTag"`, ErrCloudAssembly))
			}
			dp := make(map[string]any, len(props)+2)
			for k, v := range props {
				dp[k] = v
			}
			dp["repositoryName"], dp["imageTag"] = literal(d.RepositoryName), literal(d.ImageTag)
			id, err := as.mp.add(as.prefix, as.assetID(assetID, ia.DisplayName, destID, multi), &assembly.Droplet{Type: droplets.DockerBuildType, Properties: dp},
				size+len(d.RepositoryName)+len(d.ImageTag))
			if err != nil {
				return as.errAt(dfield, err)
			}
			as.out = append(as.out, pendingAsset{id: id, region: d.Region})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// An execList is the executables property of a folder, and its size.
type execList struct {
	list []any
	size int
}

// executables lists the files under the folder rel that carry an
// executable bit, relative to it, and marks them recorded. Each folder's
// list is made once, however many assets name it.
func (mp *mapper) executables(rel string) execList {
	if ex, ok := mp.execs[rel]; ok {
		return ex
	}
	var out []string
	ex := execList{}
	for i := sort.SearchStrings(mp.t.execs, rel+"/"); i < len(mp.t.execs); i++ {
		f := mp.t.execs[i]
		sub, ok := strings.CutPrefix(f, rel+"/")
		if !ok {
			break
		}
		out = append(out, sub)
		ex.size += len(sub) + 3
		mp.covered[f] = true
	}
	ex.list = literalList(out)
	mp.execs[rel] = ex
	return ex
}

// literal escapes s for a droplet property: CDK's ${AWS::AccountId}-style
// placeholders stay what they are (\${...}) instead of reading as
// references to droplets.
func literal(s string) string { return assembly.FormatString([]assembly.Part{{Literal: s}}) }

func literalMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = literal(v)
	}
	return out
}

func literalList(l []string) []any {
	out := make([]any, len(l))
	for i, v := range l {
		out[i] = literal(v)
	}
	return out
}

// literalValue escapes every string inside a JSON value.
func literalValue(v any) any {
	switch v := v.(type) {
	case string:
		return literal(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = literalValue(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = literalValue(e)
		}
		return out
	}
	return v
}
