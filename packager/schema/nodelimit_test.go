package schema

import (
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/internal/yamlpos"
)

// A template whose YAML would hold more than yamlpos.MaxNodes nodes is not
// decoded: one finding says why and where.
func TestCheckTemplateRefusesTooManyNodes(t *testing.T) {
	src := "Resources:\n  A:\n    Type: AWS::S3::Bucket\n    Metadata: [" + strings.Repeat("x,", yamlpos.MaxNodes) + "x]\n"
	got, err := (&Catalog{}).CheckTemplate("t.yaml", []byte(src))
	if err != nil || len(got) != 1 || got[0].Line != 4 || !strings.Contains(got[0].Message, "more than 131072 YAML nodes") {
		t.Fatalf("got %v", got)
	}
	if res := templateResources([]byte(src)); len(res) != 0 {
		t.Errorf("templateResources decoded the template: %v", res)
	}
}
