package droplets

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSpecifier(t *testing.T) {
	tests := []struct {
		in                  string
		ns, pkg, class, ver string
		known               bool
	}{
		{in: "npm://@aws-cdk/aws-cloudformation.StackDroplet", ns: "aws-cdk", pkg: "aws-cloudformation", class: "StackDroplet", known: true},
		{in: "npm://@aws-cdk/aws-cloudformation/StackDroplet@1.2.3", ns: "aws-cdk", pkg: "aws-cloudformation", class: "StackDroplet", ver: "1.2.3", known: true},
		{in: "npm://my-pkg/Handler", pkg: "my-pkg", class: "Handler", known: true},
		{in: "npm://lodash.merge/Deep.Handler@^4", pkg: "lodash.merge", class: "Deep.Handler", ver: "^4", known: true},
		{in: "pypi://thing/Cls"},
	}
	for _, tt := range tests {
		sp, err := ParseSpecifier(tt.in)
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if sp.Namespace != tt.ns || sp.Package != tt.pkg || sp.Class != tt.class || sp.Version != tt.ver || sp.Known() != tt.known {
			t.Errorf("%s: got %+v", tt.in, sp)
		}
		if sp.String() != tt.in {
			t.Errorf("%s: String() = %s", tt.in, sp.String())
		}
	}
}

func TestParseSpecifierRejects(t *testing.T) {
	for _, in := range []string{
		"", "stack", "npm:/x/Y", "://x", "NPM://x/Y", "npm://", "npm://pkg", "npm://@ns", "npm://@ns/pkg",
		"npm://Pkg/Class", "npm://pkg/1Class", "npm://pkg/Class@", "npm://@/pkg/C", "npm://pkg/Cl ass",
		"x://a b", "npm://" + strings.Repeat("a", MaxSpecifierLength) + "/C",
	} {
		if _, err := ParseSpecifier(in); !errors.Is(err, ErrSpecifier) {
			t.Errorf("%q: got %v, want ErrSpecifier", in, err)
		}
	}
}

func TestKinds(t *testing.T) {
	for _, alias := range []string{"stack", "file", "directory", "docker-image", "docker-build"} {
		k, ok := LookupAlias(alias)
		if !ok {
			t.Fatalf("alias %s not registered", alias)
		}
		sp, err := ParseSpecifier(k.Type + "@2.0.0")
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := Lookup(sp); !ok || got != k {
			t.Errorf("%s: a versioned specifier does not find the kind", alias)
		}
	}
	if got := strings.Join(Aliases(), ","); got != "blueprint,directory,docker-build,docker-image,file,stack" {
		t.Errorf("Aliases() = %s", got)
	}
}

func TestAttributes(t *testing.T) {
	stack, _ := LookupAlias("stack")
	for _, a := range []string{"output.Bucket", "stackArn"} {
		if err := stack.CheckAttribute(a); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	err := stack.CheckAttribute("output.")
	if !errors.Is(err, ErrAttribute) || !strings.Contains(err.Error(), "output.<name>, stackArn") {
		t.Errorf("output.: got %v", err)
	}
	img, _ := LookupAlias("docker-image")
	err = img.CheckAttribute("imageUri")
	if !errors.Is(err, ErrAttribute) || !strings.Contains(err.Error(), "exactImageId, imageName") {
		t.Errorf("imageUri: got %v", err)
	}
}

func TestCheckProperties(t *testing.T) {
	stack, _ := LookupAlias("stack")
	if err := stack.CheckProperties(map[string]any{"stackName": "s", "template": "t.yaml", "parameters": map[string]any{"A": "b"}, "extra": 1.0}); err != nil {
		t.Fatal(err)
	}
	err := stack.CheckProperties(map[string]any{"template": true, "parameters": map[string]any{"A": 1.0}})
	if !errors.Is(err, ErrProperty) {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{`needs "stackName"`, "template: invalid property: want a string, got a boolean: put the value in quotes", "parameters.A: invalid property: want a string, got a number: put the value in quotes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// QA: an object where a string belongs gets no quoting hint.
func TestCheckPropertiesNoQuoteHintForObjects(t *testing.T) {
	stack, _ := LookupAlias("stack")
	err := stack.CheckProperties(map[string]any{"stackName": "s", "template": "t.yaml", "parameters": map[string]any{"A": map[string]any{}}})
	if err == nil || !strings.HasSuffix(err.Error(), "want a string, got an object") {
		t.Fatalf("got %v", err)
	}
}

func TestCheckPropertiesList(t *testing.T) {
	build, _ := LookupAlias("docker-build")
	ok := map[string]any{"directory": "ctx", "repositoryName": "r", "imageTag": "t", "executables": []any{"run.sh", "bin/x"}}
	if err := build.CheckProperties(ok); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		v    any
		want string
	}{
		{"run.sh", "executables: invalid property: want a list of strings, got a string"},
		{map[string]any{}, "executables: invalid property: want a list of strings, got an object"},
		{[]any{"a", true}, "executables[1]: invalid property: want a string, got a boolean"},
	} {
		props := map[string]any{"directory": "ctx", "repositoryName": "r", "imageTag": "t", "executables": tt.v}
		err := build.CheckProperties(props)
		if !errors.Is(err, ErrProperty) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: got %v, want %q", tt.v, err, tt.want)
		}
	}
}

func TestUnknownProperties(t *testing.T) {
	dir, _ := LookupAlias("directory")
	errs := dir.UnknownProperties(map[string]any{"directory": "d", "keyprefix": "k", "zzz": 1, "bucketName": "b"})
	if len(errs) != 2 {
		t.Fatalf("got %v", errs)
	}
	var pe *PropertyError
	if !errors.As(errs[0], &pe) || pe.Property != "keyprefix" || !errors.Is(errs[0], ErrUnknownProperty) ||
		!strings.HasSuffix(errs[0].Error(), `DirectoryDroplet documents directory, bucketName, keyPrefix, objectKey, executables (did you mean "keyPrefix"?)`) {
		t.Errorf("keyprefix: %v", errs[0])
	}
	if strings.Contains(errs[1].Error(), "did you mean") {
		t.Errorf("zzz: %v", errs[1])
	}
	if errs := dir.UnknownProperties(map[string]any{"directory": "d"}); errs != nil {
		t.Errorf("known properties: %v", errs)
	}
}
