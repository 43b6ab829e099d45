package cfn

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// TestEncodeYAMLMatchesYAMLv3 checks that our emitter writes the same text
// as yaml.v3's (which keeps a whole document's events in memory).
func TestEncodeYAMLMatchesYAMLv3(t *testing.T) {
	var b strings.Builder
	b.WriteString("Description: chunks\nResources:\n")
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&b, "  R%03d:\n    Type: X::Y::Z\n    Properties:\n      Ref: !Ref R%03d\n      Sub: !Sub \"${R}-%d\"\n      Script: |\n        line one\n          indented two\n      List: [a, !GetAtt R.Arn]\n      Empty: {}\n", i, i, i)
	}
	b.WriteString("Outputs:\n  X:\n    Value: !Ref R000\n")
	tmpl, err := Parse("chunks.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := EncodeYAML(tmpl.Root)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := yaml.NewEncoder(&want)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{shorten(tmpl.Root)}}); err != nil {
		t.Fatal(err)
	}
	enc.Close()
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("output differs from yaml.v3:\n%s\n---\n%s", got, want.Bytes())
	}
	if !bytes.Contains(got, []byte("Ref: !Ref R149")) || !bytes.Contains(got, []byte("indented two")) {
		t.Errorf("unexpected output:\n%s", got)
	}
}
