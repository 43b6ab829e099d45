package registry

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzFragment: parsing and validation either fail with ErrInvalidFragment
// or the fragment yields a schema that is valid JSON, is produced again
// byte for byte, and names every resource of the fragment.
func FuzzFragment(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*", "*", "fragments", "*.yaml"))
	if len(seeds) == 0 {
		f.Fatal("no seed fragments in testdata")
	}
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("{\"Parameters\": {\"P\": {\"Type\": \"String\", \"Description\": \"d\"}}, \"Resources\": {\"B\": {\"Type\": \"AWS::S3::Bucket\"}}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fr, err := ParseFragment("f.yaml", data)
		if err != nil {
			if !errors.Is(err, ErrInvalidFragment) {
				t.Fatalf("parse error outside ErrInvalidFragment: %v", err)
			}
			return
		}
		out, err := fr.Schema("Fuzz::Test::Module::MODULE", DefaultLimits())
		if err != nil {
			if !errors.Is(err, ErrInvalidFragment) {
				t.Fatalf("schema error outside ErrInvalidFragment: %v", err)
			}
			return
		}
		var doc struct {
			Properties struct {
				Resources struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"Resources"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatalf("schema is not JSON: %v\n%s", err, out)
		}
		again, _ := fr.Schema("Fuzz::Test::Module::MODULE", DefaultLimits())
		if string(again) != string(out) {
			t.Fatal("schema not deterministic")
		}
		_, res := fr.section("Resources")
		for _, p := range pairs(res) {
			if _, ok := doc.Properties.Resources.Properties[p[0].Value]; !ok {
				t.Fatalf("resource %q missing from the schema", p[0].Value)
			}
		}
	})
}
