package cfn

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// fanOut returns a template and modules in which every module includes the
// next level n times, levels deep, ending in a 3-resource module.
func fanOut(n, levels int) memSources {
	instances := func(src string) string {
		var b strings.Builder
		b.WriteString("Modules:\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "  M%d:\n    Source: %s\n    Properties:\n      Name: n%d\n", i, src, i)
		}
		return b.String()
	}
	m := memSources{
		"template.yaml": []byte(instances("l1.yaml") + "Resources:\n  Top:\n    Type: AWS::SNS::Topic\n"),
		"leaf.yaml":     []byte("Parameters:\n  Name:\n    Type: String\nResources:\n  Bucket:\n    Type: AWS::S3::Bucket\n    Properties:\n      BucketName: !Sub ${Name}-data\n  Queue:\n    Type: AWS::SQS::Queue\n  Topic:\n    Type: AWS::SNS::Topic\n"),
	}
	for l := 1; l <= levels; l++ {
		next := fmt.Sprintf("l%d.yaml", l+1)
		if l == levels {
			next = "leaf.yaml"
		}
		m[fmt.Sprintf("l%d.yaml", l)] = []byte("Parameters:\n  Name:\n    Type: String\n" + instances(next))
	}
	return m
}

// Issue #11 defect 7: a fan-out of small modules stops at a memory bound
// (the node bytes the instances copy), far below the instance count limit.
func TestFanOutBoundedByMemory(t *testing.T) {
	defer func(n int64) { maxExpansionBytes = n }(maxExpansionBytes)
	maxExpansionBytes = 1 << 20
	small := fanOut(3, 2) // 3 + 9 + 27 instances
	if _, err := Package("template.yaml", Options{Sources: small}); err != nil {
		t.Fatalf("a small fan-out: %v", err)
	}
	big := fanOut(6, 4) // 6 + 36 + 216 + 1296 + 7776 instances, well under maxInstances
	_, err := Package("template.yaml", Options{Sources: big})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "would take more than 1 MiB") {
		t.Fatalf("got %v, want ErrTooLarge for the memory bound", err)
	}
}

// Issue #11 defect 7: an alias bomb stops at a bound on the memory of its
// expanded nodes.
func TestAliasBombBoundedByMemory(t *testing.T) {
	var b strings.Builder
	b.WriteString("Metadata:\n  a0: &a0 [x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 9), ", "))
	}
	b.WriteString("Resources:\n  T:\n    Type: AWS::SNS::Topic\n")
	_, err := Parse("bomb.yaml", []byte(b.String()))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), fmt.Sprintf("more than %d MiB of nodes once aliases are expanded", maxNodeBytes>>20)) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
}
