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
