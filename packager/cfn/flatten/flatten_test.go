package flatten

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloud-assembly/assemble/packager/cfn/internal/ynode"
	"github.com/cloud-assembly/assemble/packager/cfn/internal/ynodetest"
	"go.yaml.in/yaml/v3"
)

var (
	parse = ynodetest.Parse
	dump  = ynodetest.Dump
)

func TestFlatten(t *testing.T) {
	tests := []struct {
		name, arg, want string
	}{
		{"plain list", `[1, 2, 3]`, `[1, 2, 3]`},
		{"nested lists deep", `[[1, [2, [3]]], 4]`, `[1, 2, 3, 4]`},
		{"intrinsic list kept", `[!Split [",", "a,b"], x]`, `[!Split [",", "a,b"], x]`},
		{"source list", `{Source: [[a], [b, c]]}`, `[a, b, c]`},
		{"source map values", `{Source: {x: [1, 2], y: 3, z: {k: v}}}`, `[1, 2, 3, {k: v}]`},
		{"pattern nested", `{Source: [[1, 2], [3, 4], [5]], Pattern: "$[*][*]"}`, `[1, 2, 3, 4, 5]`},
		{"pattern property", `{Source: {users: [{roles: [a, b]}, {roles: [c]}]}, Pattern: "$.users[*].roles[*]"}`, `[a, b, c]`},
		{"pattern map wildcard", `{Source: {G1: {items: [1, 2]}, G2: {items: [3]}}, Pattern: "$.*.items[*]"}`, `[1, 2, 3]`},
		{"pattern index and quoted key", `{Source: {"a b": [x, y]}, Pattern: "$['a b'][1]"}`, `[y]`},
		{"pattern keeps lists it selects", `{Source: {u: [{r: [a]}, {r: [b]}]}, Pattern: "$.u[*].r"}`, `[[a], [b]]`},
		{"pattern missing key selects nothing", `{Source: {a: 1}, Pattern: "$.b[*]"}`, `[]`},
		{"pattern root", `{Source: {a: 1}, Pattern: "$"}`, `[{a: 1}]`},
		{"transform no variables", `{Source: [{n: a}, {n: b}], Transform: {Template: {Name: "$item.n"}}}`, `[{Name: a}, {Name: b}]`},
		{"transform first variable outermost", `{Source: [{r: [r1, r2], e: [dev, prod]}], Transform: {Template: "$r/$e", Variables: {r: "$item.r[*]", e: "$item.e[*]"}}}`,
			`[r1/dev, r1/prod, r2/dev, r2/prod]`},
		{"transform dependent variables", `{Source: [{envs: [{n: dev, regions: [a, b]}, {n: prod, regions: [c]}]}], Transform: {Template: "${env.n}-$r", Variables: {env: "$item.envs[*]", r: "$env.regions[*]"}}}`,
			`[dev-a, dev-b, prod-c]`},
		{"transform empty variable drops item", `{Source: [{n: a, e: []}, {n: b, e: [x]}], Transform: {Template: "$item.n-$e", Variables: {e: "$item.e[*]"}}}`, `[b-x]`},
		{"whole reference keeps type", `{Source: [{id: "012345678901", n: 5, o: {k: v}}], Transform: {Template: {A: "$item.id", N: "$item.n", O: "$item.o", S: "n=$item.n"}}}`,
			`[{A: "012345678901", N: 5, O: {k: v}, S: "n=5"}]`},
		{"whole reference wildcard gives list", `{Source: [{e: [a, b]}], Transform: {Template: {L: "$item.e[*]"}}}`, `[{L: [a, b]}]`},
		{"braces and escapes", `{Source: [{n: a}], Transform: {Template: "${item.n}.txt costs $$5 in ${AWS::Region} and $other"}}`,
			`["a.txt costs $5 in ${AWS::Region} and $other"]`},
		{"sub tag kept, text substituted", `{Source: [{n: a}], Transform: {Template: {V: !Sub "$item.n-${AWS::Region}"}}}`, `[{V: !Sub "a-${AWS::Region}"}]`},
		{"keys not substituted", `{Source: [{n: a}], Transform: {Template: {"$item.n": x}}}`, `[{"$item.n": x}]`},
		{"intrinsic values carried", `{Source: [{v: !Ref P}], Transform: {Template: {V: "$item.v"}}}`, `[{V: !Ref P}]`},
		{"group by", `{Source: [{e: dev, n: 1}, {e: prod, n: 2}, {e: dev, n: 3}], GroupBy: e}`,
			`{dev: [{e: dev, n: 1}, {e: dev, n: 3}], prod: [{e: prod, n: 2}]}`},
		{"group by path after transform", `{Source: [{a: {e: x}}], Transform: {Template: {G: {e: "$item.a.e"}}}, GroupBy: "$.G.e"}`,
			`{x: [{G: {e: x}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Flatten(parse(t, tt.arg))
			if err != nil {
				t.Fatalf("Flatten: %v", err)
			}
			if want := parse(t, tt.want); !ynode.Equal(got, want) {
				t.Errorf("got\n%s\nwant %s", dump(t, got), tt.want)
			}
		})
	}
}

// TestDigitStringsStayStrings pins the decision to keep the type of a value
// a whole-string reference copies: an account id with a leading zero would
// otherwise lose it.
func TestDigitStringsStayStrings(t *testing.T) {
	got, err := Flatten(parse(t, `{Source: [{id: "012345678901"}], Transform: {Template: {A: "$item.id"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if a := ynode.Get(got.Content[0], "A"); a.ShortTag() != "!!str" || a.Value != "012345678901" {
		t.Errorf("got %s, want the id as the string \"012345678901\"", dump(t, got))
	}
}

func TestFlattenErrors(t *testing.T) {
	tests := []struct {
		name, arg string
		want      error
		msg       string
	}{
		{"scalar", `x`, ErrArgs, "expected a list"},
		{"unresolved argument", `!Ref List`, ErrUnresolved, "!Ref at line 1"},
		{"unresolved source", `{Source: !Ref ServiceConfig}`, ErrUnresolved, "Source is !Ref"},
		{"unresolved long-form source", `{Source: {Ref: ServiceConfig}}`, ErrUnresolved, "Source is Ref"},
		{"path into intrinsic", `{Source: {a: !GetAtt X.Y}, Pattern: "$.a[*]"}`, ErrUnresolved, "reaches !GetAtt"},
		{"missing source", `{Pattern: "$"}`, ErrArgs, "Source is missing"},
		{"unknown key", `{Source: [], Patern: "$"}`, ErrArgs, `unknown key "Patern"`},
		{"scalar source", `{Source: x}`, ErrArgs, "must be a list or an object"},
		{"pattern not a path", `{Source: [], Pattern: "a.b"}`, ErrArgs, "must start with $"},
		{"pattern bad bracket", `{Source: [], Pattern: "$[x]"}`, ErrArgs, "is not *, an index"},
		{"pattern unclosed", `{Source: [], Pattern: "$[*"}`, ErrArgs, "unclosed"},
		{"pattern rooted elsewhere", `{Source: [], Pattern: "$item.a"}`, ErrArgs, "starts at $"},
		{"transform without template", `{Source: [1], Transform: {Variables: {}}}`, ErrArgs, "no Template"},
		{"transform unknown key", `{Source: [1], Transform: {Template: x, Vars: {}}}`, ErrArgs, `unknown Transform key "Vars"`},
		{"variable bad root", `{Source: [1], Transform: {Template: x, Variables: {e: "$env[*]"}}}`, ErrArgs, "must start at $item or an earlier variable"},
		{"variable named item", `{Source: [1], Transform: {Template: x, Variables: {item: "$item"}}}`, ErrArgs, "new identifier"},
		{"variable not string", `{Source: [1], Transform: {Template: x, Variables: {e: [a]}}}`, ErrArgs, "must be a path"},
		{"reference matches nothing", `{Source: [{n: a}], Transform: {Template: "$item.nmae"}}`, ErrArgs, "$item.nmae in the Template at line 1 matches nothing"},
		{"list spliced into text", `{Source: [{e: [a, b]}], Transform: {Template: "x-$item.e[*]"}}`, ErrArgs, "matches 2 values"},
		{"object spliced into text", `{Source: [{o: {k: v}}], Transform: {Template: "x-$item.o"}}`, ErrArgs, "is an object"},
		{"group by missing", `{Source: [{e: a}, {f: b}], GroupBy: e}`, ErrArgs, "item 1 (line 1) has no single scalar"},
		{"group by not string", `{Source: [], GroupBy: [e]}`, ErrArgs, "GroupBy at line 1 must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Flatten(parse(t, tt.arg))
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %q, want it to contain %q", err, tt.msg)
			}
		})
	}
}

func TestTooLarge(t *testing.T) {
	defer func(n int) { maxNodes = n }(maxNodes)
	maxNodes = 20000
	// 300 items times a 101-node template exceed the node budget.
	list := "[" + strings.Repeat("x,", 299) + "x]"
	tmpl := "[" + strings.Repeat("$x,", 99) + "$x]"
	arg := `{Source: [{a: ` + list + `}], Transform: {Template: ` + tmpl + `, Variables: {x: "$item.a[*]"}}}`
	if _, err := Flatten(parse(t, arg)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("result: err = %v, want ErrTooLarge", err)
	}
	// Aliases count as expanded in the argument: 10^5 nodes.
	src := "a: &a [x,x,x,x,x,x,x,x,x,x]\n"
	prev := "a"
	for _, l := range []string{"b", "c", "d", "e"} {
		src += l + ": &" + l + " [" + strings.Repeat("*"+prev+",", 9) + "*" + prev + "]\n"
		prev = l
	}
	if _, err := Flatten(parse(t, "Source:\n  "+strings.ReplaceAll(src, "\n", "\n  "))); !errors.Is(err, ErrTooLarge) {
		t.Errorf("argument: err = %v, want ErrTooLarge", err)
	}
}

// walk replaces every {Fn::Flatten: arg} mapping under n by its result.
func walk(t *testing.T, n *yaml.Node) {
	for i, c := range n.Content {
		if c.Kind == yaml.MappingNode && len(c.Content) == 2 && c.Content[0].Value == Name {
			got, err := Flatten(c.Content[1])
			if err != nil {
				t.Fatalf("Fn::Flatten at line %d: %v", c.Line, err)
			}
			n.Content[i] = got
			continue
		}
		walk(t, c)
	}
}

func corpusDir(t *testing.T) string {
	dir := filepath.Join("..", "..", "..", "..", "shared", "corpus", "modules", "aws-cli")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("peer corpus not present:", err)
	}
	return dir
}

func readYAML(t *testing.T, name string) *yaml.Node {
	b, err := os.ReadFile(filepath.Join(corpusDir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, string(b))
}

// looseEqual compares as data with scalars compared as text, like the peer
// suite's compare.py --loose-scalars.
func looseEqual(a, b *yaml.Node) bool {
	a, b = ynode.Resolve(a), ynode.Resolve(b)
	if a == nil || b == nil || a.Kind != b.Kind || len(a.Content) != len(b.Content) {
		return a == b
	}
	switch a.Kind {
	case yaml.ScalarNode:
		return a.Value == b.Value
	case yaml.MappingNode:
		for i := 0; i < len(a.Content); i += 2 {
			if !looseEqual(a.Content[i+1], ynode.Get(b, a.Content[i].Value)) {
				return false
			}
		}
		return true
	}
	for i := range a.Content {
		if !looseEqual(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

func TestCorpus(t *testing.T) {
	for _, tc := range []struct {
		name  string
		loose bool
	}{
		{"flatten", false},
		{"flatten-basic", false},
		// The expectation turns the quoted account ids into integers; we keep
		// them strings on purpose (see the package doc), so compare as text.
		{"flatten-transform", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := readYAML(t, tc.name+"-template.yaml")
			walk(t, tmpl)
			want := readYAML(t, tc.name+"-expect.yaml")
			eq := ynode.Equal
			if tc.loose {
				eq = looseEqual
				if ynode.Equal(tmpl, want) {
					t.Errorf("strictly equal: the digit-string quirk is gone, drop the loose compare")
				}
			}
			if !eq(tmpl, want) {
				t.Errorf("got\n%s\nwant\n%s", dump(t, tmpl), dump(t, want))
			}
		})
	}
}

// TestCorpusForEach flattens the ForEach list of the flatten-foreach case
// (its Source is the parent parameter's Default) and checks the items the
// module instances are made from: order, Identifier and values.
func TestCorpusForEach(t *testing.T) {
	tmpl := readYAML(t, "flatten-foreach-template.yaml")
	arg := ynode.Copy(ynode.Get(ynode.Get(ynode.Get(ynode.Get(tmpl, "Modules"), "Service"), "ForEach"), Name))
	def := ynode.Get(ynode.Get(ynode.Get(tmpl, "Parameters"), "ServiceConfig"), "Default")
	arg.Content[1] = def // Source: !Ref ServiceConfig, resolved as the engine does
	got, err := Flatten(arg)
	if err != nil {
		t.Fatal(err)
	}
	expect := readYAML(t, "flatten-foreach-expect.yaml")
	res := ynode.Get(expect, "Resources")
	if len(got.Content) != len(res.Content)/2 {
		t.Fatalf("%d items, want %d", len(got.Content), len(res.Content)/2)
	}
	for i, it := range got.Content {
		props := ynode.Get(res.Content[2*i+1], "Properties")
		for key, want := range map[string]string{
			"Identifier":  ynode.Get(props, "Name").Value,
			"ServiceName": ynode.Get(props, "ServiceName").Value,
			"Environment": ynode.Get(props, "Environment").Value,
			"Type":        ynode.Get(props, "ServiceType").Value,
		} {
			if v := ynode.Get(it, key); v == nil || v.Value != want {
				t.Errorf("item %d (%s): %s = %v, want %s", i, res.Content[2*i].Value, key, dump(t, v), want)
			}
		}
	}
}
