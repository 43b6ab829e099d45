package yamlpos

import (
	"bytes"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	yaml "go.yaml.in/yaml/v3"
)

// v3Nodes decodes every document of data into yaml.Node, as the readers
// do, and counts the nodes (aliases not followed); ok is false if yaml.v3
// refuses data.
func v3Nodes(data []byte) (n int, ok bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if err != nil {
			if err.Error() == "EOF" {
				return n, true
			}
			return 0, false
		}
		stack := []*yaml.Node{&doc}
		for len(stack) > 0 {
			top := stack[len(stack)-1]
			stack = append(stack[:len(stack)-1], top.Content...)
			n++
		}
	}
}

// checkBound fails if the bound is below the nodes yaml.v3 builds.
func checkBound(t *testing.T, name string, data []byte) (real, bound int, ok bool) {
	t.Helper()
	real, ok = v3Nodes(data)
	if !ok {
		return 0, 0, false
	}
	bound = nodeBound(data)
	if bound < real {
		t.Errorf("%s: bound %d < %d nodes yaml.v3 builds:\n%q", name, bound, real, data)
	}
	return real, bound, true
}

// yamlPieces are the fragments random documents are made of: every
// indicator, quote, escape, comment, line break and property yaml.v3's
// scanner knows, in and out of place.
var yamlPieces = []string{
	"a", "b", "k: ", "k:", "key: v", "- ", "-", "? ", "?", ": ", ":", "[", "]", "{", "}", ", ", ",",
	"'x'", "'it''s'", "'", "\"y\"", "\"a\\\"b\"", "\"", "\\", "\\\n", "&a ", "&b", "*a", "*b ", "!t ", "!!str ",
	"!<x> ", "!", "|", ">", "|2", ">-", "|+", "#c", " #c", "\n", "\n", "\n", "  ", "    ", " ", "\t",
	"---\n", "--- ", "...\n", "\r\n", "\r", "\u2028", "\u0085", "%YAML 1.1\n", "x:y", "\ufeff", "a b",
	"-x", ":x", "?x", "1", "null", "~", "<<: ", "@", "`", "%",
	"[a: b]", "[? a]", "[: b]", "[a:]", "{? }", "{a}", "{: b}", "[a, b: c]", "- - ", "\n  ", "\n- ",
}

// grammarDoc writes a random, mostly valid YAML document: block and flow
// collections nested in each other, explicit and implicit keys, empty
// keys, values and entries, properties, aliases, every scalar style.
func grammarDoc(r *rand.Rand) []byte {
	var sb strings.Builder
	g := &grammar{r: r, sb: &sb}
	if r.Intn(4) == 0 {
		sb.WriteString("--- ")
	}
	g.block(0, 0)
	if r.Intn(4) == 0 {
		sb.WriteString("---\n")
		g.block(0, 0)
	}
	return []byte(sb.String())
}

type grammar struct {
	r  *rand.Rand
	sb *strings.Builder
}

func (g *grammar) pick(s ...string) string { return s[g.r.Intn(len(s))] }

func (g *grammar) props() {
	if g.r.Intn(5) == 0 {
		g.sb.WriteString(g.pick("&a ", "!t ", "&b !!str ", "!Ref "))
	}
}

func (g *grammar) scalar(flow bool) {
	g.props()
	switch g.r.Intn(8) {
	case 0:
		g.sb.WriteString(g.pick("'it''s'", "'a: b'", "'x\n  y'"))
	case 1:
		g.sb.WriteString(g.pick(`"a\"b"`, `"x, y"`, "\"l1\n  l2\""))
	case 2:
		g.sb.WriteString("*a")
	case 3:
		if !flow {
			g.sb.WriteString(g.pick("a b", "x:y", "http://h/p#f", "multi\n   line"))
			return
		}
		fallthrough
	default:
		g.sb.WriteString(g.pick("a", "b", "1", "~", "-x", "a#b"))
	}
}

func (g *grammar) flowValue(depth int) {
	if depth > 3 || g.r.Intn(3) > 0 {
		g.scalar(true)
		return
	}
	g.props()
	open, close := "[", "]"
	if g.r.Intn(2) == 0 {
		open, close = "{", "}"
	}
	g.sb.WriteString(open)
	for i := range g.r.Intn(4) {
		if i > 0 {
			g.sb.WriteString(g.pick(", ", ",", ",\n ", " ,"))
		}
		switch g.r.Intn(6) {
		case 0:
			g.flowValue(depth + 1)
			g.sb.WriteString(": ")
			g.flowValue(depth + 1)
		case 1:
			g.sb.WriteString(g.pick(": ", "? ", "?"))
			g.flowValue(depth + 1)
		case 2:
			g.flowValue(depth + 1)
			g.sb.WriteString(g.pick(":", ": ", " :"))
		default:
			g.flowValue(depth + 1)
		}
	}
	if g.r.Intn(6) == 0 {
		g.sb.WriteString(",")
	}
	g.sb.WriteString(close)
}

