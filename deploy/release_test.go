package deploy

import (
	"context"
	"strings"
	"testing"
)

// Issue 27, item 9: a release that changes nothing in a stack calls
// nothing that changes it. A second assembly (another SHA-256: a file was
// added) with the same droplets makes no CreateChangeSet, UpdateStack,
// ExecuteChangeSet or upload, for either method, and a plan of it makes
// no change set; the stack's assemble:sha256 tag keeps naming the
// assembly whose deploy made it, which status names. A third release that
// changes one stack's parameter makes one change for that stack only.
func TestUnchangedReleaseCallsNothing(t *testing.T) {
	cfg := awsConfig(t)
	for _, method := range []Method{ChangeSet, Direct} {
		t.Run(string(method), func(t *testing.T) {
			u := uniq()
			bucket := "rel-" + u
			makeBucket(t, cfg, bucket)
			params := func(v string) map[string]string { return map[string]string{"Target": v} }
			m := func(target string) map[string]any {
				return manifest(map[string]any{
					"One":  stack("One", env, "one-"+u, "app.yaml", params("a")),
					"Two":  stack("Two", env, "two-"+u, "app.yaml", params(target)),
					"File": fileDroplet(bucket),
				})
			}
			fs := files{"app.yaml": appTemplate, "f.txt": "f"}
			o := opts(cfg, nil)
			o.Method = method
			first := signedSource(t, m("b"), fs)
			if _, err := Deploy(context.Background(), first, o); err != nil {
				t.Fatal(err)
			}
			fs["notes.txt"] = "release 2"
			second := signedSource(t, m("b"), fs)
			if second.SHA256 == first.SHA256 {
				t.Fatal("one assembly")
			}
			for _, plan := range []bool{true, false} {
				c := &Counter{}
				o := opts(cfg, c)
				o.Method, o.Plan = method, plan
				res, err := Deploy(context.Background(), second, o)
				if err != nil {
					t.Fatal(err)
				}
				if n := changes(c) + c.Count("CreateChangeSet") + c.Count("UpdateStack") + c.Count("UploadPart"); n != 0 {
					t.Errorf("plan=%v: %d calls for an unchanged release: %v", plan, n, c.Counts())
				}
				for _, d := range res.Droplets {
					if !plan && d.Outcome != Unchanged {
						t.Errorf("%s %s, want unchanged", d.ID, d.Outcome)
					}
				}
				if a := strings.Join(res.Droplet("One").Actions, "\n"); !strings.Contains(a, "deployed by assembly "+first.SHA256.String()) {
					t.Errorf("plan=%v: One's actions do not name the assembly that deployed it: %s", plan, a)
				}
			}
			st, err := Status(context.Background(), second, opts(cfg, nil))
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range st.Droplets {
				if _, isStack := map[string]bool{"One": true, "Two": true}[d.ID]; isStack && (d.DeployedBy == nil || *d.DeployedBy != first.SHA256) {
					t.Errorf("status: %s deployed by %v, want %s", d.ID, d.DeployedBy, first.SHA256)
				}
			}
			if s := stackState(t, cfg, "one-"+u); !strings.Contains(s, TagSHA256+"="+first.SHA256.Hex()) {
				t.Errorf("One's tags changed: %s", s)
			}
			// Release 3: Two's parameter changes; One is left alone.
			third := signedSource(t, m("c"), fs)
			c := &Counter{}
			o = opts(cfg, c)
			o.Method = method
			res, err := Deploy(context.Background(), third, o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Droplet("One").Outcome != Unchanged || res.Droplet("Two").Outcome != Updated || res.Droplet("File").Outcome != Unchanged {
				t.Errorf("release 3: One %s, Two %s, File %s", res.Droplet("One").Outcome, res.Droplet("Two").Outcome, res.Droplet("File").Outcome)
			}
			if n := c.Count("CreateChangeSet") + c.Count("UpdateStack"); n != 1 {
				t.Errorf("release 3: %d change sets or updates, want 1: %v", n, c.Counts())
			}
		})
	}
}
