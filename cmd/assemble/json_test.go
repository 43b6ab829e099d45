package main

// Issue #12: --json on every command, on success and failure, one object
// on standard output that its schema in docs/json accepts.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/cloud-assembly/assemble/internal/testenv/moto"
)

// jsonCase is one run of a command with --json.
type jsonCase struct {
	args []string // after "assemble"; --json is added
	exit int
	code string // the error's code when exit is not 0
	// check, when set, looks further at the object.
	check func(t *testing.T, obj map[string]any)
	// aws: the case needs moto_server (skipped, saying why, without it).
	aws bool
}

// jsonFixture builds, signs and writes what the cases need in dir.
func jsonFixture(t *testing.T) (dir string, env map[string]string) {
	t.Helper()
	dir = t.TempDir()
	fixtures, _ := filepath.Abs(filepath.Join("..", "..", "fixtures"))
	keys := filepath.Join(fixtures, "keys")
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env = map[string]string{
		"webapp":    filepath.Join(fixtures, "examples", "webapp"),
		"secret":    filepath.Join(keys, "ed25519.sec.asc"),
		"protected": filepath.Join(keys, "passphrase.sec.asc"),
		"trusted":   filepath.Join(keys, "trusted.asc"),
		"untrusted": filepath.Join(keys, "untrusted.sec.asc"),
		"badpass":   write("badpass.txt", "not the passphrase\n"),
		"unsigned":  filepath.Join(dir, "unsigned.cloud"),
		"signed":    filepath.Join(dir, "signed.cloud"),
		"foreign":   filepath.Join(dir, "foreign.cloud"),
		"template":  write("tmpl/template.yaml", "Modules:\n  Bucket:\n    Source: ./bucket.yaml\nResources: {}\n"),
		"broken":    write("broken.yaml", "Resources:\n  A: [\n"),
		"module":    write("tmpl/bucket.yaml", "Resources:\n  Bucket:\n    Type: AWS::S3::Bucket\n"),
		"fragment":  write("mod/fragments/template.yaml", "Resources:\n  Bucket:\n    Type: AWS::S3::Bucket\n"),
		"badfrag":   write("badfrag.yaml", "Resources:\n  Nested:\n    Type: AWS::CloudFormation::Stack\n"),
		"blueprint": write("ok.blueprint.yaml", "version: 2023-04-20\nresources:\n  bucket:\n    type: aws/s3/bucket\n    spec:\n      name: b\n"),
		"badbp":     write("bad.blueprint.yaml", "version: 2021-12-18\nresources: {}\n"),
		"schemaok":  filepath.Join(fixtures, "resource-schemas", "replacement-strategy-mutable.json"),
		"full":      write("full/x", "x"),
		"dir":       dir,
		"registry":  jsonRegistry(t),
	}
	for _, args := range [][]string{
		{"build", "-o", env["unsigned"], env["webapp"]},
		{"sign", "--key", env["secret"], "-o", env["signed"], env["unsigned"]},
		{"sign", "--key", env["untrusted"], "-o", env["foreign"], env["unsigned"]},
		{"push", "--keyring", env["trusted"], env["signed"], "oci://" + env["registry"] + "/json/app:v1"},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), append([]string{"assemble"}, args...), nil, &bytes.Buffer{}, &stderr); code != 0 {
			t.Fatalf("%v: %d %s", args, code, stderr.String())
		}
	}
	return dir, env
}

