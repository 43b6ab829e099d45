package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestZZSweep(t *testing.T) {
	dir, env := jsonFixture(t)
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	os.Symlink("nowhere", filepath.Join(dir, "dang"))
	lines := []string{
		"build", "build --nosuch", "build -o " + dir + "/d " + env["webapp"], "build -o " + dir + "/dang " + env["webapp"],
		"inspect", "inspect a b", "graph", "package", "package " + dir, "attest", "sign", "sign -o " + dir + "/d --key " + env["secret"] + " " + env["unsigned"],
		"verify", "verify --keyring " + env["trusted"], "verify --keyring " + env["trusted"] + " --policy " + env["broken"] + " " + env["signed"],
		"extract", "extract --allow-unsigned -d " + dir + "/ex " + env["unsigned"], "extract --allow-unsigned -d " + dir + "/ex2 " + env["signed"],
		"schema", "schema validate", "schema nosuch", "module", "module validate", "module schema", "blueprint", "blueprint validate",
		"version x", "completion", "man x", "help nosuch", "nosuch",
		"verify --keyring " + env["trusted"] + " --untrusted-keyring " + env["untrusted"] + " " + env["foreign"],
		"sign --key " + env["secret"] + " -o " + env["secret"] + " " + env["unsigned"],
		"package -o " + env["module"] + " " + env["template"],
		"graph -o " + dir + "/d " + env["signed"],
		"module schema --type-name A::B::C::MODULE " + env["fragment"],
		"verify --keyring " + env["trusted"] + " --require-signer x " + env["signed"],
		"inspect --query droplets " + env["signed"],
	}
	for _, l := range lines {
		args := append([]string{"assemble"}, strings.Fields(l)...)
		args = append(args, "--json")
		var stdout, stderr bytes.Buffer
		exit := run(context.Background(), args, nil, &stdout, &stderr)
		app := newApp(nil, nil, nil)
		path, _, _ := commandPath(app, reorderArgs(app, args))
		err := checkJSONOutput(path, exit, stdout.Bytes())
		t.Logf("%-60.60s exit=%d schemaerr=%v out=%.150q", l, exit, err, stdout.String())
	}
}
