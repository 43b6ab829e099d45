package deploy

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
)

const openTemplate = `Parameters:
  Mode:
    Type: String
    Default: safe
  Owner:
    Type: String
  Email:
    Type: String
Resources:
  Topic:
    Type: AWS::SNS::Topic
Outputs:
  Seen:
    Value: !Sub "${Mode} ${Owner} ${Email}"
`

// openAssembly: stack App sets Owner, leaves Mode at its Default, and
// leaves Email open (a `missing` entry).
func openAssembly(t *testing.T, name string) *Source {
	t.Helper()
	m := manifest(map[string]any{"App": stack("App", env, name, "app.yaml", map[string]string{"Owner": "web"})})
	m["missing"] = map[string]any{"stack-parameter:App.Email": map[string]any{"provider": "stack-parameter", "props": map[string]any{"droplet": "App", "parameter": "Email"}}}
	return signedSource(t, m, files{"app.yaml": openTemplate})
}

// Unsigned input is limited to what the signer left open: a deployer's
// parameter is refused before any change unless the manifest lists it as
// missing or the policy's deployer-parameters name it; a name the template
// does not declare is refused with the nearest declared one.
func TestParameterOnlyWhatTheSignerLeftOpen(t *testing.T) {
	cfg := awsConfig(t)
	u := uniq()
	name := "open-" + u
	src := openAssembly(t, name)
	for _, tc := range []struct {
		name     string
		params   map[string]string
		settable []string
		want     string // "" when accepted
	}{
		{"a missing entry", map[string]string{"App.Email": "ops@example.com"}, nil, ""},
		{"one the droplet sets", map[string]string{"App.Email": "x", "App.Owner": "me"}, nil, "App.Owner: the signed assembly sets it itself and does not leave it open"},
		{"one left at the template's default", map[string]string{"App.Email": "x", "App.Mode": "unsafe"}, nil, "App.Mode: the signed assembly leaves it at the template's Default and does not leave it open"},
		{"an undeclared name", map[string]string{"App.Email": "x", "App.Moed": "unsafe"}, nil, "App.Moed: the template app.yaml of App declares no parameter Moed (the nearest it declares is Mode)"},
		{"an undeclared name, though settable", map[string]string{"App.Email": "x", "App.Emial": "y"}, []string{"App.Emial"}, "declares no parameter Emial (the nearest it declares is Email)"},
		{"a default the policy lets deployers set", map[string]string{"App.Email": "x", "App.Mode": "unsafe"}, []string{"App.Mode"}, ""},
		{"a signed value the policy lets deployers set", map[string]string{"App.Email": "x", "App.Owner": "me"}, []string{"App.Owner"}, ""},
		{"no such droplet", map[string]string{"App.Email": "x", "Ap.Mode": "x"}, nil, `the assembly has no droplet Ap (did you mean "App"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := checkParameters(src, map[string]bool{"App": true}, tc.params, tc.settable)
			err := errors.Join(errs...)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrParameter) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrParameter saying %q", err, tc.want)
			}
			// Deploy refuses before any change, with and without a plan.
			for _, plan := range []bool{false, true} {
				o := opts(cfg, nil)
				o.Parameters, o.Settable, o.Plan = tc.params, tc.settable, plan
				if _, err := Deploy(context.Background(), src, o); !errors.Is(err, ErrParameter) {
					t.Fatalf("deploy (plan %v): %v", plan, err)
				}
			}
			if got := stacksNamed(t, cfg, name); len(got) != 0 {
				t.Fatalf("stacks made: %v", got)
			}
		})
	}

	// What the policy lets a deployer set is deployed; status does not
	// judge an open parameter, only the signed ones.
	o := opts(cfg, nil)
	o.Method = Direct
	o.Parameters = map[string]string{"App.Email": "ops@example.com", "App.Mode": "fast"}
	o.Settable = []string{"App.Mode"}
	res, err := Deploy(context.Background(), src, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Droplet("App").Attributes["output.Seen"]; got != "fast web ops@example.com" {
		t.Errorf("parameters %q", got)
	}
	st, err := Status(context.Background(), src, Options{AWS: o.AWS, Settable: o.Settable})
	if err != nil || !st.Match {
		t.Fatalf("status with the policy: %v %+v", err, st.Droplets)
	}
	// Without the policy, Mode is signed (the template's Default).
	statusSays(t, src, cfg, "App", `parameter Mode is "fast", want "safe"`)
	// A later deploy that does not set it keeps the deployer's value.
	o.Parameters = map[string]string{"App.Email": "ops@example.com", "App.Owner": "x"}
	o.Settable = []string{"App.Mode", "App.Owner"}
	if _, err := Deploy(context.Background(), src, o); err != nil {
		t.Fatal(err)
	}
	out, err := cloudformation.NewFromConfig(cfg).DescribeStacks(context.Background(), &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range out.Stacks[0].Parameters {
		got[aws.ToString(p.ParameterKey)] = aws.ToString(p.ParameterValue)
	}
	if got["Mode"] != "fast" || got["Owner"] != "x" {
		t.Errorf("parameters after a deploy that left Mode out: %v", got)
	}
}
