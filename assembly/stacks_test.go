package assembly

import (
	"errors"
	"math/rand"
	"strings"
	"testing"
)

func stackDroplet(id, environment, name string) string {
	return `"` + id + `":{"type":"npm://@aws-cdk/aws-cloudformation.StackDroplet","environment":"` + environment + `","properties":{"stackName":"` + name + `","template":"t.yml"}}`
}

// A stack name CloudFormation refuses is an invalid assembly, for reading
// and for writing (issue 27, item 7); one made by a reference is checked
// when it is known.
func TestCheckStackName(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"my-stack", true},
		{"A", true},
		{"a1-" + strings.Repeat("x", 125), true},
		{"my_stack!", false},
		{"my_stack", false},
		{"1stack", false},
		{"-stack", false},
		{"stack.name", false},
		{"a" + strings.Repeat("x", 128), false},
	} {
		for _, writing := range []bool{false, true} {
			rep, err := Check([]byte(manifestWith(stackDroplet("S", "aws://123456789012/eu-west-1", tt.name))), fileSet(ManifestName, "t.yml"), CheckOptions{Writing: writing})
			if tt.ok {
				if err != nil {
					t.Errorf("%q: %v", tt.name, err)
				}
				continue
			}
			if !errors.Is(err, ErrStackName) || !errors.Is(err, ErrManifest) {
				t.Fatalf("%q (writing %v): got %v, want ErrStackName", tt.name, writing, err)
			}
			if f := rep.Errors(); len(f) != 1 || f[0].Rule != "stack-name" || f[0].Droplet != "S" || f[0].Field != "properties.stackName" {
				t.Errorf("%q: findings %v", tt.name, rep.Findings)
			}
		}
	}
}

// ValidStackName is CloudFormation's rule, checked against a spelled-out
// version of it on random names.
func TestValidStackNameProperty(t *testing.T) {
	rule := func(s string) bool {
		if len(s) < 1 || len(s) > 128 {
			return false
		}
		for i, r := range s {
			letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
			if i == 0 && !letter {
				return false
			}
			if !letter && !(r >= '0' && r <= '9') && r != '-' {
				return false
			}
		}
		return true
	}
	alphabet := []rune("aZ09-_!. é\x00")
	rng := rand.New(rand.NewSource(27))
	for i := 0; i < 20000; i++ {
		n := rng.Intn(132)
		if rng.Intn(4) == 0 {
			n = 125 + rng.Intn(6)
		}
		var b strings.Builder
		for j := 0; j < n; j++ {
			b.WriteRune(alphabet[rng.Intn(len(alphabet))])
		}
		if s := b.String(); ValidStackName(s) != rule(s) {
			t.Fatalf("ValidStackName(%q) = %v", s, ValidStackName(s))
		}
	}
}

// Two stack droplets naming one stack in one account and region are an
// invalid assembly; in two regions, or two accounts, they are not.
func TestCheckDuplicateStack(t *testing.T) {
	const a, b = "aws://123456789012/eu-west-1", "aws://123456789012/us-east-1"
	for _, tt := range []struct {
		envs [3]string
		dup  []string // the droplets with a finding
	}{
		{[3]string{a, a, b}, []string{"B"}},
		{[3]string{a, a, a}, []string{"B", "C"}},
		{[3]string{a, b, "aws://210987654321/eu-west-1"}, nil},
		{[3]string{"aws://unknown-account/unknown-region", "aws://unknown-account/unknown-region", a}, []string{"B"}},
	} {
		m := manifestWith(stackDroplet("A", tt.envs[0], "app") + "," + stackDroplet("B", tt.envs[1], "app") + "," + stackDroplet("C", tt.envs[2], "app"))
		rep, err := Check([]byte(m), fileSet(ManifestName, "t.yml"), CheckOptions{})
		if tt.dup == nil {
			if err != nil {
				t.Errorf("%v: %v", tt.envs, err)
			}
			continue
		}
		if !errors.Is(err, ErrDuplicateStack) {
			t.Fatalf("%v: got %v, want ErrDuplicateStack", tt.envs, err)
		}
		var got []string
		for _, f := range rep.Errors() {
			if f.Rule != "duplicate-stack" || !strings.Contains(f.Message, `droplet A's`) {
				t.Errorf("finding %v", f)
			}
			got = append(got, f.Droplet)
		}
		if strings.Join(got, ",") != strings.Join(tt.dup, ",") {
			t.Errorf("%v: findings on %v, want %v", tt.envs, got, tt.dup)
		}
	}
}
