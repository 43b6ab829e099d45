package main

// Issue #10: every command judges an assembly the same way. Each defect
// class is put through every command that reads or writes an assembly;
// all give the same verdict, the same sentinel and the same finding text.

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zip"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/signing"
)

const matrixEnv = `"environment":"aws://123456789012/eu-west-1"`

// droplet is one droplet of a test manifest: `"ID":{type, env, rest}`.
func droplet(id, typ, rest string) string {
	return `"` + id + `":{"type":"` + typ + `",` + matrixEnv + rest + `}`
}

func manifestOf(droplets ...string) string {
	return `{"schema":"cloud-assembly/1.0","droplets":{` + strings.Join(droplets, ",") + `}}`
}

// A defect is one class of invalid (or, for warnings, questionable)
// assembly: the archive's files, the project that would build it (nil when
// a build cannot make this defect), and what every command must say.
type defect struct {
	name     string
	files    map[string]string // archive files, manifest.json included (or not)
	project  map[string]string // project files for build; nil: build does not apply
	sentinel error
	text     string // the finding's text, the same in every command
	warning  bool   // a warning when reading: --strict makes it an error
	// buildText, when set, is how build words the defect instead: the
	// project itself lacks what the archive would lack (a file, an
	// environment) or holds a key assembly.yaml does not define, and build
	// says so about the project, at the same droplet, with the same
	// sentinel and error code. Empty: build gives text itself.
	buildText string
}

