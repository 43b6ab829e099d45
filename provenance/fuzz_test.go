package provenance

import (
	"crypto/sha256"
	"testing"
	"time"
)

// FuzzEvaluate: any entry body is judged without a panic, and a verdict
// either passes every check or names the first that failed.
func FuzzEvaluate(f *testing.F) {
	body, sums := statementFor(f, map[string]string{"manifest.json": "{}"}, time.Unix(1700000000, 0))
	f.Add(body)
	f.Add([]byte(`{"_type":"https://in-toto.io/Statement/v1","subject":[{"digest":{"dirHash":"00"}}]}`))
	f.Add([]byte(`[]`))
	pol := &Policy{Builders: []string{"https://github.com/*"}, Refs: []string{"refs/*/*"}, MaxAge: time.Hour}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := Evaluate(b, sums, pol, time.Unix(1700000000, 0))
		if v == nil {
			t.Fatal("no verdict")
		}
		if (err == nil) != (v.Failed == nil) {
			t.Fatalf("error %v, failed %v", err, v.Failed)
		}
		for _, c := range v.Checks {
			if !c.Passed && v.Failed == nil {
				t.Fatalf("failed check %+v in a passing verdict", c)
			}
		}
	})
}

// TestSubjectBindsEveryFile: changing any one file's content, adding a
// file or removing one changes the digest (property over many sets);
// adding signature.asc or the entry to the sums is refused.
func TestSubjectBindsEveryFile(t *testing.T) {
	for n := 1; n < 30; n++ {
		sums := map[string][sha256.Size]byte{}
		for i := 0; i < n; i++ {
			sums[string(rune('a'+i%26))+"/"+string(rune('0'+i/26))] = sha256.Sum256([]byte{byte(i)})
		}
		base := mustDigest(t, sums)
		for name, s := range sums {
			s[n%32] ^= 1
			changed := copySums(sums)
			changed[name] = s
			if mustDigest(t, changed) == base {
				t.Fatalf("changing %s keeps the digest", name)
			}
			removed := copySums(sums)
			delete(removed, name)
			if mustDigest(t, removed) == base {
				t.Fatalf("removing %s keeps the digest", name)
			}
		}
		added := copySums(sums)
		added["zz"] = sha256.Sum256(nil)
		if mustDigest(t, added) == base {
			t.Fatal("adding a file keeps the digest")
		}
	}
}

func copySums(m map[string][sha256.Size]byte) map[string][sha256.Size]byte {
	out := make(map[string][sha256.Size]byte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
