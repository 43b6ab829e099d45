package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/cloud-assembly/assemble/errcode"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/cloud-assembly/assemble/assembly"
	"github.com/cloud-assembly/assemble/internal/output"
	"github.com/cloud-assembly/assemble/packager"
	"github.com/cloud-assembly/assemble/packager/blueprint"
	"github.com/cloud-assembly/assemble/packager/cfn"
	"github.com/cloud-assembly/assemble/signing"
	"github.com/cloud-assembly/assemble/trust"
)

// Every exported Err* variable of the libraries (every package of the
// module but cmd) is declared with errcode.New or errcode.Sub, so that
// --json gives each cause its own code and hint: a new sentinel declared
// another way fails this test. packager.ErrOutsideProject is a kind of
// assembly.ErrPathUnsafe in the packager's words, and carries its code.
func TestSentinelsCarryCodes(t *testing.T) {
	root := filepath.Join("..", "..")
	sentinel := regexp.MustCompile(`^Err[A-Z]`)
	n := 0
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "cmd", "testdata", "bench", "fixtures", "docs", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if !sentinel.MatchString(name.Name) || !name.IsExported() || i >= len(vs.Values) {
						continue
					}
					n++
					call, ok := vs.Values[i].(*ast.CallExpr)
					sel, _ := func() (*ast.SelectorExpr, bool) {
						if !ok {
							return nil, false
						}
						s, ok := call.Fun.(*ast.SelectorExpr)
						return s, ok
					}()
					if sel != nil && isIdent(sel.X, "errcode") && (sel.Sel.Name == "New" || sel.Sel.Name == "Sub") {
						continue
					}
					if f.Name.Name == "packager" && name.Name == "ErrOutsideProject" {
						continue
					}
					t.Errorf("%s: %s.%s is not declared with errcode.New or errcode.Sub", fset.Position(name.Pos()), f.Name.Name, name.Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Fatalf("found only %d sentinels", n)
	}
	if got := errcode.Of(packager.ErrOutsideProject); got != "path_unsafe" {
		t.Errorf("packager.ErrOutsideProject has code %q", got)
	}
}

