package cdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/limitio"
)

// The names CDK gives the files Find looks at.
const (
	manifestFile = "manifest.json"
	appFile      = "cdk.json"
	defaultOut   = "cdk.out"
)

// maxAppFileSize bounds cdk.json.
const maxAppFileSize = 1 << 20

// IsCloudAssembly reports whether dir holds a CDK cloud-assembly manifest:
// a manifest.json whose top-level object has a "version" string and an
// "artifacts" object. (A Cloud Assembly manifest has "schema" and
// "droplets" instead.)
func IsCloudAssembly(dir string) bool {
	ok, _ := cloudAssembly(dir)
	return ok
}

// cloudAssembly is IsCloudAssembly, with an error wrapping
// assembly.ErrTooLarge for a manifest.json too large to read: a build
// says so, instead of that it found no cloud assembly.
func cloudAssembly(dir string) (bool, error) {
	name := filepath.Join(dir, manifestFile)
	b, err := limitio.ReadFile(name, maxJSONSize)
	var tl *limitio.TooLargeError
	if errors.As(err, &tl) {
		return false, &Error{File: name, Err: fmt.Errorf("%w: %v, too large to read as a CDK cloud assembly manifest", assembly.ErrTooLarge, err)}
	}
	if err != nil {
		return false, nil
	}
	var top struct {
		Version   any `json:"version"`
		Artifacts any `json:"artifacts"`
	}
	if json.Unmarshal(b, &top) != nil {
		return false, nil
	}
	_, isString := top.Version.(string)
	_, isObject := top.Artifacts.(map[string]any)
	return isString && isObject, nil
}

// Find returns the cdk.out folder to build for target, or "" when target is
// not a CDK cloud assembly nor a folder holding one:
//
//   - a folder that is a cloud assembly (IsCloudAssembly), or its
//     manifest.json: that folder;
//   - a CDK app folder (holding cdk.json): the folder cdk.json's "output"
//     names, by default cdk.out; ErrNotSynthesized when it holds no cloud
//     assembly yet;
//   - a folder holding a cdk.out folder that is a cloud assembly: that one.
//
// A manifest.json in any of these places that is too large to read is an
// error wrapping assembly.ErrTooLarge.
func Find(target string) (string, error) {
	st, err := os.Stat(target)
	if err != nil {
		return "", nil
	}
	if !st.IsDir() {
		if filepath.Base(target) != manifestFile {
			return "", nil
		}
		if ok, err := cloudAssembly(filepath.Dir(target)); !ok {
			return "", err
		}
		return filepath.Dir(target), nil
	}
	if ok, err := cloudAssembly(target); err != nil {
		return "", err
	} else if ok {
		return target, nil
	}
	out := filepath.Join(target, defaultOut)
	app := filepath.Join(target, appFile)
	b, err := limitio.ReadFile(app, maxAppFileSize)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if ok, err := cloudAssembly(out); err != nil || !ok {
			return "", err
		}
		return out, nil
	case err != nil:
		return "", fmt.Errorf("%w: %s: %v", ErrCloudAssembly, app, err)
	}
	var cfg struct {
		Output string `json:"output"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrCloudAssembly, app, err)
	}
	if cfg.Output != "" {
		out = cfg.Output
		if !filepath.IsAbs(out) {
			out = filepath.Join(target, out)
		}
	}
	if ok, err := cloudAssembly(out); err != nil {
		return "", err
	} else if !ok {
		return "", fmt.Errorf("%w: %s is a CDK app (%s) but %s holds no cloud assembly: run cdk synth first, then build again", ErrNotSynthesized, target, appFile, out)
	}
	return out, nil
}
