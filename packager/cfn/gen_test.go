package cfn

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// The generator below writes random module templates from the design's
// features: nested modules (three deep, files shared between entries),
// Properties, parameter Defaults of every shape, ForEach on modules and
// resources over lists, comma-separated strings, CommaDelimitedList
// parameters and maps (inline, Default, Property), Fn::ForEach in Modules
// with &{Id}, keys with dashes and dots, Fn::Flatten feeding ForEach,
// $Identifier, $Index and ${Value.Field}, Name[i] / Name[key] / Name[*],
// conditions known at packaging time and not (and one that comes down to
// another), Overrides at every level (Ref, GetAtt, Sub, DependsOn, and a
// parameter of the overridden module),
// Constants, Mappings and Fn::FindInMap, Fn::Select / Fn::Join of list
// parameters, Fn::Merge, Fn::Invoke, module Outputs in GetAtt and Sub. It
// also predicts how many resources the packaged template has.

// feKind is how a ForEach collection is written.
type feKind int

const (
	feNone      feKind = iota
	feList             // [a, b]
	feComma            // "a,b"
	feMap              // {key: {Size: n}}
	feMapParam         // !Ref Sizes (a map parameter's Default)
	feListParam        // !Ref Zones (a CommaDelimitedList parameter)
	feTopList          // !Ref List (the top template's parameter Default)
	feFlatten          // Fn::Flatten to objects with an Identifier and a Size
	nFeKinds
)

type feSpec struct {
	kind feKind
	fn   bool     // written as Fn::ForEach::Name (modules only)
	keys []string // the instances' identifiers
}

func (f feSpec) n() int {
	if f.kind == feNone {
		return 1
	}
	return len(f.keys)
}

type gres struct {
	name    string
	fe      feSpec
	flagged bool // Condition: IsOn (true when the module's Flag is "on")
}

type gent struct {
	name       string
	mod        *gmod
	fe         feSpec
	flag       string // "on", "off" or "" (the Default, off)
	regionCond bool   // Condition: InEast, unknown at packaging time
}

type gmod struct {
	file  string
	depth int
	res   []gres
	ents  []gent
}

// The collections the module parameters' Defaults and the top template hold.
var (
	mapParamKeys  = []string{"small", "large"}
	listParamKeys = []string{"a", "b"}
	topListKeys   = []string{"x", "y", "z"}
)

type generator struct {
	r     *rand.Rand
	files map[string]string
	byDep [][]*gmod
	top   *gmod
}

func generate(seed uint64) *generator {
	g := &generator{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), files: map[string]string{}}
	const maxDepth = 3
	g.byDep = make([][]*gmod, maxDepth+1)
	for d := maxDepth; d >= 1; d-- {
		for i := 0; i < 1+g.r.IntN(2); i++ {
			m := &gmod{file: fmt.Sprintf("m%d%c.yaml", d, 'a'+i), depth: d}
			g.fill(m)
			g.byDep[d] = append(g.byDep[d], m)
			g.files[m.file] = g.module(m)
		}
	}
	g.top = &gmod{file: "template.yaml"}
	g.fill(g.top)
	if len(g.top.ents) == 0 {
		g.top.ents = append(g.top.ents, g.entry(g.top, 0))
	}
	g.files["template.yaml"] = g.template(g.top)
	return g
}

func (g *generator) keys(kind feKind, fn bool) []string {
	switch kind {
	case feMapParam:
		return mapParamKeys
	case feListParam:
		return listParamKeys
	case feTopList:
		return topListKeys
	case feFlatten:
		return []string{"app-x", "app-y", "web-x"}
	}
	n := 1 + g.r.IntN(3)
	var out []string
	for i := 0; i < n; i++ {
		switch {
		case g.r.IntN(3) == 0:
			out = append(out, fmt.Sprintf("k.%d", i)) // a dot: Name[k.0].Arn splits after the bracket
		case fn || g.r.IntN(2) == 0:
			out = append(out, fmt.Sprintf("k-%d", i)) // a dash: &{Id} drops it
		default:
			out = append(out, fmt.Sprintf("k%d", i))
		}
	}
	return out
}

