package cdk

import (
	"errors"
	"testing"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
)

func dirDroplet(dir string, execs ...any) *assembly.Droplet {
	return &assembly.Droplet{Type: droplets.DirectoryType, Environment: "aws://unknown-account/unknown-region",
		Properties: map[string]any{"directory": dir, "bucketName": "b", "objectKey": "k", "executables": execs}}
}

func TestOutFiles(t *testing.T) {
	names := []string{"manifest.json", "cdk.out/manifest.json", "cdk.out/asset.a/run", "cdk.out/asset.a/lib/x", "cdk.out/my${x}/f", "other/file"}
	m := &assembly.Manifest{Schema: assembly.SchemaVersion, Droplets: map[string]*assembly.Droplet{
		"A": dirDroplet("cdk.out/asset.a", "run"),
		"B": dirDroplet("cdk.out/my${x}", `f`),
		"C": dirDroplet("elsewhere", "whatever"), // not below cdk.out: not ours
	}}
	out, err := OutFiles(m, names)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range out {
		got[f.Path] = f.Executable
	}
	want := map[string]bool{"manifest.json": false, "asset.a/run": true, "asset.a/lib/x": false, "my${x}/f": true}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if e, ok := got[k]; !ok || e != v {
			t.Errorf("%s: got %v %v, want %v", k, ok, e, v)
		}
	}
}

func TestOutFilesErrors(t *testing.T) {
	names := []string{"manifest.json", "cdk.out/manifest.json", "cdk.out/asset.a/run"}
	tests := []struct {
		name  string
		names []string
		d     *assembly.Droplet
		err   error
	}{
		{"no cdk.out", []string{"manifest.json", "stacks/a.yaml"}, dirDroplet("x", "y"), ErrNoCDKOut},
		{"no file", names, dirDroplet("cdk.out/asset.a", "gone"), ErrCloudAssembly},
		{"leaves the folder", names, dirDroplet("cdk.out/asset.a/lib", "../run"), ErrCloudAssembly},
		{"not clean", names, dirDroplet("cdk.out/asset.a", "./run"), ErrCloudAssembly},
		{"not a string", names, dirDroplet("cdk.out/asset.a", 7), ErrCloudAssembly},
		{"a reference", names, dirDroplet("cdk.out/asset.a", "${X.y}"), ErrCloudAssembly},
	}
	for _, tt := range tests {
		m := &assembly.Manifest{Schema: assembly.SchemaVersion, Droplets: map[string]*assembly.Droplet{"D": tt.d}}
		if _, err := OutFiles(m, tt.names); !errors.Is(err, tt.err) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.err)
		}
	}
}
