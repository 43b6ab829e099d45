package cfn

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// FuzzParse checks the template reader: input is either rejected with an
// *Error wrapping ErrSyntax or ErrTooLarge, or accepted, and then what it
// accepted is written back as YAML and re-read to the same data, and written
// as JSON that is valid and re-readable.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "expand", "*.txtar"))
	seeds := 0
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, x := range ar.Files {
			if x.Name != "want" {
				f.Add(x.Data)
				seeds++
			}
		}
	}
	if seeds == 0 {
		f.Fatal("no seeds: packager/testdata/expand is empty")
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tmpl, err := Parse("fuzz.yaml", data)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || !(errors.Is(err, ErrSyntax) || errors.Is(err, ErrTooLarge)) {
				t.Fatalf("error of the wrong class: %#v", err)
			}
			return
		}
		y, err := EncodeYAML(tmpl.Root)
		if err != nil {
			t.Fatalf("accepted input cannot be written: %v", err)
		}
		again, err := Parse("again.yaml", y)
		if err != nil {
			t.Fatalf("written YAML does not read back: %v\n%s", err, y)
		}
		if !equal(tmpl.Root, again.Root) {
			t.Fatalf("YAML round trip changed the data:\n%s", y)
		}
		j, err := EncodeJSON(tmpl.Root)
		if err != nil {
			t.Fatalf("accepted input cannot be written as JSON: %v", err)
		}
		if !json.Valid(j) {
			t.Fatalf("invalid JSON written:\n%s", j)
		}
		if _, err := Parse("again.json", j); err != nil {
			t.Fatalf("written JSON does not read back: %v\n%s", err, j)
		}
	})
}