func (g *generator) fe(top, module bool) feSpec {
	if g.r.IntN(3) == 0 {
		return feSpec{}
	}
	kinds := []feKind{feList, feComma, feMap, feFlatten}
	if top {
		kinds = append(kinds, feTopList)
	} else {
		kinds = append(kinds, feMapParam, feListParam)
	}
	k := kinds[g.r.IntN(len(kinds))]
	fn := module && k != feComma && g.r.IntN(2) == 0
	return feSpec{kind: k, fn: fn, keys: g.keys(k, fn)}
}

func (g *generator) fill(m *gmod) {
	for i := 0; i < g.r.IntN(3); i++ {
		m.res = append(m.res, gres{name: fmt.Sprintf("R%d", i), fe: g.fe(m.depth == 0, false), flagged: m.depth > 0 && g.r.IntN(3) == 0})
	}
	if m.depth < len(g.byDep)-1 {
		for i := 0; i < g.r.IntN(3); i++ {
			m.ents = append(m.ents, g.entry(m, i))
		}
	}
}

func (g *generator) entry(m *gmod, i int) gent {
	kids := g.byDep[m.depth+1]
	return gent{
		name:       fmt.Sprintf("E%d", i),
		mod:        kids[g.r.IntN(len(kids))],
		fe:         g.fe(m.depth == 0, true),
		flag:       []string{"on", "off", ""}[g.r.IntN(3)],
		regionCond: g.r.IntN(4) == 0,
	}
}

// count predicts the resources module m emits with its Flag.
func count(m *gmod, flag string) int {
	n := 1 // Base
	if len(m.ents) > 0 {
		n++ // Link
	}
	for _, r := range m.res {
		if r.flagged && flag != "on" {
			continue
		}
		n += r.fe.n()
	}
	for _, e := range m.ents {
		n += e.fe.n() * count(e.mod, e.flag)
	}
	return n
}

// collection writes a ForEach collection.
func collection(f feSpec) string {
	switch f.kind {
	case feList:
		return "[" + strings.Join(f.keys, ", ") + "]"
	case feComma:
		return `"` + strings.Join(f.keys, ",") + `"`
	case feMap:
		var b strings.Builder
		b.WriteString("{")
		for i, k := range f.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s: {Size: %d}", k, i+1)
		}
		b.WriteString("}")
		return b.String()
	case feMapParam:
		return "!Ref Sizes"
	case feListParam:
		return "!Ref Zones"
	case feTopList:
		return "!Ref List"
	case feFlatten:
		return "{\"Fn::Flatten\": {Source: [{name: app, envs: [x, y]}, {name: web, envs: [x]}], " +
			"Transform: {Template: {Identifier: \"$item.name-$env\", Size: 5}, Variables: {env: \"$item.envs[*]\"}}}}"
	}
	return ""
}

func hasValue(k feKind) bool { return k == feMap || k == feMapParam || k == feFlatten }

// instance returns the names of entry e's instances in the file that
// writes it, and the name of its group for Name[...] references.
func (e gent) instances() []string {
	if e.fe.kind == feNone {
		return []string{e.name}
	}
	var out []string
	for i, k := range e.fe.keys {
		if e.fe.fn {
			out = append(out, e.name+alnum(k))
		} else {
			out = append(out, fmt.Sprintf("%s%d", e.name, i))
		}
	}
	return out
}

func (e gent) group() string {
	if e.fe.fn {
		return "Loop" + e.name
	}
	return e.name
}