func jsonCases(env map[string]string) map[string][]jsonCase {
	digestOf := func(name string) func(t *testing.T, obj map[string]any) {
		return func(t *testing.T, obj map[string]any) {
			t.Helper()
			b, err := os.ReadFile(env[name])
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			if got := obj["sha256"]; got != "sha256:"+hex.EncodeToString(sum[:]) {
				t.Errorf("sha256 %v, the file's is %x", got, sum)
			}
		}
	}
	field := func(key string, want any) func(t *testing.T, obj map[string]any) {
		return func(t *testing.T, obj map[string]any) {
			t.Helper()
			if got, _ := json.Marshal(obj[key]); string(got) != mustJSON(want) {
				t.Errorf("%s is %s, want %s", key, got, mustJSON(want))
			}
		}
	}
	errField := func(key string, want any) func(t *testing.T, obj map[string]any) {
		return func(t *testing.T, obj map[string]any) {
			t.Helper()
			field(key, want)(t, obj["error"].(map[string]any))
		}
	}
	built := filepath.Join(env["dir"], "built.cloud")
	return map[string][]jsonCase{
		"build": {
			{args: []string{"build", "-o", built, env["webapp"]}, check: func(t *testing.T, obj map[string]any) {
				env["built"] = built
				digestOf("built")(t, obj)
				field("file", built)(t, obj)
				field("output", built)(t, obj) // the deprecated alias
				field("missing", []string{"stack-parameter:Service:AlertEmail"})(t, obj)
			}},
			{args: []string{"build", "-o", "-", env["webapp"]}, exit: 2, code: "usage"},
			{args: []string{"build", "--strict", "-o", built + "2", env["webapp"]}, exit: 1, code: "missing", check: errField("line", 12)},
			{args: []string{"build", "-o", built + "3", filepath.Join(env["dir"], "nothing")}, exit: 1, code: "invalid_project"},
		},
		"push": {
			{args: []string{"push", "--keyring", env["trusted"], env["signed"], "oci://" + env["registry"] + "/json/app:v2"}, check: func(t *testing.T, obj map[string]any) {
				field("signed", true)(t, obj)
				digestOf("signed")(t, obj)
				field("digest", obj["sha256"])(t, obj) // the deprecated alias
			}},
			{args: []string{"push", "--keyring", env["trusted"], env["unsigned"], "oci://" + env["registry"] + "/json/app:v3"}, exit: 1, code: "unsigned"},
		},
		"pull": {
			{args: []string{"pull", "--keyring", env["trusted"], "-o", filepath.Join(env["dir"], "pulled.cloud"), "oci://" + env["registry"] + "/json/app:v1"}, check: digestOf("signed")},
			{args: []string{"pull", "--keyring", env["trusted"], "-o", filepath.Join(env["dir"], "none.cloud"), "oci://" + env["registry"] + "/json/app:nope"}, exit: 1, code: "remote_not_found"},
		},
		"inspect": {
			{args: []string{"inspect", env["signed"]}, check: field("signatureVerified", false)},
			{args: []string{"inspect", "--query", "droplets.Site.properties.keyPrefix", env["signed"]}, check: field("value", "www/")},
			{args: []string{"inspect", "--query", "droplets.Nope", env["signed"]}, exit: 1, code: "no_match", check: errField("file", env["signed"])},
			{args: []string{"inspect", env["dir"]}, exit: 1, code: "is_folder"},
		},
		"graph": {
			{args: []string{"graph", env["signed"]}, check: func(t *testing.T, obj map[string]any) {
				if len(obj["edges"].([]any)) == 0 {
					t.Error("no edges")
				}
				field("file", env["signed"])(t, obj)
				field("source", env["signed"])(t, obj) // the deprecated alias
				for _, d := range obj["droplets"].([]any) {
					if k := d.(map[string]any)["kind"].(string); !strings.HasSuffix(k, "Droplet") {
						t.Errorf("droplet kind %q, want its class (StackDroplet)", k)
					}
				}
			}},
			{args: []string{"graph", "--format", "mermaid", "-o", filepath.Join(env["dir"], "g.mmd"), env["webapp"]}, check: field("format", "mermaid")},
			{args: []string{"graph", "--format", "svg", env["signed"]}, exit: 2, code: "usage"},
			{args: []string{"graph", filepath.Join(env["dir"], "nothing")}, exit: 1, code: "invalid_project"},
			{args: []string{"graph", env["broken"]}, exit: 1, code: "template_syntax", check: errField("line", 3)},
		},
		"package": {
			{args: []string{"package", env["template"]}, check: field("inputs", []string{env["module"], env["template"]})},
			{args: []string{"package", "-o", filepath.Join(env["dir"], "packaged.yaml"), env["template"]}, check: field("output", filepath.Join(env["dir"], "packaged.yaml"))},
			{args: []string{"package", "-o", env["template"], env["template"]}, exit: 1, code: "output_is_input", check: errField("file", env["template"])},
			{args: []string{"package", env["broken"]}, exit: 1, code: "template_syntax", check: errField("line", 3)},
		},
		"sign": {
			{args: []string{"sign", "--key", env["secret"], "-o", filepath.Join(env["dir"], "s.cloud"), env["unsigned"]}, check: func(t *testing.T, obj map[string]any) {
				env["s"] = filepath.Join(env["dir"], "s.cloud")
				digestOf("s")(t, obj)
			}},
			{args: []string{"sign", env["unsigned"]}, exit: 1, code: "no_key"},
			{args: []string{"sign", "--add", "--key", env["untrusted"], "-o", filepath.Join(env["dir"], "co.cloud"), env["signed"]}, check: func(t *testing.T, obj map[string]any) {
				field("signatures", 2)(t, obj)
				if obj["signer"].(map[string]any)["userID"] != "Test Untrusted <untrusted@example.test>" {
					t.Errorf("signer %v", obj["signer"])
				}
			}},
			{args: []string{"sign", "--add", "--key", env["secret"], env["unsigned"]}, exit: 1, code: "not_signed"},
			{args: []string{"sign", "--key", env["protected"], "--passphrase-file", env["badpass"], env["unsigned"]}, exit: 1, code: "wrong_passphrase"},
			{args: []string{"sign", "--key", filepath.Join(env["dir"], "nokey.asc"), env["unsigned"]}, exit: 1, code: "not_found", check: errField("file", filepath.Join(env["dir"], "nokey.asc"))},
		},
		"attest": {
			{args: []string{"attest", env["unsigned"]}, check: func(t *testing.T, obj map[string]any) {
				if !strings.Contains(obj["text"].(string), `"nonce"`) {
					t.Errorf("text %v", obj["text"])
				}
			}},
			{args: []string{"attest", "--signed", "-o", filepath.Join(env["dir"], "att.json"), env["signed"]}, check: field("output", filepath.Join(env["dir"], "att.json"))},
			{args: []string{"attest", "--signed", env["unsigned"]}, exit: 1, code: "not_signed"},
			{args: []string{"attest", filepath.Join(env["dir"], "nothing.cloud")}, exit: 1, code: "not_found"},
		},
		"verify": {
			{args: []string{"verify", "--keyring", env["trusted"], env["signed"]}, check: func(t *testing.T, obj map[string]any) {
				digestOf("signed")(t, obj)
				field("authenticated", true)(t, obj)
			}},
			{args: []string{"verify", "--allow-unsigned", env["unsigned"]}, check: func(t *testing.T, obj map[string]any) {
				digestOf("unsigned")(t, obj)
				field("valid", true)(t, obj)
				field("authenticated", false)(t, obj)
			}},
			{args: []string{"verify", "--keyring", env["trusted"], env["foreign"]}, exit: 1, code: "unknown_signer", check: field("authenticated", false)},
			{args: []string{"verify", "--keyring", env["trusted"], env["unsigned"]}, exit: 1, code: "unsigned", check: field("signed", false)},
			{args: []string{"verify", env["signed"]}, exit: 2, code: "usage"},
			{args: []string{"verify", "--policy", env["broken"], env["signed"]}, exit: 1, code: "invalid_policy", check: errField("line", 3)},
			{args: []string{"verify", "--keyring", env["trusted"], "--min-signers", "2", env["signed"]}, exit: 1, code: "too_few_signers", check: func(t *testing.T, obj map[string]any) {
				if sigs := obj["signatures"].([]any); len(sigs) != 1 || sigs[0].(map[string]any)["trusted"] != true {
					t.Errorf("signatures %v", sigs)
				}
				field("policy", map[string]any{"minSigners": 2, "signers": []string{obj["signatures"].([]any)[0].(map[string]any)["fingerprint"].(string)},
					"required": []string{}, "missing": []string{}, "algorithms": []string{}, "met": false})(t, obj)
			}},
		},
		"extract": {
			{args: []string{"extract", "--keyring", env["trusted"], "-d", filepath.Join(env["dir"], "out"), env["signed"]}, check: field("authenticated", true)},
			{args: []string{"extract", "--keyring", env["trusted"], "-d", filepath.Dir(env["full"]), env["signed"]}, exit: 1, code: "folder_not_empty"},
		},
		"deploy": {
			{aws: true, args: []string{"deploy", "--keyring", env["trusted"], "--only", "Network", "--plan", env["signed"]}, check: func(t *testing.T, obj map[string]any) {
				field("plan", true)(t, obj)
				field("total", 1)(t, obj)
				// One name per concept: kind is the class, as graph says
				// it; the short name is alias.
				aliases := map[string]string{"StackDroplet": "stack", "FileDroplet": "file", "DirectoryDroplet": "directory", "DockerImageDroplet": "docker-image"}
				for _, d := range obj["droplets"].([]any) {
					m := d.(map[string]any)
					if k, _ := m["kind"].(string); aliases[k] == "" || m["alias"] != aliases[k] {
						t.Errorf("droplet %v: kind %v, alias %v", m["id"], m["kind"], m["alias"])
					}
				}
			}},
			{aws: true, args: []string{"deploy", "--keyring", env["trusted"], env["signed"]}, exit: 1, code: "missing_information", check: field("order", []string{"AppImage", "Network", "Settings", "Site", "Service"})},
			{args: []string{"deploy", "--keyring", env["trusted"], env["unsigned"]}, exit: 1, code: "unsigned"},
			{args: []string{"deploy", env["signed"]}, exit: 2, code: "usage"},
			{args: []string{"deploy", "--keyring", env["trusted"], "--parameter", "NoDot=1", env["signed"]}, exit: 2, code: "usage"},
		},
		"diff": {
			{aws: true, args: []string{"diff", "--keyring", env["trusted"], "--only", "Network", env["signed"]}, check: func(t *testing.T, obj map[string]any) {
				field("account", "123456789012")(t, obj)
				field("total", 1)(t, obj)
			}},
			{aws: true, args: []string{"diff", "--keyring", env["trusted"], env["signed"]}, exit: 1, code: "missing_information"},
			{args: []string{"diff", "--keyring", env["trusted"], "--concurrency", "0", env["signed"]}, exit: 2, code: "usage"},
		},
		"status": {
			// Network deployed first, so that status has something to match.
			{aws: true, args: []string{"deploy", "--keyring", env["trusted"], "--only", "Network", env["signed"]}, check: field("account", "123456789012")},
			{aws: true, args: []string{"status", "--keyring", env["trusted"], "--only", "Network", env["signed"]}, check: field("match", true)},
			// moto 5.2.1 has no drift detection: "unavailable", beside a match.
			{aws: true, args: []string{"status", "--keyring", env["trusted"], "--only", "Network", "--drift", env["signed"]}, check: field("match", true)},
			{aws: true, args: []string{"status", "--keyring", env["trusted"], "--only", "Site", env["signed"]}, exit: 1, code: "differs", check: field("match", false)},
			{args: []string{"status", "--keyring", env["trusted"], env["foreign"]}, exit: 1, code: "unknown_signer"},
		},
		"destroy": {
			// Planned or absent, whether the status case deployed Network yet.
			{aws: true, args: []string{"destroy", "--keyring", env["trusted"], "--only", "Network", "--plan", env["signed"]}, check: field("plan", true)},
			{args: []string{"destroy", "--keyring", env["trusted"], env["foreign"]}, exit: 1, code: "unknown_signer"},
			{args: []string{"destroy", env["signed"]}, exit: 2, code: "usage"},
		},
		"schema validate": {
			{args: []string{"schema", "validate", strings.Replace(env["schemaok"], "mutable", "immutable", 1)}, check: field("valid", true)},
			{args: []string{"schema", "validate", env["schemaok"]}, exit: 1, code: "invalid_schema", check: field("valid", false)},
		},
		"module validate": {
			{args: []string{"module", "validate", env["fragment"]}, check: field("valid", true)},
			{args: []string{"module", "validate", env["badfrag"]}, exit: 1, code: "invalid_fragment", check: errField("line", 3)},
		},
		"module schema": {
			{args: []string{"module", "schema", "--type-name", "Demo::S3::Bucket::MODULE", env["fragment"]}, check: func(t *testing.T, obj map[string]any) {
				if _, ok := obj["schema"].(map[string]any); !ok {
					t.Errorf("schema is %v", obj["schema"])
				}
			}},
			{args: []string{"module", "schema", env["fragment"]}, exit: 2, code: "usage"},
			{args: []string{"module", "schema", "--type-name", "Demo::S3::Bucket::MODULE", env["badfrag"]}, exit: 1, code: "invalid_fragment", check: field("valid", false)},
		},
		"blueprint validate": {
			{args: []string{"blueprint", "validate", env["blueprint"]}, check: field("valid", true)},
			{args: []string{"blueprint", "validate", env["badbp"]}, exit: 1, code: "blueprint_version", check: errField("line", 1)},
		},
		"version": {
			{args: []string{"version"}},
			{args: []string{"version", "extra"}, exit: 2, code: "usage"},
		},
		"completion": {
			{args: []string{"completion", "fish"}, check: field("shell", "fish")},
			{args: []string{"completion", "tcsh"}, exit: 2, code: "usage"},
		},
		"man": {
			{args: []string{"man"}, check: field("section", 1)},
			{args: []string{"man", "extra"}, exit: 2, code: "usage"},
		},
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Every command prints one JSON object with --json, which its schema
// accepts, on success and on failure; a failure has the code of its cause.
func TestJSONOutputs(t *testing.T) {
	_, env := jsonFixture(t)
	cases := jsonCases(env)
	for _, path := range leafCommands() {
		name := strings.Join(path, " ")
		var ok, failed bool
		for _, c := range cases[name] {
			ok = ok || c.exit == 0
			failed = failed || c.exit != 0
		}
		if !ok || !failed {
			t.Errorf("assemble %s: want a success and a failure case (have %v, %v)", name, ok, failed)
		}
	}
	for name, list := range cases {
		for _, c := range list {
			t.Run(name, func(t *testing.T) {
				if c.aws {
					moto.Env(t)
				}
				args := append([]string{"assemble"}, c.args...)
				args = append(args, "--json")
				var stdout, stderr bytes.Buffer
				exit := run(context.Background(), args, nil, &stdout, &stderr)
				if exit != c.exit {
					t.Fatalf("%v: exit %d, want %d\n%s%s", c.args, exit, c.exit, stdout.String(), stderr.String())
				}
				app := newApp(nil, nil, nil)
				path, _, _ := commandPath(app, reorderArgs(app, args))
				if err := checkJSONOutput(path, exit, stdout.Bytes()); err != nil {
					t.Fatalf("%v: %v", c.args, err)
				}
				var obj map[string]any
				json.Unmarshal(stdout.Bytes(), &obj)
				if c.exit != 0 && c.code != "" {
					if got := obj["error"].(map[string]any)["code"]; got != c.code {
						t.Errorf("%v: code %v, want %s\n%s", c.args, got, c.code, stdout.String())
					}
				}
				if c.check != nil {
					c.check(t, obj)
				}
			})
		}
	}
}

// leafCommands lists every command that runs something (not a group), as
// its path of names: [build], [schema validate], ...
func leafCommands() [][]string {
	var out [][]string
	var walk func(prefix []string, cmds []*cli.Command)
	walk = func(prefix []string, cmds []*cli.Command) {
		for _, c := range cmds {
			path := append(slices.Clone(prefix), c.Name)
			if len(c.Subcommands) > 0 {
				walk(path, c.Subcommands)
				continue
			}
			out = append(out, path)
		}
	}
	walk(nil, commands())
	return out
}

// Every command has --json and a schema in docs/json; every schema there
// is a command's, or error.json.
func TestEveryCommandHasJSONSchema(t *testing.T) {
	all, err := loadSchemas()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"error.json": true}
	for _, path := range leafCommands() {
		name := strings.Join(path, "-") + ".json"
		want[name] = true
		if all[name] == nil {
			t.Errorf("assemble %s: no docs/json/%s", strings.Join(path, " "), name)
		}
		cmd := findCommand(commands(), path[0])
		for _, sub := range path[1:] {
			cmd = findCommand(cmd.Subcommands, sub)
		}
		if !slices.ContainsFunc(cmd.Flags, func(f cli.Flag) bool { return f == jsonFlag }) {
			t.Errorf("assemble %s has no --json", strings.Join(path, " "))
		}
	}
	for name := range all {
		if !want[name] {
			t.Errorf("docs/json/%s belongs to no command", name)
		}
	}
}
