package deploy

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// A handEdit is a change made to the account behind deploy's back, and
// whether it changes something the assembly signs.
type handEdit struct {
	what    string
	droplet string
	drifts  bool
	do      func(t *testing.T)
}

// Property: for random assemblies (stacks with and without parameters,
// defaults, tags and a stack policy; files; directories) deployed, then
// random hand edits of the account, status matches if and only if every
// signed thing matches: each edit that changes a signed thing makes its
// droplet differ, and the edits that change nothing signed (the same
// bytes written again, other metadata, a policy in other whitespace, an
// object outside a directory's prefix) leave status at match. Then
// deploy (with Prune) puts everything back and status matches.
//
// The edits are those moto 5.2.1 can make and deploy can undo there
// (see TestStackSettingsDriftAndRestore for the settings moto lacks).
func TestStatusMatchesIffSignedThingsMatch(t *testing.T) {
	cfg := awsConfig(t)
	cfn := cloudformation.NewFromConfig(cfg)
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	ctx := context.Background()
	for seed := uint64(1); seed <= 10; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 27))
			u := uniq()
			bucket := "prop-" + u
			makeBucket(t, cfg, bucket)
			ds := map[string]any{}
			fs := files{"policy.json": allowPolicy, "plain.yaml": topics(1 + rng.IntN(2)), "defaults.yaml": defaultsTemplate, "app.yaml": appTemplate}
			var edits []handEdit
			content := func(n int) string {
				b := make([]byte, n)
				for i := range b {
					b[i] = byte('a' + rng.IntN(26))
				}
				return string(b)
			}

			n := 1 + rng.IntN(3)
			for i := 0; i < n; i++ {
				id := fmt.Sprintf("D%d", i)
				switch rng.IntN(3) {
				case 0: // a stack
					name := fmt.Sprintf("prop-%s-%d", u, i)
					tpl := []string{"plain.yaml", "defaults.yaml", "app.yaml"}[rng.IntN(3)]
					var params map[string]string
					if tpl == "app.yaml" {
						params = map[string]string{"Target": content(5)}
					}
					d := stack(id, env, name, tpl, params)
					p := d["properties"].(map[string]any)
					if rng.IntN(2) == 0 {
						p["tags"] = map[string]any{"team": content(4)}
					}
					policy := rng.IntN(2) == 0
					if policy {
						p["stackPolicy"] = "policy.json"
					}
					ds[id] = d
					edits = append(edits,
						handEdit{"a stack policy set by hand", id, policy, func(t *testing.T) {
							if _, err := cfn.SetStackPolicy(ctx, &cloudformation.SetStackPolicyInput{StackName: aws.String(name), StackPolicyBody: aws.String(denyPolicy)}); err != nil {
								t.Fatal(err)
							}
						}})
					if policy {
						edits = append(edits, handEdit{"the signed policy in other whitespace", id, false, func(t *testing.T) {
							if _, err := cfn.SetStackPolicy(ctx, &cloudformation.SetStackPolicyInput{StackName: aws.String(name), StackPolicyBody: aws.String(strings.ReplaceAll(allowPolicy, ",", " ,\n "))}); err != nil {
								t.Fatal(err)
							}
						}})
					}
					if tpl != "plain.yaml" {
						param := map[string]string{"defaults.yaml": "Mode", "app.yaml": "Target"}[tpl]
						edits = append(edits, handEdit{"a parameter changed by hand", id, true, func(t *testing.T) {
							if _, err := cfn.UpdateStack(ctx, &cloudformation.UpdateStackInput{StackName: aws.String(name), UsePreviousTemplate: aws.Bool(true),
								Parameters: []cfntypes.Parameter{{ParameterKey: aws.String(param), ParameterValue: aws.String("by-hand")}}}); err != nil {
								t.Fatal(err)
							}
						}})
					}
				case 1: // a file
					key := fmt.Sprintf("files/%d.txt", i)
					body := content(1 + rng.IntN(200))
					fs[fmt.Sprintf("f%d.txt", i)] = body
					ds[id] = map[string]any{"type": "npm://@aws-cdk/assets.FileDroplet", "environment": env,
						"properties": map[string]any{"file": fmt.Sprintf("f%d.txt", i), "bucketName": bucket, "objectKey": key}}
					edits = append(edits, objectEdits(t, s3c, bucket, key, id, body, content)...)
				case 2: // a directory, file by file
					prefix := fmt.Sprintf("site%d/", i)
					var first, firstBody string
					for j := 0; j < 1+rng.IntN(3); j++ {
						name := fmt.Sprintf("dir%d/p%d.html", i, j)
						fs[name] = content(1 + rng.IntN(100))
						if first == "" {
							first, firstBody = prefix+fmt.Sprintf("p%d.html", j), fs[name]
						}
					}
					ds[id] = map[string]any{"type": "npm://@aws-cdk/assets.DirectoryDroplet", "environment": env,
						"properties": map[string]any{"directory": fmt.Sprintf("dir%d", i), "bucketName": bucket, "keyPrefix": prefix}}
					edits = append(edits, objectEdits(t, s3c, bucket, first, id, firstBody, content)...)
					edits = append(edits,
						handEdit{"an extra object under the prefix", id, true, func(t *testing.T) { put(t, s3c, bucket, prefix+"extra.html", "x", nil) }},
						handEdit{"an object outside the prefix", id, false, func(t *testing.T) { put(t, s3c, bucket, "elsewhere/"+prefix+"x.html", "x", nil) }})
				}
			}
			src := signedSource(t, manifest(ds), fs)
			o := opts(cfg, nil)
			o.Method = Direct
			if _, err := Deploy(ctx, src, o); err != nil {
				t.Fatal(err)
			}
			statusMatches(t, src, cfg)

			// Zero to three edits, each on its own droplet (two edits of one
			// object would overwrite each other).
			limit := rng.IntN(4)
			drifted := map[string]bool{}
			used := map[string]bool{}
			var done []string
			rng.Shuffle(len(edits), func(i, j int) { edits[i], edits[j] = edits[j], edits[i] })
			for _, e := range edits {
				if len(done) == limit || used[e.droplet] {
					continue
				}
				used[e.droplet] = true
				e.do(t)
				done = append(done, e.droplet+": "+e.what)
				if e.drifts {
					drifted[e.droplet] = true
				}
			}
			t.Logf("%d droplets; edits %q", len(ds), done)
			st, err := Status(ctx, src, opts(cfg, nil))
			if want := len(drifted) == 0; st.Match != want || (err == nil) != want || !want && !errors.Is(err, ErrDiffers) {
				t.Fatalf("after %q: status match %v (%v), want %v: %+v", done, st.Match, err, want, st.Droplets)
			}
			for _, d := range st.Droplets {
				if (d.State == "match") == drifted[d.ID] {
					t.Errorf("after %q: %s is %s %q", done, d.ID, d.State, d.Differences)
				}
			}

			o.Prune = true
			if _, err := Deploy(ctx, src, o); err != nil {
				t.Fatalf("deploy after %q: %v", done, err)
			}
			statusMatches(t, src, cfg)
		})
	}
}

