package assembly

import (
	"fmt"
	"regexp"

	"github.com/cloud-assembly/assemble/droplets"
)

// An Environment is where a droplet deploys: "protocol://path". For the aws
// protocol, "aws://<12-digit account>/<region>".
type Environment struct {
	Protocol string
	Path     string
	Account  string // aws only
	Region   string // aws only
}

var (
	awsAccountRE = regexp.MustCompile(`^[0-9]{12}$`)
	awsRegionRE  = regexp.MustCompile(`^[a-z]+(-[a-z]+)*-[0-9]+$`)
)

// Placeholders the AWS CDK writes for an environment-agnostic stack; they are
// accepted in place of an account or a region.
const (
	UnknownAccount = "unknown-account"
	UnknownRegion  = "unknown-region"
)

// ParseEnvironment parses an environment string. An unknown protocol parses
// (check Known); a malformed environment is an error wrapping ErrEnvironment
// and ErrManifest.
func ParseEnvironment(s string) (Environment, error) {
	bad := func(why string) (Environment, error) {
		return Environment{}, &EnvironmentError{Env: s, Msg: why}
	}
	protocol, path, err := droplets.SplitURI(s)
	if err != nil {
		return bad(err.Error())
	}
	env := Environment{Protocol: protocol, Path: path}
	if protocol != "aws" {
		return env, nil
	}
	m := regexp.MustCompile(`^([^/]+)/([^/]+)$`).FindStringSubmatch(path)
	if m == nil {
		return bad("want aws://<12-digit account>/<region>")
	}
	if !awsAccountRE.MatchString(m[1]) && m[1] != UnknownAccount {
		return bad(fmt.Sprintf("account %q is not 12 digits", m[1]))
	}
	if !awsRegionRE.MatchString(m[2]) && m[2] != UnknownRegion {
		return bad(fmt.Sprintf("region %q is not a region name like eu-west-1", m[2]))
	}
	env.Account, env.Region = m[1], m[2]
	return env, nil
}

// Known reports whether the protocol is one this package understands (aws).
func (e Environment) Known() bool { return e.Protocol == "aws" }

// Agnostic reports whether the account or region is a CDK placeholder.
func (e Environment) Agnostic() bool {
	return e.Account == UnknownAccount || e.Region == UnknownRegion
}

// String returns "protocol://path".
func (e Environment) String() string { return e.Protocol + "://" + e.Path }

// An EnvironmentError is a malformed environment string.
type EnvironmentError struct {
	Env string
	Msg string
}

func (e *EnvironmentError) Error() string {
	return fmt.Sprintf("bad environment %q: %s", e.Env, e.Msg)
}
func (e *EnvironmentError) Unwrap() []error { return []error{ErrEnvironment, ErrManifest} }
