package cfn

// Part-2 features that live in their own packages, wired into the engine:
// Fn::Flatten, Packages, and module sources resolved by package source
// (package zips, HTTPS, Hash pinning). Fn::Merge and ParameterSchema are
// wired in resolve.go and engine.go on the modules branch.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cloud-assembly/assemble/packager/cfn/flatten"
	"github.com/cloud-assembly/assemble/packager/cfn/source"
	yaml "go.yaml.in/yaml/v3"
)

// fnFlatten evaluates Fn::Flatten once its argument is resolved in the
// scope (a module parameter in Source becomes its value).
func (sc *scope) fnFlatten(n, arg *yaml.Node) (*yaml.Node, error) {
	r, err := sc.resolve(arg)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, sc.errorf(arg, ErrInvalid, "Fn::Flatten needs a list or an object with Source")
	}
	// Fn::Flatten runs only at packaging time, so a Source naming a
	// parameter of the top template can only mean its Default, as for
	// ForEach lists.
	if d := sc.topDefault(r); d != nil {
		r = d
	} else if src := mapGet(r, "Source"); src != nil {
		if d := sc.topDefault(src); d != nil {
			mapSet(r, "Source", d)
		}
	}
	out, err := flatten.Flatten(r)
	if err != nil {
		return nil, sc.errorf(n, sentinelFor(err), "%v", err)
	}
	return out, nil
}

// topDefault returns a copy of the Default of the top template's parameter
// that n refers to ({Ref: Name}), or nil.
func (sc *scope) topDefault(n *yaml.Node) *yaml.Node {
	k, v, ok := single(n)
	if !ok || k != "Ref" || !isStr(v) {
		return nil
	}
	if d := mapGet(mapGet(mapGet(sc.e.ext.topRoot, "Parameters"), v.Value), "Default"); d != nil {
		return clone(d)
	}
	return nil
}

func sentinelFor(err error) error {
	if errors.Is(err, flatten.ErrTooLarge) {
		return ErrTooLarge
	}
	return ErrInvalid
}

// checkHash verifies a module entry's Hash (sha256:<hex>) against the
// module's content.
func (sc *scope) checkHash(entry *yaml.Node, data []byte) error {
	h := mapGet(entry, "Hash")
	if h == nil {
		return nil
	}
	if !isStr(h) {
		return sc.errorf(h, ErrInvalid, "Hash must be a string sha256:<64 hex digits>")
	}
	err := source.CheckHash(h.Value, data)
	var he *source.HashError
	switch {
	case errors.As(err, &he):
		return sc.errorf(h, ErrInvalid, "the module does not match its Hash: pinned %s, got %s; update the Hash if the module changed on purpose", he.Want, he.Got)
	case err != nil:
		return sc.errorf(h, ErrInvalid, "%v", err)
	}
	return nil
}

// extensions is the engine's state for this file's features.
type extensions struct {
	res     *resolverLoader // the default loader; nil with Options.Load
	topRoot *yaml.Node      // the top template, for its parameters' Defaults
}

// runExtensions runs first when a scope is expanded: it notes the top
// template, registers the scope's Packages and checks the Hash of the
// modules that pin one.
func (sc *scope) runExtensions() error {
	if sc.top {
		sc.e.ext.topRoot = sc.t.Root
	}
	if err := sc.addPackages(); err != nil {
		return err
	}
	mods, err := sc.section("Modules")
	if err != nil || mods == nil {
		return err
	}
	for i := 0; i+1 < len(mods.Content); i += 2 {
		entry := mods.Content[i+1]
		src := mapGet(entry, "Source")
		if mapGet(entry, "Hash") == nil || !isStr(src) || src.Value == "" {
			continue
		}
		_, data, err := sc.e.load(sc.file, src.Value)
		if err != nil {
			return wrapLoad(sc.file, src.Line, src.Column, sc.chain, err)
		}
		if err := sc.checkHash(entry, data); err != nil {
			return err
		}
	}
	return nil
}

// addPackages registers the Packages section of the scope's file with the
// resolver, so that Sources like $alias/module.yaml work from any file.
func (sc *scope) addPackages() error {
	pk, err := sc.section("Packages")
	if err != nil || pk == nil {
		return err
	}
	if sc.e.ext.res == nil {
		return sc.errorf(pk, ErrInvalid, "Packages need the default module loader; a custom Options.Load cannot read them")
	}
	from, err := sc.e.ext.res.location(sc.file)
	if err != nil {
		return sc.errorf(pk, ErrInvalid, "%v", err)
	}
	for i := 0; i+1 < len(pk.Content); i += 2 {
		k, v := pk.Content[i], pk.Content[i+1]
		src, hash := mapGet(v, "Source"), mapGet(v, "Hash")
		if !isStr(src) || src.Value == "" || (hash != nil && !isStr(hash)) {
			return sc.errorf(v, ErrInvalid, "package %s needs a Source (a zip file or an https:// URL) and at most a Hash string", k.Value)
		}
		h := ""
		if hash != nil {
			h = hash.Value
		}
		if err := sc.e.ext.res.r.AddPackage(from, k.Value, src.Value, h); err != nil {
			return sc.errorf(k, ErrInvalid, "%v", err)
		}
	}
	return nil
}

// resolverLoader is the default Loader. Local paths named by local files
// go to LocalLoader, unchanged; package entries ($alias/path), HTTPS URLs,
// other schemes and anything named from inside a package or a download go
// through a source.Resolver. Package entries are named $alias/path and
// downloads by their URL.
type resolverLoader struct {
	local Loader
	r     *source.Resolver
	locs  map[string]source.Location // files that are not local paths
}

func newResolverLoader(root string) (*resolverLoader, error) {
	local, err := LocalLoader(root)
	if err != nil {
		return nil, err
	}
	r, err := source.New(root, &source.Options{MaxFileSize: MaxFileBytes})
	if err != nil {
		return nil, fmt.Errorf("cfn: project folder: %w", err)
	}
	return &resolverLoader{local: local, r: r, locs: map[string]source.Location{}}, nil
}

func (rl *resolverLoader) location(file string) (source.Location, error) {
	if loc, ok := rl.locs[file]; ok {
		return loc, nil
	}
	return rl.r.FileLocation(file)
}

func (rl *resolverLoader) load(from, src string) (string, []byte, error) {
	loc, remote := rl.locs[from]
	if !remote && !strings.Contains(src, "://") && !strings.HasPrefix(src, "$") {
		return rl.local(from, src)
	}
	if !remote {
		var err error
		if loc, err = rl.r.FileLocation(from); err != nil {
			return "", nil, mapSourceErr(err)
		}
	}
	data, got, err := rl.r.Resolve(context.Background(), loc, src, "")
	if err != nil {
		return "", nil, mapSourceErr(err)
	}
	file := got.String()
	if got.Kind == source.File {
		file = got.Path
	} else {
		rl.locs[file] = got
	}
	return file, data, nil
}

func mapSourceErr(err error) error {
	switch {
	case errors.Is(err, source.ErrOutsideRoot), errors.Is(err, source.ErrOutsidePackage):
		return fmt.Errorf("%w: %s", ErrOutsideRoot, strings.TrimPrefix(err.Error(), "source: "))
	case errors.Is(err, source.ErrTooLarge):
		return fmt.Errorf("%w: %s", ErrTooLarge, strings.TrimPrefix(err.Error(), "source: "))
	}
	return fmt.Errorf("%w: %s", ErrInvalid, strings.TrimPrefix(err.Error(), "source: "))
}
