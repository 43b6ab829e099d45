package cfn

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	yaml "go.yaml.in/yaml/v3"
)

// bigFile is the 1 MB file of issue 19 item 8 (the most Fn::InsertFile
// inserts).
var bigFile = []byte(strings.Repeat("0123456789abcde\n", maxInsertFile/16))

// aliases returns the 5.5 KB template of issue 19 item 8: a YAML anchor on
// an Fn::InsertFile of a 1 MB file, and n aliases of it.
func aliases(n int) memSources {
	var b strings.Builder
	b.WriteString("Resources:\n  T:\n    Type: AWS::SNS::Topic\n    Metadata:\n      First: &f {Fn::InsertFile: big.txt}\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "      A%d: *f\n", i)
	}
	return memSources{"template.yaml": []byte(b.String()), "big.txt": bigFile}
}

// outputBytes is what an output tree takes, counted as produced counts it.
func outputBytes(n *yaml.Node) int64 {
	s := nodeCost + int64(len(n.Value))
	for _, c := range n.Content {
		s += outputBytes(c)
	}
	return s
}

// wantBound checks that Package fails with ErrTooLarge naming the place
// (file:line:col) and what produced the output.
func wantBound(t *testing.T, srcs memSources, at, what string) {
	t.Helper()
	out, err := Package("template.yaml", Options{Sources: srcs})
	if err == nil {
		t.Fatalf("packaged %d MB; want ErrTooLarge", outputBytes(out.Root)>>20)
	}
	if !errors.Is(err, ErrTooLarge) || !strings.HasPrefix(err.Error(), at+": "+what+" would take the packaged template past") {
		t.Fatalf("got %v; want ErrTooLarge at %s for %s", err, at, what)
	}
}

// Issue 19 item 8: what Fn::InsertFile produces counts against the same
// bound as the files parsed: 79 aliases of a 1 MB insert (86 MB of output
// before) stop at the first insert past 48 MiB, named by its place (the
// alias that made it).
func TestInsertFileAliasesBounded(t *testing.T) {
	if _, err := Package("template.yaml", Options{Sources: aliases(20)}); err != nil {
		t.Fatalf("21 MB of inserts: %v", err)
	}
	// The 48th insert, the alias A46 (line 52), takes the total past 48 MiB.
	wantBound(t, aliases(79), "template.yaml:52:12", "Fn::InsertFile")
}

// Every function that builds a value checks the bound before it builds it
// (a string of aliases joined with a 1 MB delimiter, a Sub writing a
// 1 MB variable a hundred times), or counts what it returns (a module
// parameter copied by each Ref, Fn::Flatten's result, ForEach copies).
func TestProducedOutputBounded(t *testing.T) {
	hundred := strings.TrimSuffix(strings.Repeat("a, ", 100), ", ")
	tests := []struct {
		name, template string
		more           memSources
		at, what       string
	}{
		{"Join delimiter", "Resources:\n  T:\n    Type: AWS::SNS::Topic\n    Metadata:\n      J: {Fn::Join: [{Fn::InsertFile: big.txt}, [" + hundred + "]]}\n", nil, "template.yaml:5:10", "Fn::Join"},
		{"Sub variable", "Resources:\n  T:\n    Type: AWS::SNS::Topic\n    Metadata:\n      S: {Fn::Sub: [\"" + strings.Repeat("${X}", 100) + "\", {X: {Fn::InsertFile: big.txt}}]}\n", nil, "template.yaml:5:10", "Fn::Sub"},
		{"Sub of a parameter", "Modules:\n  M:\n    Source: m.yaml\n    Properties:\n      P: {Fn::InsertFile: big.txt}\nResources: {}\n",
			memSources{"m.yaml": []byte("Parameters:\n  P: {Type: String}\nResources:\n  T:\n    Type: AWS::SNS::Topic\n    Properties:\n      Name: !Sub \"" + strings.Repeat("${P}", 100) + "\"\n")}, "m.yaml:7:13", "Fn::Sub"},
		{"Ref of a parameter", "Modules:\n  M:\n    Source: m.yaml\n    Properties:\n      P: {Fn::InsertFile: big.txt}\nResources: {}\n",
			memSources{"m.yaml": []byte("Parameters:\n  P: {Type: String}\nResources:\n  T:\n    Type: AWS::SNS::Topic\n    Metadata: [" + strings.TrimSuffix(strings.Repeat("!Ref P, ", 100), ", ") + "]\n")}, "m.yaml:6:", "Ref"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcs := memSources{"template.yaml": []byte(tt.template), "big.txt": bigFile}
			for k, v := range tt.more {
				srcs[k] = v
			}
			out, err := Package("template.yaml", Options{Sources: srcs})
			if err == nil {
				t.Fatalf("packaged %d MB; want ErrTooLarge", outputBytes(out.Root)>>20)
			}
			if !errors.Is(err, ErrTooLarge) || !strings.HasPrefix(err.Error(), tt.at) || !strings.Contains(err.Error(), tt.what+" would take the packaged template past 48 MiB") {
				t.Fatalf("got %v; want ErrTooLarge at %s for %s", err, tt.at, tt.what)
			}
		})
	}
}