// value writes what follows a key's ':' or a '-' at indentation ind.
func (g *grammar) value(depth, ind int) {
	switch g.r.Intn(7) {
	case 0:
		g.sb.WriteString("\n") // empty
	case 1:
		if depth < 4 {
			g.props()
			g.sb.WriteString("\n")
			g.block(depth+1, ind+1+g.r.Intn(3))
			return
		}
		fallthrough
	case 2:
		g.props()
		g.sb.WriteString(g.pick("|", ">", "|-", "|2", ">+") + g.pick("\n", " # c\n"))
		pad := strings.Repeat(" ", ind+2)
		for range g.r.Intn(3) {
			g.sb.WriteString(pad + g.pick("text", "it's [x", "  more: y", "") + "\n")
		}
	case 3:
		g.flowValue(0)
		g.sb.WriteString("\n")
	default:
		g.scalar(false)
		g.sb.WriteString(g.pick("\n", " # c\n"))
	}
}

// block writes a block mapping or sequence at indentation ind.
func (g *grammar) block(depth, ind int) {
	pad := strings.Repeat(" ", ind)
	seq := g.r.Intn(2) == 0
	for range 1 + g.r.Intn(3) {
		g.sb.WriteString(pad)
		if seq {
			g.sb.WriteString(g.pick("- ", "-"))
			g.value(depth, ind)
			continue
		}
		switch g.r.Intn(6) {
		case 0:
			g.sb.WriteString("? ")
			g.scalar(false)
			g.sb.WriteString("\n" + pad + ":")
		case 1:
			g.sb.WriteString(":")
		case 2:
			g.flowValue(2)
			g.sb.WriteString(":")
		default:
			g.scalar(false)
			g.sb.WriteString(":")
		}
		if g.r.Intn(5) == 0 { // an indentless sequence
			g.sb.WriteString("\n")
			for range 1 + g.r.Intn(2) {
				g.sb.WriteString(pad + "- ")
				g.value(depth+1, ind)
			}
			continue
		}
		g.sb.WriteString(" ")
		g.value(depth, ind)
	}
}

func randomDoc(r *rand.Rand) []byte {
	var sb strings.Builder
	for range 1 + r.Intn(40) {
		sb.WriteString(yamlPieces[r.Intn(len(yamlPieces))])
	}
	return []byte(sb.String())
}

// randomValue builds a random value for yaml.v3 to write, in every style.
func randomValue(r *rand.Rand, depth int) *yaml.Node {
	styles := []yaml.Style{0, yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle, yaml.LiteralStyle, yaml.FoldedStyle, yaml.FlowStyle}
	strs := []string{"a", "it's", "x: y", "- z", "[a, b]", "#c", "multi\nline\n", "  lead", "trail  ", "", "{", "\"q\"", "a\u2028b", "tab\tx", "ünï", "---", "..."}
	switch k := r.Intn(5); {
	case depth > 4 || k < 2:
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strs[r.Intn(len(strs))], Style: styles[r.Intn(5)]}
	case k == 2:
		n := &yaml.Node{Kind: yaml.SequenceNode, Style: styles[r.Intn(len(styles))] & yaml.FlowStyle}
		for range r.Intn(4) {
			n.Content = append(n.Content, randomValue(r, depth+1))
		}
		return n
	default:
		n := &yaml.Node{Kind: yaml.MappingNode, Style: styles[r.Intn(len(styles))] & yaml.FlowStyle}
		for range r.Intn(4) {
			n.Content = append(n.Content, randomValue(r, depth+1), randomValue(r, depth+1))
		}
		return n
	}
}

