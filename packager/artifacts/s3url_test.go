package artifacts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/assembly"
)

// TestS3MappingAgainstAWSCLI compares s3Mapping with aws-cli's own
// parse_s3_url (imported from the installed aws-cli) on generated s3://
// strings: where aws-cli writes a mapping, we write the same one, or
// refuse for a reason we document (a query key aws-cli drops, a version it
// drops, a # it reads as a fragment, an empty key it writes, which
// CloudFormation would refuse at deploy); where aws-cli refuses, we refuse.
func TestS3MappingAgainstAWSCLI(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err == nil {
		err = exec.Command(python, "-c", "import awscli.customizations.cloudformation.artifact_exporter").Run()
	}
	if err != nil {
		t.Skip("no python3 imports aws-cli's artifact_exporter (aws-cli 1.45 ships in this machine image's Python)")
	}
	r := rand.New(rand.NewPCG(28, 2))
	pick := func(parts ...string) string { return parts[r.IntN(len(parts))] }
	var urls []string
	for range 400 {
		u := "s3://" + pick("bkt", "my.bucket-1", "", "b") + pick("/", "//", "", "/dir/") + pick("code.zip", "a/b/c.zip", "", "sp ace.zip", "h#frag.zip", "q%20.zip", "ü.zip")
		switch r.IntN(6) {
		case 1:
			u += "?versionId=" + pick("v1", "", "a.b_c")
		case 2:
			u += "?versionId=v1&versionId=v2"
		case 3:
			u += "?partNumber=1"
		case 4:
			u += "?versionId=v1&x=y"
		}
		urls = append(urls, u)
	}
	lambda, beanstalk := Properties()[8], Properties()[9]
	if lambda.Type != "AWS::Lambda::Function" || beanstalk.Type != "AWS::ElasticBeanstalk::ApplicationVersion" {
		t.Fatal("the table's order changed")
	}
	const script = `
import json, sys
from awscli.customizations.cloudformation.artifact_exporter import parse_s3_url
out = []
for u in json.load(sys.stdin):
    row = []
    for b, k, v in (("S3Bucket", "S3Key", "S3ObjectVersion"), ("S3Bucket", "S3Key", None)):
        try:
            row.append(parse_s3_url(u, b, k, v))
        except ValueError:
            row.append(None)
    out.append(row)
json.dump(out, sys.stdout)
`
	in, _ := json.Marshal(urls)
	cmd := exec.Command(python, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("aws-cli's parse_s3_url: %v", err)
	}
	var theirs [][]map[string]string
	if err := json.Unmarshal(out, &theirs); err != nil {
		t.Fatal(err)
	}
	agreed, stricter := 0, 0
	for i, u := range urls {
		for j, p := range []Property{lambda, beanstalk} {
			want := theirs[i][j]
			m, err := s3Mapping(u, p)
			switch {
			case want == nil && err == nil:
				t.Errorf("%s (%s): aws-cli refuses it, we write %v", u, p.Type, m)
			case want == nil:
				agreed++
			case err != nil:
				q := u[strings.IndexByte(u, '/')+2:]
				documented := strings.Contains(q, "#") || // aws-cli reads a fragment
					want["S3Key"] == "" && strings.Contains(err.Error(), "no object key") || // aws-cli writes an empty key
					strings.Contains(q, "?") && (strings.Contains(q, "&") || strings.Contains(q, "partNumber") || strings.HasSuffix(q, "versionId=") || p.Version == "") // aws-cli drops part of the query
				if !documented {
					t.Errorf("%s (%s): aws-cli writes %v, we refuse: %v", u, p.Type, want, err)
				}
				stricter++
			default:
				got := map[string]string{}
				for k := 0; k+1 < len(m.Content); k += 2 {
					got[m.Content[k].Value] = m.Content[k+1].Value
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s (%s): aws-cli writes %v, we %v", u, p.Type, want, got)
				}
				agreed++
			}
		}
	}
	t.Logf("%d agree with aws-cli, %d refused where aws-cli drops or misreads part", agreed, stricter)
	if agreed < 300 {
		t.Errorf("only %d cases agree: the generator makes too few aws-cli reads", agreed)
	}
}

// FuzzUseName: whatever a template names its resources and properties,
// the name of an artifact is a droplet logical ID (the spec's rule).
func FuzzUseName(f *testing.F) {
	f.Add("Fn", "Code", "", "Nested")
	f.Add("Fn${Name}", "Command.ScriptLocation", "x/y", "")
	f.Add("", "", "", "")
	f.Add(strings.Repeat("A", 300), "Code", "ü", "a.b")
	f.Fuzz(func(t *testing.T, user, prop, scope1, scope2 string) {
		var scope []string
		for _, s := range []string{scope1, scope2} {
			if s != "" {
				scope = append(scope, s)
			}
		}
		n := UseName(scope, user, strings.Split(prop, "."))
		if !assembly.ValidLogicalID(n) || !assembly.ValidLogicalID(n+"-Stack-99") && len(n) <= maxUseName {
			t.Fatalf("UseName(%q, %q, %q) = %q: not a logical ID", scope, user, prop, n)
		}
	})
}