func defects() []defect {
	stack, file, dir, image := droplets.StackType, droplets.FileType, droplets.DirectoryType, droplets.DockerImageType
	yamlHead := "environment: aws://123456789012/eu-west-1\ndroplets:\n"
	return []defect{
		{
			name:      "missing template",
			files:     map[string]string{"manifest.json": manifestOf(droplet("A", stack, `,"properties":{"stackName":"a","template":"nope.yml"}`))},
			project:   map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: stack\n    properties: {stackName: a, template: nope.yml}\n"},
			sentinel:  assembly.ErrMissingFile,
			text:      `droplet A: properties.template: names "nope.yml", which is not a file in the archive [missing-file]`,
			buildText: `droplet A: properties.template: file does not exist: no such file in the project: nope.yml`,
		},
		{
			name:      "missing stackPolicy",
			files:     map[string]string{"manifest.json": manifestOf(droplet("A", stack, `,"properties":{"stackName":"a","template":"t.yml","stackPolicy":"policy.json"}`)), "t.yml": "Resources: {}\n"},
			project:   map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: stack\n    properties: {stackName: a, template: t.yml, stackPolicy: policy.json}\n", "t.yml": "Resources: {}\n"},
			sentinel:  assembly.ErrMissingFile,
			text:      `droplet A: properties.stackPolicy: names "policy.json", which is not a file in the archive [missing-file]`,
			buildText: `droplet A: properties.stackPolicy: file does not exist: no such file in the project: policy.json`,
		},
		{
			name:      "missing file",
			files:     map[string]string{"manifest.json": manifestOf(droplet("A", file, `,"properties":{"file":"f.bin","bucketName":"b","objectKey":"k"}`))},
			project:   map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: file\n    properties: {file: f.bin, bucketName: b, objectKey: k}\n"},
			sentinel:  assembly.ErrMissingFile,
			text:      `droplet A: properties.file: names "f.bin", which is not a file in the archive [missing-file]`,
			buildText: `droplet A: properties.file: file does not exist: no such file in the project: f.bin`,
		},
		{
			name:      "missing directory",
			files:     map[string]string{"manifest.json": manifestOf(droplet("A", dir, `,"properties":{"directory":"site","bucketName":"b"}`))},
			project:   map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: directory\n    properties: {directory: site, bucketName: b}\n"},
			sentinel:  assembly.ErrMissingFile,
			text:      `droplet A: properties.directory: names folder "site", which holds no file in the archive [missing-file]`,
			buildText: `droplet A: properties.directory: file does not exist: no such folder in the project: site`,
		},
		{
			name:      "missing savedImage",
			files:     map[string]string{"manifest.json": manifestOf(droplet("A", image, `,"properties":{"savedImage":"img.tar","pushTarget":"p"}`))},
			project:   map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: docker-image\n    properties: {savedImage: img.tar, pushTarget: p}\n"},
			sentinel:  assembly.ErrMissingFile,
			text:      `droplet A: properties.savedImage: names "img.tar", which is not a file in the archive [missing-file]`,
			buildText: `droplet A: properties.savedImage: file does not exist: no such file in the project: img.tar`,
		},
		{
			// The path properties of blueprint droplets are checked as the
			// others are.
			name:      "missing blueprint",
			files:     map[string]string{"manifest.json": manifestOf(droplet("A", droplets.BlueprintType, `,"properties":{"blueprint":"bp/app.yaml"}`))},
			project:   map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: blueprint\n    properties: {blueprint: bp/app.yaml}\n"},
			sentinel:  assembly.ErrMissingFile,
			text:      `droplet A: properties.blueprint: names "bp/app.yaml", which is not a file in the archive [missing-file]`,
			buildText: `droplet A: properties.blueprint: file does not exist: no such file in the project: bp/app.yaml`,
		},
		{
			name:      "path outside",
			files:     map[string]string{"manifest.json": manifestOf(droplet("A", stack, `,"properties":{"stackName":"a","template":"../t.yml"}`)), "t.yml": "Resources: {}\n"},
			project:   map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: stack\n    properties: {stackName: a, template: ../t.yml}\n", "t.yml": "Resources: {}\n"},
			sentinel:  assembly.ErrInsecurePath,
			text:      `droplet A: properties.template: "../t.yml" is outside the archive (".."): name a file inside the archive, relative to its root [path-unsafe]`,
			buildText: `droplet A: properties.template: path outside the project: "../t.yml" leaves the project folder: keep assets inside it`,
		},
		{
			name:      "absolute path",
			files:     map[string]string{"manifest.json": manifestOf(droplet("A", stack, `,"properties":{"stackName":"a","template":"/t.yml"}`)), "t.yml": "Resources: {}\n"},
			project:   map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: stack\n    properties: {stackName: a, template: /t.yml}\n", "t.yml": "Resources: {}\n"},
			sentinel:  assembly.ErrInsecurePath,
			text:      `droplet A: properties.template: "/t.yml" is an absolute path: name a file inside the archive, relative to its root [path-unsafe]`,
			buildText: `droplet A: properties.template: path outside the project: "/t.yml" is absolute: write it relative to the project folder`,
		},
		{
			// A directory droplet's executables name files of its folder:
			// extract --cdk-out relied on that, while every other command
			// accepted any list (audit).
			name:     "executable outside its folder",
			files:    map[string]string{"manifest.json": manifestOf(droplet("A", dir, `,"properties":{"directory":"site","bucketName":"b","executables":["../run.sh"]}`)), "site/index.html": "hi", "run.sh": "#!/bin/sh\n"},
			project:  map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: directory\n    properties: {directory: site, bucketName: b, executables: [../run.sh]}\n", "site/index.html": "hi", "run.sh": "#!/bin/sh\n"},
			sentinel: assembly.ErrInsecurePath,
			text:     `droplet A: properties.executables[0]: "../run.sh" is outside the folder (".."): name a file below "site", relative to it [path-unsafe]`,
		},
		{
			name:     "missing executable",
			files:    map[string]string{"manifest.json": manifestOf(droplet("A", dir, `,"properties":{"directory":"site","bucketName":"b","executables":["run.sh"]}`)), "site/index.html": "hi"},
			project:  map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: directory\n    properties: {directory: site, bucketName: b, executables: [run.sh]}\n", "site/index.html": "hi"},
			sentinel: assembly.ErrMissingFile,
			text:     `droplet A: properties.executables[0]: names "run.sh", which is not a file in folder "site" [missing-file]`,
		},
		{
			name: "missing Dockerfile",
			files: map[string]string{"manifest.json": manifestOf(droplet("A", droplets.DockerBuildType, `,"properties":{"directory":"ctx","dockerFile":"build/Dockerfile","repositoryName":"r","imageTag":"t"}`)),
				"ctx/Dockerfile": "FROM scratch\n"},
			project: map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: docker-build\n    properties: {directory: ctx, dockerFile: build/Dockerfile, repositoryName: r, imageTag: t}\n",
				"ctx/Dockerfile": "FROM scratch\n"},
			sentinel: assembly.ErrMissingFile,
			text:     `droplet A: properties.dockerFile: names "build/Dockerfile", which is not a file in folder "ctx" [missing-file]`,
		},
		{
			name:     "no manifest",
			files:    map[string]string{"t.yml": "Resources: {}\n"},
			sentinel: assembly.ErrNoManifest,
			text:     `no manifest.json in the archive [manifest-missing]`,
		},
		{
			name:     "bad schema",
			files:    map[string]string{"manifest.json": `{"schema":"cloud-assembly/2.0","droplets":{}}`},
			sentinel: assembly.ErrSchema,
			text:     `schema: unsupported schema "cloud-assembly/2.0", want "cloud-assembly/1.0" [schema-version]`,
		},
		{
			name:      "missing environment",
			files:     map[string]string{"manifest.json": `{"schema":"cloud-assembly/1.0","droplets":{"A":{"type":"` + file + `","properties":{}}}}`},
			project:   map[string]string{"assembly.yaml": "droplets:\n  A:\n    type: file\n    properties: {file: f.bin, bucketName: b, objectKey: k}\n", "f.bin": "x"},
			sentinel:  assembly.ErrSchema,
			text:      `droplet A: missing required key "environment" [schema]`,
			buildText: `droplet A: environment: invalid project: no environment: set environment: on the droplet or at the top of assembly.yaml (e.g. aws://123456789012/eu-west-1)`,
		},
		{
			name:      "bad logical ID",
			files:     map[string]string{"manifest.json": manifestOf(droplet("a.b", file, `,"properties":{"file":"f.bin","bucketName":"b","objectKey":"k"}`)), "f.bin": "x"},
			project:   map[string]string{"assembly.yaml": yamlHead + "  a.b:\n    type: file\n    properties: {file: f.bin, bucketName: b, objectKey: k}\n", "f.bin": "x"},
			sentinel:  assembly.ErrLogicalID,
			text:      `droplet a.b: logical ID "a.b" must match ^[A-Za-z0-9+/_-]{1,256}$ (no dots, spaces or other punctuation) [logical-id]`,
			buildText: `droplet a.b: bad logical id: logical ID "a.b" must match ^[A-Za-z0-9+/_-]{1,256}$ (no dots, spaces or other punctuation)`,
		},
		{
			name:     "unknown droplet in a reference",
			files:    map[string]string{"manifest.json": manifestOf(droplet("A", file, `,"properties":{"file":"f.bin","bucketName":"b","objectKey":"${Nope.objectKey}"}`)), "f.bin": "x"},
			project:  map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: file\n    properties: {file: f.bin, bucketName: b, objectKey: '${Nope.objectKey}'}\n", "f.bin": "x"},
			sentinel: assembly.ErrReference,
			text:     `droplet A: properties.objectKey: ${Nope.objectKey} names droplet "Nope", which is not in this assembly [reference-droplet]`,
		},
		{
			name: "unknown attribute",
			files: map[string]string{"manifest.json": manifestOf(droplet("A", file, `,"properties":{"file":"f.bin","bucketName":"${Net.outputs.Bucket}","objectKey":"k"}`),
				droplet("Net", stack, `,"properties":{"stackName":"n","template":"t.yml"}`)), "f.bin": "x", "t.yml": "Resources: {}\n"},
			project: map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: file\n    properties: {file: f.bin, bucketName: '${Net.outputs.Bucket}', objectKey: k}\n" +
				"  Net:\n    type: stack\n    properties: {stackName: n, template: t.yml}\n", "f.bin": "x", "t.yml": "Resources: {}\n"},
			sentinel: assembly.ErrReference,
			text:     `droplet A: properties.bucketName: ${Net.outputs.Bucket}: unknown attribute "outputs.Bucket": StackDroplet outputs output.<name>, stackArn [reference-attribute]`,
		},
		{
			name:     "lone backslash",
			files:    map[string]string{"manifest.json": manifestOf(droplet("A", file, `,"properties":{"file":"f.bin","bucketName":"b","objectKey":"a\\b"}`)), "f.bin": "x"},
			project:  map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: file\n    properties: {file: f.bin, bucketName: b, objectKey: 'a\\b'}\n", "f.bin": "x"},
			sentinel: assembly.ErrReference,
			text:     `droplet A: properties.objectKey: at byte 1: lone backslash: write \\ for a backslash, \${ for a literal ${ [reference-syntax]`,
		},
		{
			name: "cycle via dependsOn",
			files: map[string]string{"manifest.json": manifestOf(droplet("A", file, `,"dependsOn":["B"],"properties":{"file":"f.bin","bucketName":"b","objectKey":"k"}`),
				droplet("B", file, `,"dependsOn":["A"],"properties":{"file":"f.bin","bucketName":"b","objectKey":"k"}`)), "f.bin": "x"},
			project: map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: file\n    dependsOn: [B]\n    properties: {file: f.bin, bucketName: b, objectKey: k}\n" +
				"  B:\n    type: file\n    dependsOn: [A]\n    properties: {file: f.bin, bucketName: b, objectKey: k}\n", "f.bin": "x"},
			sentinel: assembly.ErrCycle,
			text:     `droplet A: dependsOn: dependency cycle A -> B -> A [cycle]`,
		},
		{
			name: "cycle via references",
			files: map[string]string{"manifest.json": manifestOf(droplet("A", file, `,"properties":{"file":"f.bin","bucketName":"b","objectKey":"${B.objectKey}"}`),
				droplet("B", file, `,"properties":{"file":"f.bin","bucketName":"b","objectKey":"${A.objectKey}"}`)), "f.bin": "x"},
			project: map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: file\n    properties: {file: f.bin, bucketName: b, objectKey: '${B.objectKey}'}\n" +
				"  B:\n    type: file\n    properties: {file: f.bin, bucketName: b, objectKey: '${A.objectKey}'}\n", "f.bin": "x"},
			sentinel: assembly.ErrCycle,
			text:     `droplet A: properties.objectKey: dependency cycle A -> B -> A [cycle]`,
		},
		{
			name:      "unknown key",
			files:     map[string]string{"manifest.json": manifestOf(droplet("A", file, `,"description":"the site","properties":{"file":"f.bin","bucketName":"b","objectKey":"k"}`)), "f.bin": "x"},
			project:   map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: file\n    description: the site\n    properties: {file: f.bin, bucketName: b, objectKey: k}\n", "f.bin": "x"},
			sentinel:  assembly.ErrUnknownKey,
			text:      `droplet A: description: unknown key: the spec defines no such field [unknown-key]`,
			warning:   true,
			buildText: `droplet A: invalid project: unknown key "description" (allowed: type, environment, dependsOn, metadata, properties)`,
		},
		{
			name:     "unknown top-level key",
			files:    map[string]string{"manifest.json": `{"schema":"cloud-assembly/1.0","x-vendor":{"build":7},"droplets":{}}`},
			sentinel: assembly.ErrUnknownKey,
			text:     `x-vendor: unknown key: the spec defines no such field [unknown-key]`,
			warning:  true,
		},
		{
			name:     "unknown property",
			files:    map[string]string{"manifest.json": manifestOf(droplet("A", dir, `,"properties":{"directory":"site","bucketName":"b","keyprefix":"web/"}`)), "site/index.html": "hi"},
			project:  map[string]string{"assembly.yaml": yamlHead + "  A:\n    type: directory\n    properties: {directory: site, bucketName: b, keyprefix: web/}\n", "site/index.html": "hi"},
			sentinel: droplets.ErrUnknownProperty,
			text:     `droplet A: properties.keyprefix: unknown property "keyprefix": DirectoryDroplet documents directory, bucketName, keyPrefix, objectKey, executables (did you mean "keyPrefix"?) [unknown-property]`,
			warning:  true,
		},
	}
}

