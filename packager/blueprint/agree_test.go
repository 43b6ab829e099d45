package blueprint

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// gen writes random blueprints from the parts the evaluator meets: variables
// with and without defaults (some secret, some JSON), values built on each
// other, data sources, resources with spec fields, conditions and each, and
// exports, holding random calls of every core function on literals, known
// references and deploy-time references, alone or interpolated.
type gen struct {
	r          *rand.Rand
	vars       []string
	values     []string
	valueTypes []string
	res        []string
}

var genStrings = []string{"abc", "", "eu-west-1,eu-west-2", `{\"host\": \"db\", \"port\": 5432}`, `[1, 2, 3]`, "not json", "café", "a-b-c", " x "}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) literal() string {
	switch g.r.IntN(5) {
	case 0:
		return `"` + g.pick(genStrings) + `"`
	case 1:
		return fmt.Sprint(g.r.IntN(12) - 2)
	case 2:
		return fmt.Sprintf("%d.5", g.r.IntN(4))
	case 3:
		return fmt.Sprint(g.r.IntN(2) == 0)
	}
	return `"/host"`
}

// expr writes an expression; self is the resource or value being defined
// (not referenced, to keep most blueprints free of cycles).
func (g *gen) expr(depth int, values []string, self string) string {
	n := g.r.IntN(10)
	if depth <= 0 && n >= 6 {
		n = g.r.IntN(6)
	}
	switch n {
	case 0, 1:
		return g.literal()
	case 2:
		if len(g.vars) > 0 {
			return "variables." + g.pick(g.vars)
		}
		return g.literal()
	case 3:
		if len(values) > 0 {
			v := "values." + g.pick(values)
			if g.r.IntN(4) == 0 {
				v += fmt.Sprintf("[%d]", g.r.IntN(3))
			}
			return v
		}
		return g.literal()
	case 4:
		return g.pick([]string{"datasources.net.vpc", "datasources.net.subnets", `datetime("tag")`, "cwd()"})
	case 5:
		for _, r := range g.res {
			if r != self && g.r.IntN(2) == 0 {
				return "resources." + r + ".state.arn"
			}
		}
		return g.literal()
	}
	names := CoreFunctions()
	name := names[g.r.IntN(len(names))]
	if name == "link" || name == "object" {
		name = "list"
	}
	f, _ := LookupFunction(name)
	nargs := len(f.Params)
	if f.Variadic != nil {
		nargs = g.r.IntN(3) + f.MinArgs
	}
	if g.r.IntN(8) == 0 {
		nargs += g.r.IntN(3) - 1 // now and then a wrong count
	}
	args := make([]string, max(nargs, 0))
	for i := range args {
		p := Param{Type: TAny}
		if f.Variadic != nil {
			p = *f.Variadic
		} else if i < len(f.Params) {
			p = f.Params[i]
		}
		switch {
		case p.Type == TFunc:
			args[i] = g.pick([]string{"to_upper", "trim", `split_g(",")`, `getattr("host")`, "getelem(0)", `fromjson_g("host")`, `has_prefix_g("a")`, "compose(to_lower, trim)"})
		case p.Choices != nil:
			args[i] = `"` + g.pick(p.Choices) + `"`
		default:
			args[i] = g.expr(depth-1, values, self)
		}
	}
	call := name + "(" + strings.Join(args, ", ") + ")"
	if g.r.IntN(6) == 0 {
		call += g.pick([]string{"[0]", ".host", "[1]"})
	}
	return call
}

