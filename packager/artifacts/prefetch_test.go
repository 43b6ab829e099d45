package artifacts

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrefetch checks that Export, which makes zips ahead of its walk,
// gives the assets the walk alone gives (Add without a prefetch), in the
// same order, and that the first bad artifact in template order is the
// error even when later ones are zipped first.
func TestPrefetch(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	var tmpl strings.Builder
	tmpl.WriteString("Resources:\n")
	var adds []struct {
		local string
		zip   bool
	}
	for i := 0; i < 40; i++ {
		local := fmt.Sprintf("fn%02d", i%37) // two folders named twice
		for j := 0; j < i%5+1; j++ {
			files[fmt.Sprintf("fn%02d/f%d.js", i%37, j)] = strings.Repeat(fmt.Sprintf("// %d %d\n", i%37, j), 500+i*j)
		}
		zip := false
		if i%7 == 3 { // a file Lambda needs zipped
			local = fmt.Sprintf("one%02d.py", i)
			files[local] = strings.Repeat("print(1)\n", 100+i)
			zip = true
			fmt.Fprintf(&tmpl, "  F%02d:\n    Type: AWS::Serverless::Function\n    Properties:\n      CodeUri: %s\n", i, local)
		} else {
			fmt.Fprintf(&tmpl, "  F%02d:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: %s\n", i, local)
		}
		adds = append(adds, struct {
			local string
			zip   bool
		}{local, zip})
	}
	files["template.yaml"] = tmpl.String()
	write(t, dir, files)

	_, s, err := pack(t, dir, Options{Bucket: "bkt"})
	if err != nil {
		t.Fatal(err)
	}
	if s.pre != nil {
		t.Fatal("the prefetch outlived Export")
	}
	ref, err := New(Options{Root: dir, Bucket: "bkt"})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	for _, a := range adds {
		if _, err := ref.Add(dir, a.local, a.zip, Pos{}); err != nil {
			t.Fatal(err)
		}
	}
	got, want := s.Assets(), ref.Assets()
	if len(got) != len(want) || len(got) != 38 {
		t.Fatalf("%d assets, want %d (and 38)", len(got), len(want))
	}
	for i := range got {
		if got[i].Key != want[i].Key || !bytes.Equal(got[i].Data(), want[i].Data()) {
			t.Errorf("asset %d: %s, want %s", i, got[i].Key, want[i].Key)
		}
	}

	// Later artifacts fine or bad, the first bad one in template order is
	// the error.
	write(t, dir, map[string]string{"template.yaml": strings.Replace(tmpl.String(), "Code: fn05\n", "Code: nope\n", 1) +
		"  Bad:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: empty\n"})
	_, _, err = pack(t, dir, Options{Bucket: "bkt"})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "template.yaml:") || !strings.Contains(err.Error(), "no file or folder nope") {
		t.Fatalf("got %v, want the missing fn05 replacement", err)
	}
	write(t, dir, map[string]string{"template.yaml": tmpl.String() + "  Bad:\n    Type: AWS::Lambda::Function\n    Properties:\n      Code: empty/\n"})
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, _, err = pack(t, dir, Options{Bucket: "bkt"})
	if !errors.Is(err, ErrArtifact) || !strings.Contains(err.Error(), "holds no files") {
		t.Fatalf("got %v, want the empty folder", err)
	}
}
