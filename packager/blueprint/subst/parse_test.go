package subst

import (
	"errors"
	"strings"
	"testing"
)

func TestParseValid(t *testing.T) {
	tests := []struct{ in, want string }{
		{`variables.env`, `variables.env`},
		{`variables["my.var"]`, `variables["my.var"]`},
		{`values.cfg.buckets[0].name`, `values.cfg.buckets[0].name`},
		{`values["cfg"]`, `values.cfg`},
		{`resources.cache.state.hosts[].endpoint`, `resources.cache.state.hosts[].endpoint`},
		{`cache.spec.size`, `cache.spec.size`},
		{`resources.fn.metadata.annotations["a.b.c"]`, `resources.fn.metadata.annotations["a.b.c"]`},
		{`datasources.network.subnets[]`, `datasources.network.subnets[]`},
		{`datasources.network.vpc`, `datasources.network.vpc`},
		{`children.core.topic.arn`, `children.core.topic.arn`},
		{`children.core.list[2]`, `children.core.list[2]`},
		{`elem`, `elem`},
		{`elem["config"].attrs[0]`, `elem["config"].attrs[0]`},
		{`i`, `i`},
		{`true`, `true`},
		{`false`, `false`},
		{`-12`, `-12`},
		{`3.25`, `3.25`},
		{`"a \"quoted\" }string"`, `"a \"quoted\" }string"`},
		{`len(values.x)`, `len(values.x)`},
		{"list(\n  resources.a.state.name,\n  resources.b.state.name\n)", `list(resources.a.state.name, resources.b.state.name)`},
		{`object(id = "x", label=variables.l)`, `object(id = "x", label = variables.l)`},
		{`map(values.hosts, trimprefix_g("http://"))[0]`, `map(values.hosts, trimprefix_g("http://"))[0]`},
		{`get_cfg(resources.vpc.state).info["host"]`, `get_cfg(resources.vpc.state).info["host"]`},
		{`cwd()`, `cwd()`},
		{`compose(to_upper, getattr("id"))`, `compose(to_upper, getattr("id"))`},
		{"  len( values.x ,\n\t1 )  ", `len(values.x, 1)`},
		{`object( a = 1 )`, `object(a = 1)`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			n, err := Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got := n.String(); got != tt.want {
				t.Fatalf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseNodeKinds(t *testing.T) {
	n, _ := Parse(`cache.spec.x`)
	if r, ok := n.(*Resource); !ok || !r.Bare || r.Name != "cache" {
		t.Fatalf("bare name: got %#v", n)
	}
	n, _ = Parse(`object(a = 1)`)
	c := n.(*Call)
	if c.Args[0].Name != "a" || c.Args[0].Value.(*Literal).Int != 1 {
		t.Fatalf("named arg: got %#v", c.Args[0])
	}
	n, _ = Parse(`"x\"y"`)
	if l := n.(*Literal); l.Str != `x"y` {
		t.Fatalf("escaped quote: got %q", l.Str)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in      string
		off     int
		message string
	}{
		{`variables.a.b`, 11, "can not have nested fields"},
		{`variables`, 9, `expected ".name"`},
		{`datasources.net`, 15, `expected ".name"`},
		{`datasources.net.a.b`, 17, "at most one index"},
		{`datasources.net.a[0][1]`, 20, "at most one index"},
		{`children.core`, 13, "needs a field"},
		{`values.x[-1]`, 9, "not a natural number"},
		{`values.x[a]`, 9, "expected an index"},
		{`values.x["a b"]`, 9, "name in quotes"},
		{`values.x[""]`, 9, "empty name"},
		{`values.x[0`, 8, `expected "]"`},
		{`len(values.x`, 12, `expected "," or ")"`},
		{`len(values.x,)`, 13, "expected a reference"},
		{`"abc`, 0, "unterminated string"},
		{`12ab`, 0, "malformed number"},
		{`1.`, 0, "decimal point"},
		{`-`, 0, "digits"},
		{`1 2`, 2, "unexpected number"},
		{`$x`, 0, "expected a reference"},
		{``, 0, "expected a reference"},
		{`i[0]`, 1, "unexpected"},
		{`99999999999999999999`, 0, "out of range"},
		{`a.`, 2, "expected a name"},
		{`values .x`, 7, "no whitespace"},
		{`values. x`, 8, "no whitespace"},
		{`values.x [0]`, 9, "no whitespace"},
		{`values.x[ 0]`, 10, "no whitespace"},
		{`values.x[0 ]`, 11, "no whitespace"},
		{`datasources.a .b`, 14, "no whitespace"},
		{`len (values.x)`, 4, "between the function name len"},
		{`len(values.x) [0]`, 14, "no whitespace"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Parse(tt.in)
			var se *SyntaxError
			if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse(%q) = %v, want a SyntaxError", tt.in, err)
			}
			if se.Offset != tt.off || !strings.Contains(se.Msg, tt.message) {
				t.Fatalf("Parse(%q) = offset %d %q, want offset %d containing %q", tt.in, se.Offset, se.Msg, tt.off, tt.message)
			}
		})
	}
}

func TestParseDepthLimit(t *testing.T) {
	in := strings.Repeat("f(", MaxDepth+1) + strings.Repeat(")", MaxDepth+1)
	if _, err := Parse(in); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Fatalf("got %v, want a nesting error", err)
	}
	in = strings.Repeat("f(", MaxDepth) + strings.Repeat(")", MaxDepth)
	if _, err := Parse(in); err != nil {
		t.Fatalf("depth %d: %v", MaxDepth, err)
	}
}

func TestParseString(t *testing.T) {
	s, err := ParseString(`https://${resources.c.state.host}:3000/${replace(variables.p, "}", "")}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Parts) != 4 || s.Parts[0].Text != "https://" || s.Parts[2].Text != ":3000/" {
		t.Fatalf("parts = %#v", s.Parts)
	}
	if s.Parts[1].Offset != 8 {
		t.Fatalf("offset = %d, want 8", s.Parts[1].Offset)
	}
	if s.Single() != nil || !s.HasSubs() {
		t.Fatal("Single/HasSubs wrong")
	}
	one, _ := ParseString("${ values.x }")
	if one.Single() == nil {
		t.Fatal("Single() = nil for a sole substitution")
	}
	plain, _ := ParseString("no subs here $ { }")
	if plain.HasSubs() || plain.String() != "no subs here $ { }" {
		t.Fatal("plain text changed")
	}
	for in, msg := range map[string]string{
		"a ${values.x":     "unterminated substitution",
		"${}":              "empty substitution",
		"${values.x y}":    `expected "}"`,
		"x ${len(\"a)}":    "unterminated string",
		"${variables.a.b}": "nested fields",
	} {
		if _, err := ParseString(in); err == nil || !strings.Contains(err.Error(), msg) || !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseString(%q) = %v, want %q", in, err, msg)
		}
	}
}
