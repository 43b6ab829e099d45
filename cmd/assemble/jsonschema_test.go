package main

// --json output is checked against the schemas in docs/json wherever a
// test produces it: every `assemble ... --json` in a testscript (through
// the checked program TestMain registers), and TestJSONOutputs, which runs
// every command's success and failure cases.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// jsonSchemaBase is the $id prefix of docs/json/*.json.
const jsonSchemaBase = "https://github.com/cloud-assembly/assemble/docs/json/"

// envJSONDocs names the docs/json folder for the checked program, which
// runs in a script's folder.
const envJSONDocs = "ASSEMBLE_TEST_JSON_DOCS"

// violationsFile, in a script's $WORK, collects the checked program's
// schema violations; TestScript fails the script when it is not empty.
const violationsFile = ".json-schema-violations"

var (
	schemasOnce sync.Once
	schemas     map[string]*jsonschema.Schema // by file name: "verify.json"
	schemasErr  error
)

// jsonDocsDir is docs/json from this package's folder.
func jsonDocsDir() string {
	if d := os.Getenv(envJSONDocs); d != "" {
		return d
	}
	d, _ := filepath.Abs(filepath.Join("..", "..", "docs", "json"))
	return d
}

// loadSchemas compiles every schema in docs/json once.
func loadSchemas() (map[string]*jsonschema.Schema, error) {
	schemasOnce.Do(func() {
		dir := jsonDocsDir()
		names, err := filepath.Glob(filepath.Join(dir, "*.json"))
		if err != nil || len(names) == 0 {
			schemasErr = fmt.Errorf("no schemas in %s (%v)", dir, err)
			return
		}
		c := jsonschema.NewCompiler()
		for _, p := range names {
			b, err := os.ReadFile(p)
			if err != nil {
				schemasErr = err
				return
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				schemasErr = fmt.Errorf("%s: %w", p, err)
				return
			}
			id, _ := doc.(map[string]any)["$id"].(string)
			if want := jsonSchemaBase + filepath.Base(p); id != want {
				schemasErr = fmt.Errorf("%s: $id is %q, want %q", p, id, want)
				return
			}
			if err := c.AddResource(id, doc); err != nil {
				schemasErr = err
				return
			}
		}
		schemas = map[string]*jsonschema.Schema{}
		for _, p := range names {
			s, err := c.Compile(jsonSchemaBase + filepath.Base(p))
			if err != nil {
				schemasErr = fmt.Errorf("%s: %w", p, err)
				return
			}
			schemas[filepath.Base(p)] = s
		}
	})
	return schemas, schemasErr
}

// schemaName is the schema of a command's output: docs/json/build.json for
// "assemble build", schema-validate.json for "assemble schema validate",
// error.json for a command line naming no command that has one.
func schemaName(path []string) string {
	if len(path) > 1 {
		name := strings.Join(path[1:], "-") + ".json"
		if s, _ := loadSchemas(); s[name] != nil {
			return name
		}
	}
	return "error.json"
}

// checkJSONOutput checks what a command printed on standard output with
// --json: exactly one JSON object, valid against the command's schema,
// holding "error" exactly when the exit code is not 0.
func checkJSONOutput(path []string, exit int, stdout []byte) error {
	all, err := loadSchemas()
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(stdout))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("standard output is not JSON (%v):\n%s", err, stdout)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("standard output holds more than one JSON value:\n%s", stdout)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("standard output is not a JSON object:\n%s", stdout)
	}
	if _, failed := obj["error"]; failed != (exit != 0) {
		return fmt.Errorf("exit code %d, but the object's error is %v:\n%s", exit, obj["error"], stdout)
	}
	// The validator wants its own decoding of numbers.
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(stdout))
	if err != nil {
		return err
	}
	name := schemaName(path)
	if err := all[name].Validate(doc); err != nil {
		return fmt.Errorf("docs/json/%s: %v\n%s", name, err, stdout)
	}
	return nil
}

// runChecked is the assemble program of the scripts: run, and when the
// command line asks for --json, check its standard output against the
// command's schema. A violation goes to standard error and to
// $WORK/.json-schema-violations (a script that expects the command to
// fail would not notice an exit code).
func runChecked(args []string) int {
	app := newApp(os.Stdin, io.Discard, io.Discard)
	ordered := reorderArgs(app, args)
	if !wantsJSON(app, ordered) {
		return runWithSignals(args, os.Stdin, os.Stdout, os.Stderr)
	}
	var out bytes.Buffer
	code := runWithSignals(args, os.Stdin, io.MultiWriter(os.Stdout, &out), os.Stderr)
	path, _, _ := commandPath(app, ordered)
	if err := checkJSONOutput(path, code, out.Bytes()); err != nil {
		msg := fmt.Sprintf("%s: %v\n", strings.Join(args, " "), err)
		fmt.Fprint(os.Stderr, "json schema violation: "+msg)
		if work := os.Getenv("WORK"); work != "" {
			f, ferr := os.OpenFile(filepath.Join(work, violationsFile), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if ferr == nil {
				f.WriteString(msg)
				f.Close()
			}
		}
	}
	return code
}

// The README's examples of --json output (its JSON output section) are
// what the schemas accept: a failure, and a verified assembly.
func TestReadmeJSONExamples(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "\n## JSON output\n")
	if i < 0 {
		t.Fatal("README.md has no JSON output section")
	}
	s = s[i+1:]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j]
	}
	blocks := regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(s, -1)
	if len(blocks) < 2 {
		t.Fatalf("%d JSON examples, want a failure and a success", len(blocks))
	}
	for _, m := range blocks {
		exit := 0
		if strings.Contains(m[1], `"error"`) {
			exit = 1
		}
		if err := checkJSONOutput([]string{"assemble", "verify"}, exit, []byte(m[1])); err != nil {
			t.Error(err)
		}
	}
}

// runJSON runs a command line that holds --json, as run does, and fails
// t unless its standard output is what the command's schema accepts.
func runJSON(t testing.TB, args []string, stdout, stderr *bytes.Buffer) int {
	t.Helper()
	code := run(context.Background(), args, nil, stdout, stderr)
	app := newApp(nil, nil, nil)
	ordered := reorderArgs(app, args)
	if !wantsJSON(app, ordered) {
		t.Fatalf("%v: no --json", args)
	}
	path, _, _ := commandPath(app, ordered)
	if err := checkJSONOutput(path, code, stdout.Bytes()); err != nil {
		t.Errorf("%v: %v", args, err)
	}
	return code
}