func (g *generator) resources(b *strings.Builder, m *gmod) {
	top := m.depth == 0
	fmt.Fprintf(b, "Resources:\n  Base:\n    Type: AWS::SNS::Topic\n    Properties:\n")
	if top {
		b.WriteString("      TopicName: !Sub \"${Stage}-top\"\n")
	} else {
		b.WriteString("      TopicName: !Sub \"${Const::Prefix}-base\"\n")
		b.WriteString("      Count: !FindInMap [Counts, !Ref Flag, Count]\n")
		b.WriteString("      Region: !If [InEast, east, other]\n")
		b.WriteString("      Second: !Select [1, !Ref Zones]\n")
		b.WriteString("      Joined: !Join [\"-\", !Ref Zones]\n")
		b.WriteString("      Tags: !Merge [{Module: " + strings.TrimSuffix(m.file, ".yaml") + "}, !Ref Tags]\n")
	}
	for _, r := range m.res {
		fmt.Fprintf(b, "  %s:\n    Type: AWS::SQS::Queue\n", r.name)
		if r.fe.kind != feNone {
			fmt.Fprintf(b, "    ForEach: %s\n", collection(r.fe))
		}
		if r.flagged {
			b.WriteString("    Condition: IsOn\n")
		}
		b.WriteString("    DependsOn: Base\n    Properties:\n")
		b.WriteString("      Topic: !Ref Base\n      Arn: !GetAtt Base.TopicArn\n")
		if r.fe.kind != feNone {
			b.WriteString("      Label: !Sub \"q-${Identifier}-$Index\"\n")
			if hasValue(r.fe.kind) {
				b.WriteString("      Size: $Value.Size\n      SizeLong: !GetAtt $Value.Size\n      SizeText: !Sub \"size-${Value.Size}\"\n")
			}
		}
	}
	if len(m.ents) == 0 {
		return
	}
	// Link refers to each entry's outputs in every supported form.
	b.WriteString("  Link:\n    Type: X::Link\n    DependsOn:\n")
	for _, e := range m.ents {
		fmt.Fprintf(b, "      - %s\n", e.instances()[0])
	}
	b.WriteString("    Properties:\n")
	for _, e := range m.ents {
		inst := e.instances()
		if e.fe.kind == feNone {
			fmt.Fprintf(b, "      %sArn: !GetAtt %s.Arn\n      %sText: !Sub \"arn=${%s.Arn}\"\n", e.name, e.name, e.name, e.name)
			fmt.Fprintf(b, "      %sInvoked: !Invoke [%s, {Name: inv}, Label]\n", e.name, e.name)
			continue
		}
		grp := e.group()
		fmt.Fprintf(b, "      %sAll: !GetAtt %s[*].Arn\n", e.name, grp)
		fmt.Fprintf(b, "      %sFirst: !GetAtt %s[0].Arn\n", e.name, grp)
		fmt.Fprintf(b, "      %sByKey: !GetAtt %s[%s].Arn\n", e.name, grp, e.fe.keys[len(e.fe.keys)-1])
		fmt.Fprintf(b, "      %sSub: !Sub \"last=${%s[%s].Arn}\"\n", e.name, grp, e.fe.keys[len(e.fe.keys)-1])
		fmt.Fprintf(b, "      %sDirect: !GetAtt %s.Arn\n", e.name, inst[0])
	}
}

func (g *generator) modules(b *strings.Builder, m *gmod) {
	if len(m.ents) == 0 {
		return
	}
	b.WriteString("Modules:\n")
	for _, e := range m.ents {
		ind := "  "
		ident := "$Identifier"
		if e.fe.fn {
			fmt.Fprintf(b, "  Fn::ForEach::%s:\n    - Item\n    - %s\n    - %s&{Item}:\n", e.group(), collection(e.fe), e.name)
			ind = "        "
			ident = "${Item}"
		} else {
			fmt.Fprintf(b, "  %s:\n", e.name)
			ind = "    "
		}
		fmt.Fprintf(b, "%sSource: %s\n", ind, e.mod.file)
		if e.fe.kind != feNone && !e.fe.fn {
			fmt.Fprintf(b, "%sForEach: %s\n", ind, collection(e.fe))
		}
		if e.regionCond {
			if m.depth == 0 {
				fmt.Fprintf(b, "%sCondition: TopEast\n", ind)
			} else {
				fmt.Fprintf(b, "%sCondition: InEast\n", ind)
			}
		}
		fmt.Fprintf(b, "%sProperties:\n", ind)
		if e.fe.kind != feNone {
			fmt.Fprintf(b, "%s  Name: !Sub \"${Name}-%s-%s\"\n", ind, strings.ToLower(e.name), ident)
			if hasValue(e.fe.kind) {
				fmt.Fprintf(b, "%s  Size: ${Value.Size}\n", ind)
			}
		} else {
			fmt.Fprintf(b, "%s  Name: !Sub \"${Name}-%s\"\n", ind, strings.ToLower(e.name))
		}
		if e.flag != "" {
			fmt.Fprintf(b, "%s  Flag: \"%s\"\n", ind, e.flag)
			fmt.Fprintf(b, "%s  Tags: {Flag: %s}\n", ind, e.flag)
		}
		// Overrides written here name this file's resources.
		fmt.Fprintf(b, "%sOverrides:\n%s  Base:\n%s    DependsOn: [Base]\n%s    Metadata:\n%s      Parent: !Ref Base\n", ind, ind, ind, ind, ind)
		fmt.Fprintf(b, "%s      ParentArn: !GetAtt Base.TopicArn\n%s      ParentText: !Sub \"${Base}-${Base.TopicArn}\"\n", ind, ind)
		// Size is the module's parameter at the top (which has none) and
		// the including module's below (the overriding file's name wins).
		fmt.Fprintf(b, "%s      Size: !Sub \"size-${Size}\"\n", ind)
	}
}

