package deploy

import "testing"

// TestStackOutputsJSON: the bytes of cdk deploy --outputs-file
// (JSON.stringify(v, null, 2) and a newline: nothing HTML-escaped); a
// droplet that is no stack, or a stack without outputs, is left out.
// cmd/assemble's TestOutputsFileMatchesCDK compares with the real CDK CLI.
func TestStackOutputsJSON(t *testing.T) {
	r := &Result{Droplets: []*DropletResult{
		{ID: "B", Attributes: map[string]string{"stackArn": "arn:aws:cloudformation:us-east-1:1:stack/b/x", "output.Url": "https://h/?a=1&b=<2>", "output.Name": "n"}},
		{ID: "A", Attributes: map[string]string{"stackArn": "arn:aws:cloudformation:us-east-1:1:stack/a/x"}},
		{ID: "F", Attributes: map[string]string{"url": "s3://b/k"}},
	}}
	b, err := r.StackOutputsJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"b\": {\n    \"Name\": \"n\",\n    \"Url\": \"https://h/?a=1&b=<2>\"\n  }\n}\n"
	if string(b) != want {
		t.Errorf("got\n%q\nwant\n%q", b, want)
	}
	if b, _ := (&Result{}).StackOutputsJSON(); string(b) != "{}\n" {
		t.Errorf("no stacks: %q", b)
	}
}

// A matrix's outputs file: cdk's shape once per environment, the stacks
// with an environment of their own under theirs; one stack name in every
// pair is kept apart.
func TestStackOutputsJSONMatrix(t *testing.T) {
	stackIn := func(env, name, v string) *DropletResult {
		return &DropletResult{ID: "App", Environment: env, Attributes: map[string]string{"stackArn": "arn:aws:cloudformation:r:1:stack/" + name + "/x", "output.Url": v}}
	}
	r := &Result{
		Droplets: []*DropletResult{stackIn("aws://3/us-east-1", "shared", "s")},
		Pairs: []*Result{
			{Environment: "aws://1/us-east-1", Droplets: []*DropletResult{stackIn("aws://1/us-east-1", "app", "a")}},
			{Environment: "aws://1/eu-west-1", Droplets: []*DropletResult{stackIn("aws://1/eu-west-1", "app", "b"), {ID: "F", Environment: "aws://1/eu-west-1"}}},
			{Environment: "aws://2/eu-west-1", Droplets: []*DropletResult{{ID: "App", Environment: "aws://2/eu-west-1", Outcome: NotStarted}}},
		},
	}
	b, err := r.StackOutputsJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "aws://1/eu-west-1": {
    "app": {
      "Url": "b"
    }
  },
  "aws://1/us-east-1": {
    "app": {
      "Url": "a"
    }
  },
  "aws://3/us-east-1": {
    "shared": {
      "Url": "s"
    }
  }
}
`
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
}
