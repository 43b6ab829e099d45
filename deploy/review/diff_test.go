package review

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseShortForms(t *testing.T) {
	tpl := mustParse(t, "Resources:\n  B:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName: !Sub '${AWS::StackName}-b'\n      Tags: [{Key: k, Value: !GetAtt Q.Arn}, {Key: n, Value: !Ref P}]\n      X: !Join [',', [a, b]]\n")
	got, _ := json.Marshal(tpl)
	want := `{"Resources":{"B":{"Properties":{"BucketName":{"Fn::Sub":"${AWS::StackName}-b"},"Tags":[{"Key":"k","Value":{"Fn::GetAtt":["Q","Arn"]}},{"Key":"n","Value":{"Ref":"P"}}],"X":{"Fn::Join":[",",["a","b"]]}},"Type":"AWS::S3::Bucket"}}}`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	// JSON reads the same as YAML.
	j, err := Parse("t.json", got)
	if err != nil {
		t.Fatal(err)
	}
	if d := DiffResources(tpl, j); len(d) != 0 {
		t.Errorf("JSON and YAML differ: %+v", d)
	}
}

func TestParseErrors(t *testing.T) {
	for name, in := range map[string]string{
		"syntax":    "Resources:\n  B: [\n",
		"duplicate": "Resources:\n  B: {}\n  B: {}\n",
		"not a map": "- a\n- b\n",
		"too big":   strings.Repeat(" ", MaxTemplateBytes+1),
		"aliases":   "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
	} {
		_, err := Parse("t.yaml", []byte(in))
		var te *TemplateError
		if !errors.Is(err, ErrTemplate) || !errors.As(err, &te) || !strings.HasPrefix(err.Error(), "t.yaml") {
			t.Errorf("%s: err = %v, want a TemplateError naming t.yaml", name, err)
		}
	}
}

const base = `Parameters:
  Size: {Type: Number}
Resources:
  Bucket:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: b
      Tags: [{Key: team, Value: a}]
  Queue:
    Type: AWS::SQS::Queue
Outputs:
  BucketArn: {Value: !GetAtt Bucket.Arn}
`

func TestDiffStack(t *testing.T) {
	prev := &Stack{Template: mustParse(t, base), Parameters: map[string]string{"Size": "1"},
		Tags: map[string]string{"team": "a", "assemble:sha256": "x"}, Settings: map[string]string{"terminationProtection": "false"},
		Outputs: map[string]string{"BucketArn": "arn:aws:s3:::b"}}
	same := &Stack{Template: mustParse(t, base), Parameters: map[string]string{"Size": "1"},
		Tags: map[string]string{"team": "a", "assemble:sha256": "y"}, Settings: map[string]string{"terminationProtection": "false"}}
	d, err := DiffStack(prev, same, "assemble:")
	if err != nil || d.Changed() {
		t.Fatalf("unchanged stack: %+v %v", d, err)
	}
	changed := strings.Replace(base, "BucketName: b", "BucketName: c\n      VersioningConfiguration: {Status: Enabled}", 1)
	changed = strings.Replace(changed, "  Queue:\n    Type: AWS::SQS::Queue\n", "  Topic:\n    Type: AWS::SNS::Topic\n", 1)
	changed = strings.Replace(changed, "!GetAtt Bucket.Arn", "!Ref Bucket", 1)
	next := &Stack{Template: mustParse(t, changed), Parameters: map[string]string{"Size": Pending},
		Tags: map[string]string{"team": "b", "env": "prod"}, Settings: map[string]string{"terminationProtection": "true"}}
	d, err = DiffStack(prev, next, "assemble:")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(d)
	want := `{"new":false,"resources":[` +
		`{"logicalId":"Bucket","type":"AWS::S3::Bucket","action":"modify","changes":[{"path":"Properties.BucketName","old":"b","new":"c"},{"path":"Properties.VersioningConfiguration","new":{"Status":"Enabled"}}]},` +
		`{"logicalId":"Queue","type":"AWS::SQS::Queue","action":"remove"},{"logicalId":"Topic","type":"AWS::SNS::Topic","action":"add"}],` +
		`"parameters":[{"path":"Size","old":"1","new":"(known after deploy)","pending":true}],` +
		`"tags":[{"path":"env","new":"prod"},{"path":"team","old":"a","new":"b"}],` +
		`"settings":[{"path":"terminationProtection","old":"false","new":"true"}],` +
		`"outputs":[{"path":"BucketArn","old":"arn:aws:s3:::b","new":{"Ref":"Bucket"}}],"sections":[],"security":[]}`
	if string(got) != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	d, err = DiffStack(nil, next, "assemble:")
	if err != nil || !d.New || !d.Changed() || len(d.Resources) != 2 || d.Resources[0].Action != Add {
		t.Errorf("new stack: %+v %v", d, err)
	}
}

// TestDiffValuesProperty: a value never differs from itself (nor from its
// JSON round trip), and a value differs from another exactly when the
// diff is not empty.
func TestDiffValuesProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 500; i++ {
		a := map[string]any(randomTemplate(rng))
		b := map[string]any(randomTemplate(rng))
		if d := DiffValues("", a, a); len(d) != 0 {
			t.Fatalf("a value differs from itself: %v", d)
		}
		raw, _ := json.Marshal(a)
		var rt map[string]any
		json.Unmarshal(raw, &rt)
		if d := DiffValues("", a, rt); len(d) != 0 {
			t.Fatalf("a value differs from its JSON: %v", d)
		}
		if d := DiffValues("", a, b); (len(d) == 0) != equal(a, b) {
			t.Fatalf("diff %v but equal %v", d, equal(a, b))
		}
	}
}