// One cause, one code: each code is lower_snake_case, and no two
// sentinels share a code, but for the substitution syntax error that
// package subst and package blueprint both name (with one hint).
func TestErrorCodesUnique(t *testing.T) {
	seen := map[string]error{}
	for _, e := range errcode.All() {
		if prev, dup := seen[e.Code()]; dup && e.Code() != "substitution_syntax" {
			t.Errorf("code %q for both %v and %v", e.Code(), prev, e)
		}
		seen[e.Code()] = e
		if !regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`).MatchString(e.Code()) {
			t.Errorf("code %q is not snake_case", e.Code())
		}
	}
}

// docs/json/error.json lists exactly the codes --json can print: the
// table's, the assembly check's rules and the codes of no sentinel.
func TestErrorCodesInSchema(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(jsonDocsDir(), "error.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs struct {
			Code struct {
				Enum []string `json:"enum"`
			} `json:"code"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{codeUsage: true, codeNotFound: true, codePermission: true, codeInterrupted: true, codeFailure: true}
	for _, e := range errcode.All() {
		want[e.Code()] = true
	}
	for code := range ownHints {
		want[code] = true
	}
	for _, r := range assembly.Rules() {
		if r.Sentinel != nil { // notes never fail
			want[ruleCode(r.Code)] = true
		}
	}
	got := map[string]bool{}
	for _, c := range doc.Defs.Code.Enum {
		if got[c] {
			t.Errorf("error.json lists %q twice", c)
		}
		got[c] = true
		if !want[c] {
			t.Errorf("error.json lists %q, which no error has", c)
		}
	}
	for c := range want {
		if !got[c] {
			t.Errorf("error.json does not list %q", c)
		}
	}
}

// The codes reuse the libraries' names: the assembly check's rule codes
// (an invalid assembly takes its first finding's rule), and the
// blueprint's codes.
func TestErrorCodesReuseLibraryNames(t *testing.T) {
	bySentinel := map[error][]string{}
	for _, r := range assembly.Rules() {
		if r.Sentinel == nil {
			continue
		}
		code := ruleCode(r.Code)
		bySentinel[r.Sentinel] = append(bySentinel[r.Sentinel], code)
		ce := &assembly.CheckError{Findings: []assembly.Finding{{Severity: assembly.Error, Rule: r.Code, Err: r.Sentinel}, {Rule: "cycle", Err: assembly.ErrCycle}}}
		if got := codeOf(fmt.Errorf("verify x: %w", ce)); got != code {
			t.Errorf("a finding of rule %s: code %s, want %s", r.Code, got, code)
		}
	}
	for s, codes := range bySentinel {
		got := codeOf(fmt.Errorf("x: %w", s))
		family := true
		for _, c := range codes {
			family = family && strings.HasPrefix(c, got+"_")
		}
		if !slices.Contains(codes, got) && !family {
			t.Errorf("%v: code %s, want one of the rules' %v or their common prefix", s, got, codes)
		}
	}
	n := 0
	for _, e := range errcode.All() {
		if bc := blueprint.Code(e); bc != "" {
			n++
			if e.Code() != bc && e.Code() != "blueprint_"+bc {
				t.Errorf("%v: code %s, blueprint.Code says %s", e, e.Code(), bc)
			}
		}
	}
	if n < 15 {
		t.Errorf("only %d sentinels have a blueprint.Code", n)
	}
}

func TestCodeOf(t *testing.T) {
	list := blueprint.ErrorList{
		{File: "a.yaml", Line: 3, Column: 1, Err: blueprint.ErrIncludeCycle, Msg: "cycle"},
		{File: "a.yaml", Line: 1, Column: 1, Err: blueprint.ErrSyntax, Msg: "syntax"},
	}
	for _, tt := range []struct {
		err  error
		want string
	}{
		{usageError{fmt.Errorf("--x: %w", signing.ErrNoKey)}, "usage"},
		{withHint(usagef("bad"), "h"), "usage"},
		{onFile("verify", "a.cloud", fmt.Errorf("v: %w", &signing.DigestError{Name: "t.yml"})), "digest_mismatch"},
		{signing.ErrVerification, "verification_failed"},
		{fmt.Errorf("x: %w", packager.ErrOutsideProject), "path_unsafe"},
		{fmt.Errorf("x: %w", assembly.ErrInsecurePath), "unsafe_name"},
		{fmt.Errorf("validate: %w", list), "include_cycle"},
		{because(list, "", "2 of 2 files invalid"), "include_cycle"},
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.ENOENT}, "not_found"},
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.EACCES}, "permission_denied"},
		{fmt.Errorf("hash: %w", context.Canceled), "interrupted"},
		{errors.New("disk on fire"), "failure"},
		{&output.Error{Path: "o", Err: output.ErrInput}, "output_is_input"},
	} {
		if got := codeOf(tt.err); got != tt.want {
			t.Errorf("codeOf(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

// The place of an error is the innermost one that names a line, else the
// innermost that names a file.
func TestPlaceOf(t *testing.T) {
	tmpl := &cfn.Error{File: "stacks/t.yaml", Line: 7, Col: 3, Err: cfn.ErrSyntax, Msg: "bad"}
	check := &assembly.CheckError{Findings: []assembly.Finding{{Rule: "manifest-json", Err: &assembly.SyntaxError{Line: 1, Column: 46, Msg: "dup"}}}}
	for _, tt := range []struct {
		err  error
		want place
	}{
		{onFile("build", "proj", &packager.ProjectError{File: "assembly.yaml", Line: 4, Column: 5, Err: tmpl}), place{"stacks/t.yaml", 7, 3}},
		{onFile("build", "proj", &packager.ProjectError{File: "assembly.yaml", Line: 4, Column: 5, Err: errors.New("x")}), place{"assembly.yaml", 4, 5}},
		{onFile("inspect", "app.cloud", check), place{"manifest.json", 1, 46}},
		{onFile("verify", "app.cloud", &signing.DigestError{Name: "t.yml"}), place{file: "app.cloud"}},
		{onFile("build", "proj", &output.Error{Path: "out.cloud", Err: output.ErrInput}), place{file: "out.cloud"}},
		{flagFileError("--key", &fs.PathError{Op: "open", Path: "k.asc", Err: syscall.ENOENT}), place{file: "k.asc"}},
		{because(errIsFolder, "dir", "dir is a folder"), place{file: "dir"}},
		{usagef("no"), place{}},
	} {
		if got := placeOf(tt.err); got != tt.want {
			t.Errorf("placeOf(%v) = %+v, want %+v", tt.err, got, tt.want)
		}
	}
}

// wantsJSON finds --json wherever the command line has it as a flag, and
// nowhere else.
func TestWantsJSON(t *testing.T) {
	app := newApp(nil, nil, nil)
	for _, tt := range []struct {
		line string
		want bool
	}{
		{"verify --json a.cloud", true},
		{"verify a.cloud --json", true},
		{"verify a.cloud -json", true},
		{"verify --json=false a.cloud", false},
		{"verify --json=true a.cloud", true},
		{"verify a.cloud", false},
		{"verify --keyring --json a.cloud", false},
		{"verify -- --json", false},
		{"schema validate x.json --json", true},
		{"--json", true},
		{"nosuchcommand --json", true},
		{"build -o --json proj", false},
		{"build --strict --json proj", true},
	} {
		args := append([]string{"assemble"}, strings.Fields(tt.line)...)
		if got := wantsJSON(app, reorderArgs(app, args)); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.line, got, tt.want)
		}
	}
}

// A failure's JSON carries what the command found before failing, then
// the error; a plain failure only the error.
func TestWriteErrorJSON(t *testing.T) {
	var b strings.Builder
	err := withResult(withHint(onFile("verify", "a.cloud", signing.ErrUnknownSigner), "trust it"), &trust.VerifyError{Name: "a.cloud", Result: &trust.Result{Name: "a.cloud", Signed: true}})
	if werr := writeErrorJSON(&b, err, "trust it"); werr != nil {
		t.Fatal(werr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(b.String()), &got); err != nil {
		t.Fatal(err, b.String())
	}
	keys := slices.Sorted(maps.Keys(got))
	if strings.Join(keys, ",") != "authenticated,error,file,signed,valid" {
		t.Errorf("keys %v\n%s", keys, b.String())
	}
	e := got["error"].(map[string]any)
	if e["code"] != "unknown_signer" || e["file"] != "a.cloud" || e["hint"] != "trust it" || e["line"] != nil {
		t.Errorf("error %v", e)
	}
	if !strings.HasSuffix(b.String(), "}\n") || strings.Count(b.String(), "\n}") != 1 {
		t.Errorf("not one indented object:\n%s", b.String())
	}
}

// A failure's JSON writes <, > and & as they are, as a success's does
// (a user ID "Name <mail>" read \u003cmail\u003e).
func TestWriteErrorJSONNoHTMLEscape(t *testing.T) {
	var b strings.Builder
	err := withResult(errors.New(`signed by "A & B <ab@example.test>"`), &trust.VerifyError{Name: "<a>.cloud"})
	if werr := writeErrorJSON(&b, err, "a <hint>"); werr != nil {
		t.Fatal(werr)
	}
	for _, want := range []string{`"A & B <ab@example.test>\"`, `"file": "<a>.cloud"`, `"hint": "a <hint>"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %s in\n%s", want, b.String())
		}
	}
}