// typed writes an expression of type t (TString, TInt, TBool, TArray of
// strings, TObject), now and then a wild one (which may well fail).
func (g *gen) typed(t Type, depth int, self string) string {
	if g.r.IntN(14) == 0 {
		return g.expr(2, g.values, self)
	}
	leaf := depth <= 0 || g.r.IntN(3) == 0
	var opts []string
	switch t {
	case TString:
		opts = []string{`"abc"`, `"a-b-c"`, `"café"`, "variables.s", "datasources.net.vpc", `datetime("tag")`}
		if r := g.other(self); r != "" {
			opts = append(opts, "resources."+r+".state.arn")
		}
		opts = append(opts, g.valuesOf("string")...)
		if !leaf {
			s := g.typed(TString, depth-1, self)
			a := g.typed(TArray, depth-1, self)
			opts = append(opts, "to_upper("+s+")", "trim("+s+")", `replace(`+s+`, "a", "b")`, `join(`+a+`, ",")`,
				`trimprefix(`+s+`, "a")`, `fromjson(variables.j, "host")`, `substr(`+s+`, 0)`, "normalize("+s+")",
				a+"[0]", `jsondecode(variables.j).host`)
		}
	case TInt:
		opts = []string{"0", "3", "variables.n", `fromjson(variables.j, "/port")`}
		if !leaf {
			opts = append(opts, "len("+g.typed(TString, depth-1, self)+")", "len("+g.typed(TArray, depth-1, self)+")", `index(`+g.typed(TString, depth-1, self)+`, "b")`)
		}
	case TBool:
		opts = []string{"true", "false", "variables.b"}
		if !leaf {
			s := g.typed(TString, depth-1, self)
			opts = append(opts, `eq(`+s+`, "abc")`, `has_prefix(`+s+`, "a")`, `contains(`+s+`, "b")`, "not("+g.typed(TBool, depth-1, self)+")",
				"and("+g.typed(TBool, depth-1, self)+", "+g.typed(TBool, depth-1, self)+")", "gt("+g.typed(TInt, depth-1, self)+", 1)")
		}
	case TArray:
		opts = []string{`split("x,y", ",")`, `list("a", "b")`, "datasources.net.subnets"}
		if r := g.other(self); r != "" {
			opts = append(opts, "resources."+r+".spec.list") // written as a list
		}
		opts = append(opts, g.valuesOf("array")...)
		if !leaf {
			a := g.typed(TArray, depth-1, self)
			opts = append(opts, "map("+a+", to_upper)", `filter(`+a+`, has_prefix_g("a"))`, `flatmap(`+a+`, split_g("-"))`,
				"keys("+g.typed(TObject, depth-1, self)+")", `split(`+g.typed(TString, depth-1, self)+`, ",")`, "list("+g.typed(TString, depth-1, self)+")")
		}
	case TObject:
		opts = []string{`object(host = "db", port = 1)`, "jsondecode(variables.j)"}
		opts = append(opts, g.valuesOf("object")...)
		if !leaf {
			opts = append(opts, "object(host = "+g.typed(TString, depth-1, self)+", n = "+g.typed(TInt, depth-1, self)+")")
		}
	}
	return g.pick(opts)
}

// other names a resource other than self, or "".
func (g *gen) other(self string) string {
	for _, r := range g.res {
		if r != self && g.r.IntN(2) == 0 {
			return r
		}
	}
	return ""
}

// valuesOf lists the references to defined values of a type.
func (g *gen) valuesOf(typ string) []string {
	var out []string
	for i, v := range g.values {
		if g.valueTypes[i] == typ {
			out = append(out, "values."+v)
		}
	}
	return out
}

