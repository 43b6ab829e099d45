package ynode

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func parse(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return Resolve(&doc)
}

func TestIntrinsic(t *testing.T) {
	for src, want := range map[string]string{
		`!Ref X`:                   "!Ref",
		`!GetAtt [A, B]`:           "!GetAtt",
		`{Ref: X}`:                 "Ref",
		`{"Fn::Sub": "x"}`:         "Fn::Sub",
		`{Condition: C}`:           "Condition",
		`{Ref: X, Other: 1}`:       "",
		`{A: 1}`:                   "",
		`x`:                        "",
		`!!str x`:                  "",
		`[Ref]`:                    "",
		`{"Fn::Merge": [a], B: c}`: "",
	} {
		if got := Intrinsic(parse(t, src)); got != want {
			t.Errorf("Intrinsic(%s) = %q, want %q", src, got, want)
		}
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`1`, `1.0`, true},
		{`1`, `"1"`, false},
		{`{a: 1, b: [x]}`, `{b: [x], a: 1}`, true},
		{`{a: 1}`, `{a: 1, b: 2}`, false},
		{`[a, b]`, `[b, a]`, false},
		{`!Ref X`, `X`, false},
		{`!Ref X`, `!Ref X`, true},
		{`true`, `"true"`, false},
		{`{a: &x [1]}`, `{a: [1]}`, true},
	}
	for _, tt := range tests {
		if got := Equal(parse(t, tt.a), parse(t, tt.b)); got != tt.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCopyExpandsAliases(t *testing.T) {
	n := parse(t, "a: &x {k: v}\nb: *x\n")
	c := Copy(n)
	Get(Get(c, "b"), "k").Value = "changed"
	if Get(Get(c, "a"), "k").Value != "v" || Get(Get(n, "b"), "k").Value != "v" {
		t.Error("Copy must expand aliases into independent nodes")
	}
	if Get(c, "b").Kind != yaml.MappingNode || Get(c, "a").Anchor != "" {
		t.Error("copied alias should be a mapping without anchors")
	}
}

func TestCount(t *testing.T) {
	src := "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
	prev := "a"
	for _, l := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		src += l + ": &" + l + " [" + strings.Repeat("*"+prev+",", 9) + "*" + prev + "]\n"
		prev = l
	}
	if _, ok := Count(parse(t, src), MaxNodes); ok {
		t.Error("a billion laughs fits the budget")
	}
	if n, ok := Count(parse(t, "{a: [1, 2]}"), 10); !ok || n != 5 {
		t.Errorf("Count = %d, %v; want 5 nodes", n, ok)
	}
	if Resolve(&yaml.Node{}) != nil {
		t.Error("the zero node (an empty document) should resolve to nil")
	}
}