func (g *generator) module(m *gmod) string {
	var b strings.Builder
	b.WriteString(`Parameters:
  Name: {Type: String}
  Size: {Type: Number, Default: 0}
  Flag:
    Type: String
    Default: "off"
  Sizes:
    Type: Object
    Default:
      small: {Size: 1}
      large: {Size: 2}
  Zones:
    Type: CommaDelimitedList
    Default: "a, b"
  Tags:
    Type: Object
    Default: {}
Constants:
  Prefix: "p-${Name}"
Mappings:
  Counts:
    "on": {Count: 3}
    "off": {Count: 1}
Conditions:
  IsOn: !Equals [!Ref Flag, "on"]
  InEast: !Equals [!Ref "AWS::Region", us-east-1]
  OnEast: !And [!Condition IsOn, !Condition InEast]
`)
	g.resources(&b, m)
	g.modules(&b, m)
	b.WriteString("Outputs:\n  Arn:\n    Value: !GetAtt Base.TopicArn\n  Label:\n    Value: !Sub \"n-${Name}\"\n")
	return b.String()
}

func (g *generator) template(m *gmod) string {
	var b strings.Builder
	b.WriteString(`Parameters:
  Stage: {Type: String}
  List:
    Type: CommaDelimitedList
    Default: x,y,z
Conditions:
  TopEast: !Equals [!Ref "AWS::Region", us-east-1]
`)
	// At the top, Name is the deploy-time parameter Stage.
	body := strings.NewReplacer("${Name}", "${Stage}").Replace(func() string {
		var x strings.Builder
		g.resources(&x, m)
		g.modules(&x, m)
		return x.String()
	}())
	b.WriteString(body)
	b.WriteString("Outputs:\n  Top:\n    Value: !GetAtt Base.TopicArn\n")
	for _, e := range m.ents {
		fmt.Fprintf(&b, "  %s:\n    Value: !GetAtt %s.Arn\n", e.name, e.instances()[0])
	}
	return b.String()
}

// predicted is the number of resources the packaged template must have.
func (g *generator) predicted() int {
	n := 1 // Base
	if len(g.top.ents) > 0 {
		n++
	}
	for _, r := range g.top.res {
		n += r.fe.n()
	}
	for _, e := range g.top.ents {
		n += e.fe.n() * count(e.mod, e.flag)
	}
	return n
}

var logicalID = regexp.MustCompile(`^[A-Za-z0-9]{1,255}$`)