// cliResult is one run of the command line: exit code, the error the
// command returned (before it is printed), and standard error.
type cliResult struct {
	code   int
	err    error
	stderr string
}

func runCLI(args ...string) cliResult {
	var stdout, stderr bytes.Buffer
	app := newApp(bytes.NewReader(nil), &stdout, &stderr)
	err := app.RunContext(context.Background(), reorderArgs(app, append([]string{"assemble"}, args...)))
	code := exitOK
	if err != nil {
		code = report(&stderr, nil, err)
	}
	return cliResult{code, err, stderr.String()}
}

func TestVerdictMatrix(t *testing.T) {
	keys, err := filepath.Abs(filepath.Join("..", "..", "fixtures", "keys"))
	if err != nil {
		t.Fatal(err)
	}
	secret, keyring := filepath.Join(keys, "ed25519.sec.asc"), filepath.Join(keys, "trusted.asc")
	signer := loadSigner(t, "ed25519.sec.asc")
	all := defects()
	if len(all) < 17 {
		t.Fatalf("%d defect classes, the issue names 17", len(all))
	}
	for _, d := range all {
		t.Run(d.name, func(t *testing.T) {
			dir := t.TempDir()
			unsigned := filepath.Join(dir, "unsigned.cloud")
			os.WriteFile(unsigned, zipFiles(t, d.files), 0o644)
			signed := filepath.Join(dir, "signed.cloud")
			os.WriteFile(signed, signUnchecked(t, unsigned, signer), 0o644)

			// Reading: every command gives the one verdict; --strict makes a
			// warning an error with the same text.
			reading := map[string][]string{
				"inspect":                 {"inspect", unsigned},
				"verify --allow-unsigned": {"verify", "--allow-unsigned", unsigned},
				"verify (signed copy)":    {"verify", "--keyring", keyring, signed},
			}
			for name, args := range reading {
				res := runCLI(args...)
				expect(t, name, d, res, d.warning)
				strict := append([]string{args[0], "--strict"}, args[1:]...)
				if d.warning {
					expect(t, name+" --strict", d, runCLI(strict...), false)
				} else {
					expectJSON(t, name, d, args)
				}
				expectJSON(t, name+" --strict", d, strict)
			}

			// extract: the same verdict; nothing written when it fails.
			out := filepath.Join(dir, "out")
			res := runCLI("extract", "--keyring", keyring, "-d", out, signed)
			expect(t, "extract", d, res, d.warning)
			if d.warning {
				strictOut := filepath.Join(dir, "strict-out")
				expect(t, "extract --strict", d, runCLI("extract", "--strict", "--keyring", keyring, "-d", strictOut, signed), false)
				if _, err := os.Stat(strictOut); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("extract --strict wrote %s", strictOut)
				}
			} else if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("extract wrote %s", out)
			}

			// sign: refuses an invalid assembly (exit 1, the file untouched),
			// signs one with warnings and shows them.
			before, _ := os.ReadFile(unsigned)
			res = runCLI("sign", "--key", secret, unsigned)
			expect(t, "sign", d, res, d.warning)
			if !d.warning {
				expectJSON(t, "sign", d, []string{"sign", "--key", secret, unsigned})
			}
			after, _ := os.ReadFile(unsigned)
			if !d.warning && !bytes.Equal(before, after) {
				t.Errorf("sign changed the file it refused to sign")
			}
			if ents, _ := os.ReadDir(dir); !d.warning && len(ents) != 2 {
				t.Errorf("sign left files behind: %v", ents)
			}

			// build: what the project would write is refused, with the
			// same sentinel, even for reading warnings; no output.
			if d.project == nil {
				return
			}
			project := filepath.Join(dir, "project")
			for name, body := range d.project {
				p := filepath.Join(project, filepath.FromSlash(name))
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(body), 0o644)
			}
			built := filepath.Join(dir, "built.cloud")
			res = runCLI("build", "-o", built, project)
			if res.code != exitFailure || !errors.Is(res.err, d.sentinel) {
				t.Errorf("build: exit %d, %v; want 1 and %v\n%s", res.code, res.err, d.sentinel, res.stderr)
			}
			want := d.text
			if d.buildText != "" {
				want = d.buildText
			}
			if res.err == nil || !strings.HasSuffix(res.err.Error(), ": "+want) || !strings.Contains(res.stderr, want+"\n") {
				t.Errorf("build: error %v, want it to end with %q\n%s", res.err, want, res.stderr)
			}
			if _, err := os.Stat(built); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a failed build wrote %s", built)
			}
			expectJSON(t, "build", d, []string{"build", "-o", built, project})
		})
	}
}

