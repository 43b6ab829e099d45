package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJSONOutputOddCases runs the command lines TestJSONOutputs has no
// case for (a missing or extra argument, an unknown flag, command or
// subcommand, a group run without a subcommand, an output that is a
// folder, a dangling link or an input) with --json: each prints one JSON
// object its schema accepts, exits as the table says, and a failure names
// the code of its cause (the object's error.code; "" where the verdict
// object stands in for an error).
func TestJSONOutputOddCases(t *testing.T) {
	dir, env := jsonFixture(t)
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	os.Symlink("nowhere", filepath.Join(dir, "dang"))
	cases := []struct {
		line string
		exit int
		code string
	}{
		{"build", 1, "invalid_project"},
		{"build --nosuch", 2, "usage"},
		{"build -o " + dir + "/d " + env["webapp"], 1, "output_is_folder"},
		{"build -o " + dir + "/dang " + env["webapp"], 1, "dangling_link"},
		{"inspect", 2, "usage"},
		{"inspect a b", 2, "usage"},
		{"graph", 2, "usage"},
		{"package", 2, "usage"},
		{"package " + dir, 1, "is_folder"},
		{"attest", 2, "usage"},
		{"sign", 2, "usage"},
		{"sign -o " + dir + "/d --key " + env["secret"] + " " + env["unsigned"], 1, "output_is_folder"},
		{"verify", 2, "usage"},
		{"verify --keyring " + env["trusted"], 2, "usage"},
		{"verify --keyring " + env["trusted"] + " --policy " + env["broken"] + " " + env["signed"], 1, "invalid_policy"},
		{"extract", 2, "usage"},
		{"extract --allow-unsigned -d " + dir + "/ex " + env["unsigned"], 0, ""},
		{"extract --allow-unsigned -d " + dir + "/ex2 " + env["signed"], 2, "usage"},
		{"schema", 2, "usage"},
		{"schema validate", 2, "usage"},
		{"schema nosuch", 2, "usage"},
		{"module", 2, "usage"},
		{"module validate", 2, "usage"},
		{"module schema", 2, "usage"},
		{"blueprint", 2, "usage"},
		{"blueprint validate", 2, "usage"},
		{"version x", 2, "usage"},
		{"completion", 2, "usage"},
		{"man x", 2, "usage"},
		{"help nosuch", 2, "usage"},
		{"nosuch", 2, "usage"},
		{"verify --keyring " + env["trusted"] + " --untrusted-keyring " + env["untrusted"] + " " + env["foreign"], 1, "unknown_signer"},
		{"sign --key " + env["secret"] + " -o " + env["secret"] + " " + env["unsigned"], 1, "output_is_input"},
		{"package -o " + env["module"] + " " + env["template"], 1, "output_is_input"},
		{"graph -o " + dir + "/d " + env["signed"], 1, "output_is_folder"},
		{"module schema --type-name A::B::C::MODULE " + env["fragment"], 2, "usage"},
		{"verify --keyring " + env["trusted"] + " --require-signer x " + env["signed"], 2, "usage"},
		{"inspect --query droplets " + env["signed"], 0, ""},
	}
	for _, c := range cases {
		args := append([]string{"assemble"}, strings.Fields(c.line)...)
		args = append(args, "--json")
		var stdout, stderr bytes.Buffer
		exit := run(context.Background(), args, nil, &stdout, &stderr)
		app := newApp(nil, nil, nil)
		path, _, _ := commandPath(app, reorderArgs(app, args))
		if err := checkJSONOutput(path, exit, stdout.Bytes()); err != nil {
			t.Errorf("%s: %v", c.line, err)
		}
		var obj struct {
			Error *struct{ Code string }
		}
		json.Unmarshal(stdout.Bytes(), &obj)
		code := ""
		if obj.Error != nil {
			code = obj.Error.Code
		}
		if exit != c.exit || code != c.code {
			t.Errorf("%s: exit %d, code %q; want exit %d, code %q\n%s", c.line, exit, code, c.exit, c.code, stdout.String())
		}
	}
}
