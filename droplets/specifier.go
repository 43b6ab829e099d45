package droplets

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/cloud-assembly/assemble/errcode"
)

// ErrSpecifier is wrapped by every error about a malformed type specifier.
var ErrSpecifier = errcode.New("type_specifier", "malformed type specifier",
	"write the droplet's type as protocol://path, such as npm://[@namespace/]package/ClassName[@version]")

// A Specifier is a parsed droplet type specifier, "protocol://path".
//
// For the npm protocol, "npm://[@namespace/]package/ClassName[@version]", the
// parts are split out. The specification's own examples write the class after
// the package with a dot ("npm://@aws-cdk/aws-cloudformation.StackDroplet");
// that form is accepted too: with no "/ClassName" segment, the class is what
// follows the package name's last dot.
type Specifier struct {
	Protocol string // "npm", or any other protocol (Known reports false)
	Path     string // everything after "://"

	// npm parts; empty for other protocols.
	Namespace string // without the "@"
	Package   string
	Class     string
	Version   string
}

var (
	protocolRE = regexp.MustCompile(`^[a-z][a-z0-9+.-]*$`)
	// npm package names: lowercase URL-safe characters (npm's own rule).
	npmNameRE  = regexp.MustCompile(`^[a-z0-9~][a-z0-9._~-]*$`)
	npmClassRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*(\.[A-Za-z_$][A-Za-z0-9_$]*)*$`)
	npmVerRE   = regexp.MustCompile(`^[A-Za-z0-9^~<>=*.+-][A-Za-z0-9^~<>=*.+ |-]*$`)
)

// MaxSpecifierLength bounds type specifiers and environments.
const MaxSpecifierLength = 1024

// SplitURI splits "protocol://path", checking only the outer syntax.
func SplitURI(s string) (protocol, path string, err error) {
	if len(s) > MaxSpecifierLength {
		return "", "", fmt.Errorf("longer than %d bytes", MaxSpecifierLength)
	}
	protocol, path, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		return "", "", errors.New(`want "protocol://path"`)
	case !protocolRE.MatchString(protocol):
		return "", "", fmt.Errorf("bad protocol %q", protocol)
	case path == "":
		return "", "", errors.New("empty path after \"://\"")
	}
	for _, c := range path {
		if c <= ' ' || c == 0x7f {
			return "", "", errors.New("path holds a space or control character")
		}
	}
	return protocol, path, nil
}

// ParseSpecifier parses a droplet type specifier. A specifier with an
// unknown protocol parses (check Known); a malformed one is an error wrapping
// ErrSpecifier.
func ParseSpecifier(s string) (Specifier, error) {
	protocol, path, err := SplitURI(s)
	if err != nil {
		return Specifier{}, fmt.Errorf("%w %q: %v", ErrSpecifier, s, err)
	}
	sp := Specifier{Protocol: protocol, Path: path}
	if protocol != "npm" {
		return sp, nil
	}
	bad := func(why string) (Specifier, error) {
		return Specifier{}, fmt.Errorf("%w %q: %s (want npm://[@namespace/]package/ClassName[@version])", ErrSpecifier, s, why)
	}
	rest := path
	if strings.HasPrefix(rest, "@") {
		ns, after, ok := strings.Cut(rest[1:], "/")
		if !ok || !npmNameRE.MatchString(ns) {
			return bad("bad namespace")
		}
		sp.Namespace, rest = ns, after
	}
	// The version follows the last "@" (namespaces were removed above).
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		sp.Version, rest = rest[i+1:], rest[:i]
		if !npmVerRE.MatchString(sp.Version) {
			return bad("bad version")
		}
	}
	pkg, class, ok := strings.Cut(rest, "/")
	if !ok {
		i := strings.LastIndex(rest, ".")
		if i < 0 {
			return bad("no class name")
		}
		pkg, class = rest[:i], rest[i+1:]
	}
	if !npmNameRE.MatchString(pkg) {
		return bad("bad package name")
	}
	if !npmClassRE.MatchString(class) {
		return bad("bad class name")
	}
	sp.Package, sp.Class = pkg, class
	return sp, nil
}

// Known reports whether the specifier's protocol is one this package
// understands (npm).
func (s Specifier) Known() bool { return s.Protocol == "npm" }

// String returns the specifier as written by ParseSpecifier's input.
func (s Specifier) String() string { return s.Protocol + "://" + s.Path }

// key identifies the droplet class, ignoring the version.
func (s Specifier) key() string {
	if s.Protocol != "npm" {
		return s.String()
	}
	return "npm:" + s.Namespace + "/" + s.Package + "/" + s.Class
}