// expect checks one command's verdict on d: a warning (exit 0, the text
// shown as a warning) or an error (exit 1, the sentinel, the error ending
// with the text).
func expect(t *testing.T, cmd string, d defect, res cliResult, warning bool) {
	t.Helper()
	if warning {
		if res.code != exitOK || !strings.Contains(res.stderr, ": "+d.text+"\n") || !strings.Contains(res.stderr, "assemble: warning: ") {
			t.Errorf("%s: exit %d, want 0 with the warning %q\n%s", cmd, res.code, d.text, res.stderr)
		}
		return
	}
	switch {
	case res.code != exitFailure:
		t.Errorf("%s: exit %d, want 1\n%s", cmd, res.code, res.stderr)
	case !errors.Is(res.err, d.sentinel) || !errors.Is(res.err, assembly.ErrManifest):
		t.Errorf("%s: %v does not match %v", cmd, res.err, d.sentinel)
	case !strings.HasSuffix(res.err.Error(), ": "+d.text) && res.err.Error() != d.text:
		t.Errorf("%s: error %q, want it to end with %q", cmd, res.err, d.text)
	case !strings.Contains(res.stderr, d.text+"\n"):
		t.Errorf("%s: stderr lacks %q\n%s", cmd, d.text, res.stderr)
	}
}

