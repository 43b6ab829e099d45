package packager

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/cloud-assembly/assemble/packager/cfn"
)

var update = flag.Bool("update", false, "rewrite the want files of testdata/expand")

var sentinels = map[string]error{
	"ErrSyntax":           cfn.ErrSyntax,
	"ErrInvalid":          cfn.ErrInvalid,
	"ErrMissingParameter": cfn.ErrMissingParameter,
	"ErrUnknownParameter": cfn.ErrUnknownParameter,
	"ErrCycle":            cfn.ErrCycle,
	"ErrNameClash":        cfn.ErrNameClash,
	"ErrOutsideRoot":      cfn.ErrOutsideRoot,
	"ErrTooLarge":         cfn.ErrTooLarge,
	"ErrDangling":         cfn.ErrDangling,
}

// TestExpand runs the golden cases in testdata/expand. Each archive's
// comment holds "key: value" lines:
//
//	template: the file to package (default template.yaml)
//	format: yaml or json (default: the input's)
//	sourcemap: on (default off)
//	error: the sentinel the case must fail with (then want holds the message)
//
// and its files are the template, the modules, and "want" (the expected
// output, or the error message with the case folder removed). Files under
// outside/ are written next to the project folder, to test Root.
func TestExpand(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "expand", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			hdr := map[string]string{"template": "template.yaml"}
			for _, line := range strings.Split(string(ar.Comment), "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(line, "#") {
					hdr[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
			base := t.TempDir()
			dir := filepath.Join(base, "project")
			var want *txtar.File
			for i := range ar.Files {
				f := &ar.Files[i]
				if f.Name == "want" {
					want = f
					continue
				}
				p := filepath.Join(dir, filepath.FromSlash(f.Name))
				if rest, ok := strings.CutPrefix(f.Name, "outside/"); ok {
					p = filepath.Join(base, filepath.FromSlash(rest))
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if want == nil {
				t.Fatal("archive has no want file")
			}
			out, err := PackageTemplate(filepath.Join(dir, hdr["template"]), PackageOptions{
				Root:        dir,
				Format:      hdr["format"],
				NoSourceMap: hdr["sourcemap"] != "on",
			})
			var got []byte
			if sentinel := hdr["error"]; sentinel != "" {
				if err == nil {
					t.Fatalf("packaged without error, want %s; output:\n%s", sentinel, out)
				}
				if !errors.Is(err, sentinels[sentinel]) {
					t.Fatalf("error %v does not wrap %s", err, sentinel)
				}
				var ce *cfn.Error
				if !errors.As(err, &ce) {
					t.Fatalf("error %v is not a *cfn.Error", err)
				}
				msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
				msg = strings.ReplaceAll(msg, dir, "$PROJECT")
				got = []byte(msg + "\n")
			} else {
				if err != nil {
					t.Fatal(err)
				}
				got = out
			}
			if *update {
				want.Data = got
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !bytes.Equal(got, want.Data) {
				t.Errorf("output differs (go test ./packager -update rewrites it)\n--- got:\n%s\n--- want:\n%s", got, want.Data)
			}
		})
	}
}

// TestExampleModule checks that the bundled example's network stack, which
// includes a local module, packages to a plain template.
func TestExampleModule(t *testing.T) {
	dir := filepath.Join("..", "fixtures", "examples", "webapp")
	out, err := PackageTemplate(filepath.Join(dir, "stacks", "network.yaml"), PackageOptions{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n  SiteBucket:\n    Type: AWS::S3::Bucket\n", "Status: Suspended", "DestinationBucketName: !Ref SiteLogs", "Value: !Ref SiteBucket", "SourceMap: ../modules/site-bucket.yaml:Bucket:7"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("packaged network.yaml lacks %q:\n%s", want, out)
		}
	}
	if bytes.Contains(out, []byte("Modules:")) {
		t.Errorf("packaged template still has Modules:\n%s", out)
	}
}

// TestDeepNesting: module nesting is bounded (ErrTooLarge), not left to the
// stack.
func TestDeepNesting(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 110; i++ {
		body := fmt.Sprintf("Modules:\n  M:\n    Source: m%d.yaml\n", i+1)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%d.yaml", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, err := PackageTemplate(filepath.Join(dir, "m0.yaml"), PackageOptions{})
	if !errors.Is(err, cfn.ErrTooLarge) || !strings.Contains(err.Error(), "nested deeper than 100 levels") {
		t.Fatalf("got %v, want ErrTooLarge for the nesting depth", err)
	}
}