func put(t *testing.T, c *s3.Client, bucket, key, body string, meta map[string]string) {
	t.Helper()
	if _, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body), Metadata: meta}); err != nil {
		t.Fatal(err)
	}
}

// objectEdits are the hand edits of one deployed object.
func objectEdits(t *testing.T, c *s3.Client, bucket, key, id, body string, content func(int) string) []handEdit {
	meta := map[string]string{MetaContentSHA256: hexSHA256([]byte(body))}
	return []handEdit{
		{"the same bytes written again", id, false, func(t *testing.T) { put(t, c, bucket, key, body, nil) }},
		{"other bytes, same size, metadata copied", id, true, func(t *testing.T) {
			other := []byte(content(len(body)))
			if string(other) == body {
				other[0] ^= 1
			}
			put(t, c, bucket, key, string(other), meta)
		}},
		{"other metadata, same bytes", id, false, func(t *testing.T) {
			if _, err := c.CopyObject(context.Background(), &s3.CopyObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), CopySource: aws.String(bucket + "/" + key),
				MetadataDirective: s3types.MetadataDirectiveReplace, Metadata: map[string]string{MetaContentSHA256: strings.Repeat("0", 64)}}); err != nil {
				t.Fatal(err)
			}
		}},
		{"deleted", id, true, func(t *testing.T) {
			if _, err := c.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)}); err != nil {
				t.Fatal(err)
			}
		}},
	}
}