// With the bound lowered, Fn::Flatten stops at the room left and ForEach
// counts its copies.
func TestFlattenAndForEachBounded(t *testing.T) {
	defer func(n int64) { maxExpansionBytes = n }(maxExpansionBytes)
	maxExpansionBytes = 256 << 10
	items := "[" + strings.TrimSuffix(strings.Repeat("x, ", 200), ", ") + "]"
	flat := "Resources:\n  T:\n    Type: AWS::SNS::Topic\n    Metadata:\n      F: {Fn::Flatten: {Source: {a: " + items + ", b: " + items + ", c: " + items + "}, Transform: {Template: {k: '$item', v: '$x', w: [1, 2, 3, 4]}, Variables: {x: '$item'}}}}\n"
	if out, err := Package("template.yaml", Options{Sources: memSources{"template.yaml": []byte(flat)}}); err == nil {
		t.Fatalf("Flatten: packaged %d KB; want ErrTooLarge", outputBytes(out.Root)>>10)
	} else if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "Fn::Flatten would take") {
		t.Fatalf("Flatten: got %v", err)
	}
	fe := "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    ForEach: " + strings.TrimSuffix(strings.Repeat("x,", 1000), ",") + "\n    Properties:\n      Tags: [" + strings.TrimSuffix(strings.Repeat("{Key: k, Value: v}, ", 10), ", ") + "]\n"
	_, err := Package("template.yaml", Options{Sources: memSources{"template.yaml": []byte(fe)}})
	if !errors.Is(err, ErrTooLarge) || !strings.HasPrefix(err.Error(), "template.yaml:2:3: ForEach would take") {
		t.Fatalf("ForEach: got %v", err)
	}
}

// FuzzOutputBound: with the bound lowered to 256 KiB and a 16 KB file to
// insert, whatever a fuzzed template makes of the golden cases' modules
// either fails or packages into at most twice the bound (the count leaves
// out only the ID prefixes modules add): no function call, alias or
// ForEach gets output past it (issue 19 item 8).
func FuzzOutputBound(f *testing.F) {
	mods := memSources{}
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "expand", "*.txtar"))
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, x := range ar.Files {
			switch {
			case x.Name == "want" || strings.HasPrefix(x.Name, "outside/"):
			case x.Name == "template.yaml":
				f.Add(x.Data)
			default:
				mods[x.Name] = x.Data
			}
		}
	}
	small := string(aliases(6)["template.yaml"])
	f.Add([]byte(small))
	f.Add([]byte("Resources:\n  T:\n    Type: AWS::SNS::Topic\n    Metadata:\n      J: {Fn::Join: [{Fn::InsertFile: big.txt}, [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r]]}\n"))
	f.Add([]byte("Resources:\n  T:\n    Type: AWS::SNS::Topic\n    Metadata:\n      S: {Fn::Sub: [\"${X}${X}${X}${X}${X}${X}${X}${X}${X}${X}${X}${X}${X}${X}${X}${X}${X}${X}\", {X: {Fn::InsertFile: big.txt}}]}\n"))
	f.Add([]byte("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    ForEach: a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v,w,x,y,z\n    Properties:\n      Body: {Fn::InsertFile: big.txt}\n"))
	mods["big.txt"] = []byte(strings.Repeat("0123456789abcde\n", 1024))
	f.Fuzz(func(t *testing.T, data []byte) {
		defer func(n int64) { maxExpansionBytes = n }(maxExpansionBytes)
		maxExpansionBytes = 256 << 10
		srcs := memSources{"template.yaml": data}
		for k, v := range mods {
			srcs[k] = v
		}
		out, err := Package("template.yaml", Options{Sources: srcs, NoSourceMap: true})
		if err != nil {
			return
		}
		if got := outputBytes(out.Root); got > 2*maxExpansionBytes {
			t.Fatalf("packaged %d node bytes, past twice the bound of %d", got, maxExpansionBytes)
		}
	})
}
