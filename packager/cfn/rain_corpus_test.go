package cfn

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// rainCorpus is rain's module suite (../shared/corpus/rain, see its README),
// from the repository's parent folder.
var rainCorpus = filepath.Join("..", "..", "..", "shared", "corpus", "rain")

// TestRainCorpus packages each case of rain's suite (cases.tsv) and
// compares the result with the expectation as rain's test does
// (cft/pkg/module_test.go: both parsed, intrinsics in one form, compared
// as data with diff.New: mapping order ignored, list order kept, types
// compared, "" equal to null); fail cases must be refused.
//
// The suite's templates refer to names they do not define (!Ref NotFound,
// RestApi, ${Foo}...), which assemble refuses in a template it builds
// (ErrDangling, see TestRainCorpusDangling): the suite runs with that
// check off, to compare the expansion itself.
func TestRainCorpus(t *testing.T) {
	f, err := os.Open(filepath.Join(rainCorpus, "cases.tsv"))
	if err != nil {
		t.Skip("rain's suite is not present (../shared/corpus/rain):", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	cases, passed := 0, 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 3 {
			continue
		}
		cases++
		name, verdict, tmpl := cols[0], cols[1], cols[2]
		ok := t.Run(name, func(t *testing.T) {
			got, err := Package(filepath.Join(rainCorpus, tmpl), Options{NoSourceMap: true, noRefCheck: true})
			switch verdict {
			case "fail":
				if err == nil {
					t.Fatalf("packaged; rain refuses this case")
				}
				var ce *Error
				if !errors.As(err, &ce) || ce.Line == 0 {
					t.Errorf("error %v names no line", err)
				}
				return
			case "expect":
			default:
				t.Fatalf("unknown verdict %q", verdict)
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cols) < 4 {
				t.Fatal("no expected file")
			}
			want, err := os.ReadFile(filepath.Join(rainCorpus, cols[3]))
			if err != nil {
				t.Fatal(err)
			}
			out, err := EncodeYAML(got.Root)
			if err != nil {
				t.Fatal(err)
			}
			if d := rainDiff(t, out, want); len(d) > 0 {
				t.Errorf("differs from %s:\n%s\n--- packaged:\n%s", cols[3], strings.Join(d, "\n"), out)
			}
		})
		if ok {
			passed++
		}
	}
	if cases == 0 {
		t.Fatal("cases.tsv lists no case")
	}
	t.Logf("rain's suite: %d of %d cases pass", passed, cases)
}

// rainDiff compares two templates as rain's diff.New does, returning the
// differences (none when equal).
func rainDiff(t *testing.T, got, want []byte) []string {
	t.Helper()
	decode := func(name string, b []byte) any {
		tp, err := Parse(name, b)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := tp.Root.Decode(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	var out []string
	rainCompare("", decode("packaged", got), decode("expected", want), &out)
	return out
}

// rainCompare follows rain's cft/diff compareValues: values of different
// types differ, except "" (packaged) and null (expected).
func rainCompare(at string, got, want any, out *[]string) {
	if reflect.TypeOf(got) != reflect.TypeOf(want) {
		if got == "" && want == nil {
			return
		}
		*out = append(*out, fmt.Sprintf("%s: got %#v, want %#v", at, got, want))
		return
	}
	switch g := got.(type) {
	case []any:
		w := want.([]any)
		for i := 0; i < max(len(g), len(w)); i++ {
			p := fmt.Sprintf("%s[%d]", at, i)
			switch {
			case i >= len(g):
				*out = append(*out, fmt.Sprintf("%s: missing, want %#v", p, w[i]))
			case i >= len(w):
				*out = append(*out, fmt.Sprintf("%s: got %#v, want nothing", p, g[i]))
			default:
				rainCompare(p, g[i], w[i], out)
			}
		}
	case map[string]any:
		w := want.(map[string]any)
		keys := map[string]bool{}
		for k := range g {
			keys[k] = true
		}
		for k := range w {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			gv, gok := g[k]
			wv, wok := w[k]
			switch {
			case !gok:
				*out = append(*out, fmt.Sprintf("%s.%s: missing, want %#v", at, k, wv))
			case !wok:
				*out = append(*out, fmt.Sprintf("%s.%s: got %#v, want nothing", at, k, gv))
			default:
				rainCompare(at+"."+k, gv, wv, out)
			}
		}
	default:
		if !reflect.DeepEqual(got, want) {
			*out = append(*out, fmt.Sprintf("%s: got %#v, want %#v", at, got, want))
		}
	}
}