// checkInvariants checks the packaged template out against the rules: every
// logical ID valid, nothing left of the design's sections and loops, every
// reference naming something in the template, and the predicted count.
func checkInvariants(t *testing.T, out *yaml.Node, want int) {
	t.Helper()
	for _, sec := range []string{"Modules", "Packages", "Constants"} {
		if mapGet(out, sec) != nil {
			t.Errorf("section %s left in the output", sec)
		}
	}
	// What each kind of reference may name.
	values, resources, conds := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, p := range pseudoParameters {
		values[p] = true
	}
	for _, sec := range []string{"Resources", "Conditions", "Parameters", "Outputs", "Mappings"} {
		for k := range entries(mapGet(out, sec)) {
			if !logicalID.MatchString(k.Value) {
				t.Errorf("%s: invalid logical ID %q", sec, k.Value)
			}
			switch sec {
			case "Resources":
				resources[k.Value], values[k.Value] = true, true
			case "Parameters":
				values[k.Value] = true
			case "Conditions":
				conds[k.Value] = true
			}
		}
	}
	n := 0
	for k, v := range entries(mapGet(out, "Resources")) {
		n++
		for _, attr := range []string{"ForEach", "Overrides", "Source"} {
			if mapGet(v, attr) != nil {
				t.Errorf("resource %s keeps %s", k.Value, attr)
			}
		}
	}
	if n != want {
		t.Errorf("%d resources, the generator predicts %d", n, want)
	}
	var walk func(n *yaml.Node, where string)
	check := func(set map[string]bool, what string) func(name, where string) {
		return func(name, where string) {
			if !set[name] {
				t.Errorf("%s: %q names no %s in the output", where, name, what)
			}
		}
	}
	ref := check(values, "parameter, resource or pseudo parameter")
	res := check(resources, "resource")
	cond := check(conds, "condition")
	walk = func(n *yaml.Node, where string) {
		switch n.Kind {
		case yaml.SequenceNode:
			for _, x := range n.Content {
				walk(x, where)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i].Value, n.Content[i+1]
				if strings.HasPrefix(k, "Fn::ForEach") || k == "ForEach" {
					t.Errorf("%s: %s left in the output", where, k)
				}
				switch {
				case k == "Ref" && isStr(v):
					ref(v.Value, where)
				case k == "Fn::GetAtt" && v.Kind == yaml.SequenceNode && len(v.Content) == 2:
					res(v.Content[0].Value, where)
				case k == "Fn::GetAtt":
					t.Errorf("%s: Fn::GetAtt not [Resource, Attribute]", where)
				case k == "DependsOn" && isStr(v):
					res(v.Value, where)
				case k == "Condition" && isStr(v):
					cond(v.Value, where)
				case k == "DependsOn" && v.Kind == yaml.SequenceNode:
					for _, x := range v.Content {
						res(x.Value, where)
					}
				case k == "Fn::Sub":
					s := v
					if v.Kind == yaml.SequenceNode {
						s = v.Content[0]
					}
					for _, m := range regexp.MustCompile(`\$\{([^!}][^}]*)\}`).FindAllStringSubmatch(s.Value, -1) {
						name, _, dotted := strings.Cut(m[1], ".")
						switch {
						case v.Kind == yaml.SequenceNode && mapGet(v.Content[1], m[1]) != nil:
						case dotted:
							res(name, where)
						default:
							ref(name, where)
						}
					}
				case k == "Fn::If" && v.Kind == yaml.SequenceNode && len(v.Content) == 3:
					cond(v.Content[0].Value, where)
				}
				walk(v, where+"."+k)
			}
		}
	}
	for _, sec := range []string{"Resources", "Outputs", "Conditions"} {
		if s := mapGet(out, sec); s != nil {
			walk(s, sec)
		}
	}
}

// runGenerated packages the templates of seed and checks the invariants
// and idempotence.
func runGenerated(t *testing.T, seed uint64) {
	g := generate(seed)
	srcs := memSources{}
	for k, v := range g.files {
		srcs[k] = []byte(v)
	}
	dump := func() string {
		names := make([]string, 0, len(g.files))
		for k := range g.files {
			names = append(names, k)
		}
		slices.Sort(names)
		var b strings.Builder
		for _, k := range names {
			fmt.Fprintf(&b, "-- %s --\n%s", k, g.files[k])
		}
		return b.String()
	}
	out, err := Package("template.yaml", Options{Sources: srcs, NoSourceMap: true})
	if err != nil {
		t.Fatalf("seed %d: %v\n%s", seed, err, dump())
	}
	checkInvariants(t, out.Root, g.predicted())
	y, err := EncodeYAML(out.Root)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Package("template.yaml", Options{Sources: memSources{"template.yaml": y}, NoSourceMap: true})
	if err != nil {
		t.Fatalf("seed %d: packaging the output again: %v\n%s", seed, err, y)
	}
	y2, err := EncodeYAML(again.Root)
	if err != nil {
		t.Fatal(err)
	}
	if string(y) != string(y2) {
		t.Errorf("seed %d: packaging the output again changed it:\n%s\n--- again:\n%s", seed, y, y2)
	}
	if t.Failed() {
		t.Logf("seed %d templates:\n%s\noutput:\n%s", seed, dump(), y)
	}
}

// TestGeneratedModules packages 400 generated module templates and checks
// the invariants of each output.
func TestGeneratedModules(t *testing.T) {
	n := uint64(400)
	if testing.Short() {
		n = 50
	}
	for seed := uint64(0); seed < n; seed++ {
		runGenerated(t, seed)
		if t.Failed() {
			return
		}
	}
}

// FuzzGeneratedModules explores more generated templates.
func FuzzGeneratedModules(f *testing.F) {
	for _, s := range []uint64{0, 1, 2, 42} {
		f.Add(s)
	}
	f.Fuzz(runGenerated)
}