// field writes a YAML single-quoted scalar: one substitution, or text
// around one or two.
func (g *gen) field(t Type, self string) string {
	s := "${" + g.typed(t, 3, self) + "}"
	if t == TString && g.r.IntN(3) == 0 {
		s = "pre-${" + g.typed(TString, 2, self) + "}-${" + g.typed(TInt, 2, self) + "}"
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

func (g *gen) blueprint() string {
	var b strings.Builder
	b.WriteString("version: 2023-04-20\nvariables:\n")
	secret := ""
	if g.r.IntN(5) == 0 {
		secret = "    secret: true\n"
	}
	for _, v := range []struct{ name, typ, def string }{
		{"s", "string", g.pick([]string{"abc", "", "a-b", "café"})},
		{"j", "string", g.pick([]string{`{"host": "db", "port": 5432}`, `{"host": "db", "port": 5432}`, `{"port": 1}`, "not json"})},
		{"n", "integer", fmt.Sprint(g.r.IntN(4))},
		{"b", "boolean", fmt.Sprint(g.r.IntN(2) == 0)},
	} {
		g.vars = append(g.vars, v.name)
		fmt.Fprintf(&b, "  %s:\n    type: %s\n", v.name, v.typ)
		if v.name == "j" {
			b.WriteString(secret)
		}
		if g.r.IntN(5) != 0 {
			def := v.def
			if v.typ == "string" {
				def = "'" + def + "'"
			}
			fmt.Fprintf(&b, "    default: %s\n", def)
		}
	}
	b.WriteString("datasources:\n  net:\n    type: aws/vpc\n    filter: {field: tags, operator: has key, search: app}\n    exports: {vpc: {type: string}, subnets: {type: array}}\n")
	b.WriteString("values:\n")
	types := map[string]Type{"string": TString, "array": TArray, "object": TObject, "integer": TInt, "boolean": TBool}
	for i := range 1 + g.r.IntN(4) {
		name := fmt.Sprintf("w%d", i)
		typ := g.pick([]string{"string", "array", "object", "integer", "boolean"})
		fmt.Fprintf(&b, "  %s:\n    type: %s\n    value: %s\n", name, typ, g.field(types[typ], ""))
		g.values = append(g.values, name)
		g.valueTypes = append(g.valueTypes, typ)
	}
	for i := range 1 + g.r.IntN(3) {
		g.res = append(g.res, fmt.Sprintf("r%d", i))
	}
	b.WriteString("resources:\n")
	for _, r := range g.res {
		fmt.Fprintf(&b, "  %s:\n    type: aws/sns/topic\n", r)
		if g.r.IntN(4) == 0 {
			fmt.Fprintf(&b, "    condition: %s\n", g.field(TBool, r))
		}
		each := g.r.IntN(4) == 0
		if each {
			fmt.Fprintf(&b, "    each: %s\n", g.field(TArray, r))
		}
		b.WriteString("    spec:\n      literal: 120\n      list: [a, b]\n")
		for j := range 1 + g.r.IntN(4) {
			fmt.Fprintf(&b, "      f%d: %s\n", j, g.field(g.pickType(), r))
		}
		if each {
			b.WriteString("      item: ${elem}\n      at: x-${i}\n")
		}
	}
	b.WriteString("exports:\n")
	for i := range g.r.IntN(3) {
		r := g.pick(g.res)
		w := g.r.IntN(len(g.values))
		choices := [][2]string{
			{"resources." + r + ".spec.literal", "integer"}, {"resources." + r + ".spec.list", "array"},
			{"resources." + r + ".spec.f0", "string"}, {"values." + g.values[w], g.valueTypes[w]},
			{"values." + g.values[w] + "[0]", "string"}, {"variables.s", "string"}, {"variables.n", "integer"},
		}
		c := choices[g.r.IntN(len(choices))]
		if g.r.IntN(4) == 0 {
			c[1] = g.pick(exportTypes)
		}
		fmt.Fprintf(&b, "  e%d:\n    type: %s\n    field: %s\n", i, c[1], c[0])
	}
	return b.String()
}

// options passes, now and then, values for some variables, as --var and a
// droplet's variables property do (strings, read as the variable's type;
// now and then one of the wrong type).
func (g *gen) options() Options {
	vars := map[string]any{}
	for _, v := range []struct {
		name    string
		choices []any
	}{
		{"s", []any{"xyz", "", "café"}},
		{"j", []any{`{"host": "cli", "port": 1}`, `{"port": 2}`, "[]", "nope"}},
		{"n", []any{"7", 0, "seven"}},
		{"b", []any{"true", false}},
	} {
		if g.r.IntN(3) == 0 {
			vars[v.name] = v.choices[g.r.IntN(len(v.choices))]
		}
	}
	return Options{Variables: vars}
}

func (g *gen) pickType() Type {
	return []Type{TString, TString, TInt, TBool, TArray, TObject}[g.r.IntN(6)]
}

// checkAgreement is the property: validation and packaging give one
// verdict (the same errors, when there are some), every error has a class,
// and what packages validates again and packages to itself.
func checkAgreement(t *testing.T, src string, opts Options) {
	t.Helper()
	path := writeBlueprint(t, src)
	_, err := Load(path, opts)
	p, perr := Package(path, opts)
	if err != nil {
		checkClasses(t, err)
		if perr == nil || perr.Error() != err.Error() {
			t.Fatalf("validate and build disagree:\nvalidate: %v\nbuild: %v\nvariables: %v\n%s", err, perr, opts.Variables, src)
		}
		return
	}
	if perr != nil {
		t.Fatalf("validates but does not build: %v\nvariables: %v\n%s", perr, opts.Variables, src)
	}
	again := writePackaged(t, p)
	if _, err := Load(again, opts); err != nil {
		t.Fatalf("packaged form does not validate: %v\n%s\npackaged:\n%s", err, src, p.Files[p.Main])
	}
	p2, err := Package(again, opts)
	if err != nil {
		t.Fatalf("packaged form does not build: %v", err)
	}
	if string(p2.Files[p2.Main]) != string(p.Files[p.Main]) {
		t.Fatalf("packaging is not idempotent:\nonce:\n%s\ntwice:\n%s", p.Files[p.Main], p2.Files[p2.Main])
	}
}

// TestValidateBuildAgree checks the property on generated blueprints.
func TestValidateBuildAgree(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 50
	}
	valid := 0
	for seed := range uint64(n) {
		g := &gen{r: rand.New(rand.NewPCG(seed, 15))}
		src, opts := g.blueprint(), g.options()
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkAgreement(t, src, opts) })
		if _, err := Load(writeBlueprint(t, src), opts); err == nil {
			valid++
		}
	}
	// The generator must reach both verdicts often, or the property is
	// checked on one side only.
	t.Logf("%d of %d generated blueprints valid", valid, n)
	if valid < n/10 || valid > n*9/10 {
		t.Errorf("%d of %d generated blueprints valid; adjust the generator", valid, n)
	}
}

// FuzzValidateBuildAgree drives the generator from fuzzed seeds.
func FuzzValidateBuildAgree(f *testing.F) {
	for _, s := range []uint64{0, 1, 15, 1 << 40} {
		f.Add(binary.LittleEndian.AppendUint64(nil, s))
	}
	f.Fuzz(func(t *testing.T, seed []byte) {
		var a, b uint64
		if len(seed) >= 8 {
			a = binary.LittleEndian.Uint64(seed)
		}
		if len(seed) >= 16 {
			b = binary.LittleEndian.Uint64(seed[8:])
		}
		g := &gen{r: rand.New(rand.NewPCG(a, b))}
		checkAgreement(t, g.blueprint(), g.options())
	})
}
