package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzValidate: any input gets a verdict that agrees with its errors, and
// the result survives a JSON round trip (what --json prints).
func FuzzValidate(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "catalog", "*.json"))
	if len(seeds) == 0 {
		f.Fatal("no seed schemas in testdata/catalog")
	}
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	v, err := DefaultValidator()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := v.Validate("", data)
		if r.Valid != (len(r.Errors) == 0) {
			t.Fatalf("valid=%v with %d errors", r.Valid, len(r.Errors))
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back Result
		if err := json.Unmarshal(b, &back); err != nil || back.Valid != r.Valid || len(back.Errors) != len(r.Errors) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
