package deploy

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/digest"
)

// The assembly's SHA-256 in every deploy result is a digest.Digest: its
// JSON is "sha256:HEX" and reads back to the same digest, for any digest;
// a zero DeployedSHA256 is left out.
func TestResultDigestsJSONRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 4))
	for range 200 {
		b := make([]byte, r.IntN(64))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		d, other := digest.Of(b), digest.Of(append(b, 1))
		for _, v := range []any{
			&Result{SHA256: d},
			&StatusResult{SHA256: d},
			&DiffResult{SHA256: d, Deployed: []digest.Digest{other}, Droplets: []*DropletDiff{{DeployedSHA256: other}, {}}},
		} {
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), `"sha256":"`+d.String()+`"`) {
				t.Fatalf("%T: %s does not hold sha256 %s", v, out, d)
			}
			if strings.Count(string(out), "deployedSha256") > 1 {
				t.Fatalf("a zero deployedSha256 was printed: %s", out)
			}
			var back struct {
				SHA256   digest.Digest   `json:"sha256"`
				Deployed []digest.Digest `json:"deployed"`
				Droplets []struct {
					DeployedSHA256 digest.Digest `json:"deployedSha256"`
				} `json:"droplets"`
			}
			if err := json.Unmarshal(out, &back); err != nil || back.SHA256 != d {
				t.Fatalf("%T: %s read back as %s, %v", v, out, back.SHA256, err)
			}
			if _, ok := v.(*DiffResult); ok && (len(back.Deployed) != 1 || back.Deployed[0] != other || back.Droplets[0].DeployedSHA256 != other || !back.Droplets[1].DeployedSHA256.IsZero()) {
				t.Fatalf("deployed digests read back as %v %v", back.Deployed, back.Droplets)
			}
		}
	}
}

// tagDigest reads the assemble:sha256 tag and assemble-sha256 metadata in
// the hex deploy writes and in the sha256:HEX form; anything else (a tag
// someone else wrote, an empty one) is no digest.
func TestTagDigest(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 5))
	for range 200 {
		d := digest.Of([]byte{byte(r.Uint32()), byte(r.Uint32())})
		if got := tagDigest(d.Hex()); got != d {
			t.Fatalf("tagDigest(%s) = %s", d.Hex(), got)
		}
		if got := tagDigest(d.String()); got != d {
			t.Fatalf("tagDigest(%s) = %s", d, got)
		}
	}
	d := digest.Of(nil)
	for _, v := range []string{"", "yes", strings.ToUpper(d.Hex()), d.Hex()[:63], "sha256: " + d.Hex(), "sha512:" + d.Hex()} {
		if got := tagDigest(v); !got.IsZero() {
			t.Errorf("tagDigest(%q) = %s, want none", v, got)
		}
	}
}