// expectJSON runs a command that must refuse d again with --json: one
// object its schema accepts, whose error has the code of the finding's
// rule (the text's "[rule]").
func expectJSON(t *testing.T, cmd string, d defect, args []string) {
	t.Helper()
	m := regexp.MustCompile(`\[([a-z-]+)\]$`).FindStringSubmatch(d.text)
	if m == nil {
		t.Fatalf("%s: no rule in %q", d.name, d.text)
	}
	var stdout, stderr bytes.Buffer
	exit := run(context.Background(), append(append([]string{"assemble"}, args...), "--json"), nil, &stdout, &stderr)
	app := newApp(nil, nil, nil)
	path, _, _ := commandPath(app, append([]string{"assemble"}, args...))
	if err := checkJSONOutput(path, exit, stdout.Bytes()); err != nil {
		t.Errorf("%s --json: %v", cmd, err)
		return
	}
	var out struct {
		Error struct{ Code string } `json:"error"`
	}
	json.Unmarshal(stdout.Bytes(), &out)
	if want := ruleCode(m[1]); exit != exitFailure || out.Error.Code != want {
		t.Errorf("%s --json: exit %d, code %q; want 1 and %q\n%s", cmd, exit, out.Error.Code, want, stdout.String())
	}
}

// zipFiles writes an archive of the files (sorted, deflated).
func zipFiles(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, files[name])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func loadSigner(t *testing.T, name string) signing.Signer {
	t.Helper()
	signers, err := signing.LoadSigners(&signing.SignerOptions{KeyFile: filepath.Join("..", "..", "fixtures", "keys", name)})
	if err != nil {
		t.Fatal(err)
	}
	return signers[0]
}

