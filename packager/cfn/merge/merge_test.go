package merge

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

var parse = ynodetest.Parse

func TestMerge(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"maps later wins", `[{A: 1, B: 2}, {B: 3, C: 4}]`, `{A: 1, B: 3, C: 4}`},
		{"maps recursive", `[{T: {a: 1, b: 2}}, {T: {b: 9, c: 3}}]`, `{T: {a: 1, b: 9, c: 3}}`},
		{"nested lists concatenate", `[{L: [a]}, {L: [a, b]}]`, `{L: [a, a, b]}`},
		{"scalar replaces object", `[{T: {a: 1}}, {T: x}]`, `{T: x}`},
		{"object replaces scalar", `[{T: x}, {T: {a: 1}}]`, `{T: {a: 1}}`},
		{"intrinsic is a value", `[{V: !Ref A}, {V: !GetAtt B.Arn}]`, `{V: !GetAtt B.Arn}`},
		{"long-form intrinsic is a value", `[{V: {Ref: A}}, {V: {"Fn::GetAtt": [B, Arn]}}]`, `{V: {"Fn::GetAtt": [B, Arn]}}`},
		{"lists concatenate with duplicates", `[[a, b], [b, c], [b, c]]`, `[a, b, b, c, b, c]`},
		{"single map", `[{A: 1}]`, `{A: 1}`},
		{"nulls skipped", `[null, {A: 1}, ~, {B: 2}]`, `{A: 1, B: 2}`},
		{"three maps", `[{A: 1}, {A: 2}, {A: 3}]`, `{A: 3}`},
		{"empty map", `[{}, {A: 1}]`, `{A: 1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Merge(parse(t, tt.args))
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			if want := parse(t, tt.want); !ynode.Equal(got, want) {
				t.Errorf("got %s, want %s", dump(t, got), tt.want)
			}
		})
	}
}

func TestMergeKeyOrder(t *testing.T) {
	got, err := Merge(parse(t, `[{Z: 1, A: 2}, {M: 3, Z: 4}]`))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := 0; i < len(got.Content); i += 2 {
		keys = append(keys, got.Content[i].Value)
	}
	if strings.Join(keys, ",") != "Z,A,M" {
		t.Errorf("key order %v, want Z,A,M (first appearance)", keys)
	}
	if v := ynode.Get(got, "Z"); v.Value != "4" {
		t.Errorf("Z = %s, want 4", v.Value)
	}
}

func TestMergeDoesNotAlias(t *testing.T) {
	args := parse(t, `[{T: {a: 1}}, {T: {b: 2}}]`)
	got, err := Merge(args)
	if err != nil {
		t.Fatal(err)
	}
	ynode.Get(ynode.Get(got, "T"), "a").Value = "changed"
	if ynode.Get(ynode.Get(args.Content[0], "T"), "a").Value != "1" {
		t.Error("Merge result shares nodes with its argument")
	}
}

func TestMergeErrors(t *testing.T) {
	tests := []struct {
		name, args string
		want       error
		msg        string
	}{
		{"not a list", `{A: 1}`, ErrArgs, "expected a list"},
		{"scalar argument", `[{A: 1}, x]`, ErrArgs, "argument 2 at line 1"},
		{"mixed kinds", `[{A: 1}, [b]]`, ErrArgs, "cannot merge a list into an object"},
		{"unresolved argument", `[!Ref Tags, {A: 1}]`, ErrUnresolved, "argument 1 (!Ref)"},
		{"unresolved long form", `[{Ref: Tags}, {A: 1}]`, ErrUnresolved, "argument 1 (Ref)"},
		{"unresolved whole", `!Ref Lists`, ErrUnresolved, "!Ref"},
		{"empty", `[]`, ErrArgs, "no object or list"},
		{"duplicate key", `[{A: 1}, {B: {C: 1, C: 2}}]`, ErrArgs, `duplicate key "C" at line 1`},
		{"only nulls", `[null]`, ErrArgs, "no object or list"},
		{"duplicate key through an alias", `[{a: 1}, {&k b: 2, *k : 3}]`, ErrArgs, `duplicate key "b" at line 1`},
		{"collection key", `[{a: 1}, {[x]: 2}]`, ErrArgs, "not a plain value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Merge(parse(t, tt.args))
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %q, want it to contain %q", err, tt.msg)
			}
		})
	}
	if _, err := Merge(nil); !errors.Is(err, ErrArgs) {
		t.Errorf("Merge(nil) = %v, want ErrArgs", err)
	}
}

// TestCorpus evaluates the Fn::Merge calls of the peer suite's merge case:
// each !Ref in the module's Fn::Merge arguments is replaced by the Property
// the template passes, and the result must equal the expected output.
func TestCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "shared", "corpus", "modules", "aws-cli")
	if _, err := os.Stat(dir); err != nil {
		t.Skip("peer corpus not present:", err)
	}
	read := func(name string) *yaml.Node {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return parse(t, string(b))
	}
	tmpl, mod, expect := read("merge-template.yaml"), read("merge-module.yaml"), read("merge-expect.yaml")
	props := ynode.Get(ynode.Get(ynode.Get(tmpl, "Modules"), "Foo"), "Properties")
	modProps := ynode.Get(ynode.Get(ynode.Get(mod, "Resources"), "Bar"), "Properties")
	wantProps := ynode.Get(ynode.Get(ynode.Get(expect, "Resources"), "FooBar"), "Properties")
	for _, key := range []string{"Merged", "Lists"} {
		args := ynode.Copy(ynode.Get(ynode.Get(modProps, key), Name))
		for i, a := range args.Content {
			if a.Tag != "!Ref" {
				t.Fatalf("%s argument %d is not a !Ref", key, i)
			}
			args.Content[i] = ynode.Get(props, a.Value)
		}
		got, err := Merge(args)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if want := ynode.Get(wantProps, key); !ynode.Equal(got, want) {
			t.Errorf("%s = %s, want %s", key, dump(t, got), dump(t, want))
		}
	}
}

func dump(t testing.TB, n *yaml.Node) string {
	b, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// FuzzMerge checks the laws of Fn::Merge on arbitrary YAML: errors are
// classified, a list merge has the summed length, and every key of every
// argument is in a map merge, with the last argument's value for scalars.
func FuzzMerge(f *testing.F) {
	for _, s := range []string{
		`[{A: 1, B: 2}, {B: 3, C: 4}]`, `[[a, b], [b, c]]`, `[{T: {a: [1]}}, {T: {a: [2]}}]`,
		`[!Ref X, {A: 1}]`, `[{A: 1}, [b]]`, `{A: 1}`, `[null, {A: &x 1, B: *x}]`,
		`[{a: 1}, {&k b: 2, *k : 3}]`, `[{&k a: 1}, {*k : 2}]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(src), &doc) != nil {
			return
		}
		args := ynode.Resolve(&doc)
		got, err := Merge(args)
		if err != nil {
			if !errors.Is(err, ErrArgs) && !errors.Is(err, ErrUnresolved) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		switch got.Kind {
		case yaml.SequenceNode:
			n := 0
			for _, a := range args.Content {
				if a := ynode.Resolve(a); !ynode.IsNull(a) {
					n += len(a.Content)
				}
			}
			if len(got.Content) != n {
				t.Fatalf("list merge has %d items, want %d", len(got.Content), n)
			}
		case yaml.MappingNode:
			keys := map[string]bool{}
			for i := 0; i+1 < len(got.Content); i += 2 {
				k := ynode.Key(got.Content[i])
				if keys[k] {
					t.Fatalf("key %q twice in the result", k)
				}
				keys[k] = true
			}
			last := map[string]*yaml.Node{}
			for _, a := range args.Content {
				if a := ynode.Resolve(a); !ynode.IsNull(a) {
					for i := 0; i+1 < len(a.Content); i += 2 {
						last[ynode.Key(a.Content[i])] = a.Content[i+1]
					}
				}
			}
			for k, v := range last {
				gv := ynode.Get(got, k)
				if gv == nil {
					t.Fatalf("key %q lost", k)
				}
				if r := ynode.Resolve(v); r != nil && r.Kind == yaml.ScalarNode && !ynode.Equal(gv, r) {
					t.Fatalf("key %q = %q, want the last value %q", k, ynode.Resolve(gv).Value, r.Value)
				}
			}
		default:
			t.Fatalf("result is neither a list nor an object")
		}
	})
}

func TestMergeTooLarge(t *testing.T) {
	src := "- &a [x,x,x,x,x,x,x,x,x,x]\n"
	prev := "a"
	for _, l := range []string{"b", "c", "d", "e", "f"} {
		src += "- &" + l + " [" + strings.Repeat("*"+prev+",", 9) + "*" + prev + "]\n"
		prev = l
	}
	if _, err := Merge(parse(t, src)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("err = %v, want ErrTooLarge", err)
	}
}