// The bound is never below the nodes yaml.v3 builds, for random token
// soups (every indicator in and out of place) and for random trees written
// by yaml.v3 in every style.
func TestNodeBoundRandom(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	parsed := 0
	iters := 200000
	if testing.Short() {
		iters = 20000
	}
	for i := 0; i < iters; i++ {
		if _, _, ok := checkBound(t, "soup", randomDoc(r)); ok {
			parsed++
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d of %d random documents parse", parsed, iters)
	if parsed < iters/20 {
		t.Fatalf("only %d of %d random documents parse: the test checks too little", parsed, iters)
	}
	parsed = 0
	for i := 0; i < iters; i++ {
		doc := grammarDoc(r)
		if _, _, ok := checkBound(t, "grammar", doc); ok {
			parsed++
			if parsed%20 == 0 { // the same document in UTF-16, as yaml.v3 reads it
				if _, _, ok := checkBound(t, "grammar UTF-16", utf16Doc(doc, parsed%40 == 0)); !ok {
					t.Fatalf("yaml.v3 does not read the UTF-16 form of %q", doc)
				}
			}
		}
		if t.Failed() {
			return
		}
	}
	t.Logf("%d of %d grammar documents parse", parsed, iters)
	for i := 0; i < iters/10; i++ {
		out, err := yaml.Marshal(randomValue(r, 0))
		if err != nil {
			continue
		}
		real, bound, ok := checkBound(t, "tree", out)
		if !ok {
			t.Fatalf("yaml.v3 does not read back what it wrote:\n%s", out)
		}
		_ = real
		_ = bound
		if t.Failed() {
			return
		}
	}
}

func FuzzNodeBound(f *testing.F) {
	for _, s := range []string{"a: b", "[a, b]", "{a, b: c}", "- a\n- b", "k: |\n  x\n", "? a\n: b", "&a x: *a"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkBound(t, "fuzz", data)
	})
}

// Realistic documents: the peer corpora (templates, modules, blueprints,
// CDK output, the 1,665 resource schemas) and the repository's own YAML
// and JSON stay far below MaxNodes, and the bound over-counts them little.
func TestNodeBoundCorpus(t *testing.T) {
	// The repository, and the peer corpora beside it (../shared/corpus).
	roots := []string{filepath.Join("..", ".."), filepath.Join("..", "..", "..", "shared", "corpus")}
	files, worst := 0, 0.0
	maxBound := 0
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
				if d != nil && d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			switch strings.ToLower(filepath.Ext(p)) {
			case ".yaml", ".yml", ".json", ".template":
			default:
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil || len(data) > 8<<20 {
				return nil
			}
			real, bound, ok := checkBound(t, p, data)
			if !ok {
				return nil
			}
			files++
			maxBound = max(maxBound, bound)
			if real > 1000 {
				worst = max(worst, float64(bound)/float64(real))
			}
			return nil
		})
	}
	t.Logf("%d files; largest bound %d; worst ratio bound/nodes %.3f (files over 1,000 nodes)", files, maxBound, worst)
	if worst > 1.5 {
		t.Errorf("the bound over-counts realistic files by %.2fx", worst)
	}
}

func TestCheckNodes(t *testing.T) {
	dense := []byte("[" + strings.Repeat("x,", 300) + "x]")
	le := checkNodes(dense, 100)
	if le == nil {
		t.Fatal("no error over the limit")
	}
	err := error(le)
	// The third node is the first x (document, sequence, x): the limit
	// of 100 passes at the 99th x, column 2+2*98.
	if le.Pos != (Pos{1, 2 + 2*98}) || le.Limit != 100 || err.Error() != "line 1, column 198: more than 100 YAML nodes (keys, values, list items, lists and mappings) by here; split the file or shorten its lists" {
		t.Errorf("got %v at %+v", err, le.Pos)
	}
	// 303 nodes: the document, the list and 301 items.
	if le := checkNodes(dense, 303); le != nil {
		t.Errorf("got %v at the limit", le)
	}
	if le := checkNodes(dense, 302); le == nil || le.Pos != (Pos{1, 602}) {
		t.Errorf("one node over the limit: got %v", le)
	}
	if le := CheckNodes(dense); le != nil {
		t.Errorf("got %v under MaxNodes", le)
	}
}

// A byte-order mark after the start makes yaml.v3's tokens unpredictable
// (it skips a line's first character while its buffer starts with one):
// the bound then counts three nodes a character.
func TestNodeBoundByteOrderMark(t *testing.T) {
	for _, s := range []string{"a\ufeff: [b]", "\ufeffa: b\n\ufeff- c", "ab\ufeff"} {
		if got, want := nodeBound([]byte(s)), 2+3*len([]rune(s)); got != want {
			t.Errorf("%q: bound %d, want %d", s, got, want)
		}
	}
	if got := nodeBound([]byte("\ufeffa: [b]")); got != 5 {
		t.Errorf("a leading mark: bound %d, want 5", got)
	}
}

// utf16Doc encodes doc in UTF-16 with a byte-order mark.
func utf16Doc(doc []byte, bigEndian bool) []byte {
	out := []byte{0xFF, 0xFE}
	if bigEndian {
		out = []byte{0xFE, 0xFF}
	}
	for _, u := range utf16.Encode([]rune(string(doc))) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}