// signUnchecked seals the archive as a careless signer would, without the
// check sign runs: the attestation made by hand (every file's
// SHA-256(content || nonce)), clear-signed by the signer, then
// signature.asc appended to raw copies of the entries.
func signUnchecked(t *testing.T, file string, signer signing.Signer) []byte {
	t.Helper()
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	a := &signing.Attestation{Timestamp: time.Now().UTC().Truncate(time.Second), Algorithm: crypto.SHA256,
		Nonce: bytes.Repeat([]byte{7}, signing.MinNonceSize), Items: map[string]signing.Item{}}
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		n, err := io.Copy(h, rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		h.Write(a.Nonce)
		a.Items[f.Name] = signing.Item{Size: n, Hash: h.Sum(nil)}
	}
	body, err := a.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	sig, _, err := signer.ClearSign(context.Background(), bytes.TrimSuffix(body, []byte("\n")), &signing.SignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		h := f.FileHeader
		raw, err := f.OpenRaw()
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.CreateRaw(&h)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(w, raw)
	}
	w, err := zw.Create(assembly.SignatureName)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(sig)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// --help of verify and inspect lists every rule with its severities, as
// assembly.Rules gives them (the README's table is checked in assembly).
func TestHelpListsFindings(t *testing.T) {
	for _, cmd := range []string{"verify", "inspect"} {
		var stdout bytes.Buffer
		app := newApp(bytes.NewReader(nil), &stdout, io.Discard)
		if err := app.Run([]string{"assemble", cmd, "--help"}); err != nil {
			t.Fatal(err)
		}
		for _, r := range assembly.Rules() {
			strict := r.Severity(assembly.CheckOptions{Strict: true})
			want := fmt.Sprintf(" %-19s %-7s %-7s %-7s ", r.Code, r.Reading, strict, r.Writing)
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("%s --help lacks %q", cmd, want)
			}
		}
	}
}
