package assembly

import "github.com/cloud-assembly/assemble/droplets"

// Severity says what a finding does to the verdict.
type Severity int

const (
	// Error: the assembly is invalid; every command refuses it.
	Error Severity = iota + 1
	// Warning: the assembly is valid, but holds something this package
	// cannot check or does not know. CheckOptions.Strict makes it an error.
	Warning
	// Note: a message a droplet carries in its metadata (kind "warning" or
	// "error"), shown to the user; it never changes the verdict.
	Note
)

func (s Severity) String() string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	case Note:
		return "note"
	}
	return "unknown"
}

// A Rule is one kind of finding: its stable code, the sentinel its
// findings wrap, and its severity when reading an assembly someone else
// made and when writing one (assemble build). CheckOptions.Strict turns
// every Warning into an Error.
type Rule struct {
	Code     string
	Sentinel error // nil for notes
	Reading  Severity
	Writing  Severity
	// Opening is set for the rules of the container, which opening the
	// archive (NewReader) enforces before any manifest is read.
	Opening bool
	// Summary says what the rule checks, for the README and --help.
	Summary string
}

// The rules, in the order of the README's table of findings.
var (
	ruleContainer      = &Rule{Code: "container", Sentinel: ErrFormat, Reading: Error, Writing: Error, Opening: true, Summary: "the ZIP structure: one end record at the very end, entries tiling the file, local and central headers agreeing, stored or deflated unencrypted regular files"}
	ruleUnsafeName     = &Rule{Code: "unsafe-name", Sentinel: ErrInsecurePath, Reading: Error, Writing: Error, Opening: true, Summary: "an entry name that is absolute, holds `..`, `.`, an empty segment, a backslash, a drive letter, a control character (C0 or C1) or a bidirectional control, or is not UTF-8; that a Windows or macOS tree cannot hold (a device name, a trailing dot or space, a reserved character, a segment over 255 bytes); or, at the root, a folder or another spelling of `manifest.json` or `signature.asc`"}
	ruleDuplicateName  = &Rule{Code: "duplicate-name", Sentinel: ErrDuplicate, Reading: Error, Writing: Error, Opening: true, Summary: "two entries with one name, also after Unicode normalization and case folding, or a name that is both a file and a folder (`a` beside `a/b`)"}
	ruleTooLarge       = &Rule{Code: "too-large", Sentinel: ErrTooLarge, Reading: Error, Writing: Error, Summary: "a limit exceeded: entries, sizes, name length, manifest.json size, droplets"}
	ruleNoManifest     = &Rule{Code: "manifest-missing", Sentinel: ErrNoManifest, Reading: Error, Writing: Error, Summary: "no `manifest.json` at the root of the archive (the spec: MUST be present)"}
	ruleSyntax         = &Rule{Code: "manifest-json", Sentinel: ErrSyntax, Reading: Error, Writing: Error, Summary: "`manifest.json` is not one JSON object: bad JSON or UTF-8, a duplicate key, data after the object, nesting deeper than 256"}
	ruleSchemaVersion  = &Rule{Code: "schema-version", Sentinel: ErrSchemaVersion, Reading: Error, Writing: Error, Summary: "`schema` is not `cloud-assembly/1.0` (MUST)"}
	ruleSchema         = &Rule{Code: "schema", Sentinel: ErrSchema, Reading: Error, Writing: Error, Summary: "a key the spec requires is missing (`droplets`, a droplet's `type` or `environment`, a metadata `kind` or `value`, a missing entry's `provider` or `props`) or a value has the wrong JSON type (MUST)"}
	ruleUnknownKey     = &Rule{Code: "unknown-key", Sentinel: ErrUnknownKey, Reading: Warning, Writing: Error, Summary: "a key the spec does not define, at the top, in a droplet (such as `description`), a metadata entry or a missing entry"}
	ruleLogicalID      = &Rule{Code: "logical-id", Sentinel: ErrLogicalID, Reading: Error, Writing: Error, Summary: "a logical ID that does not match `^[A-Za-z0-9+/_-]{1,256}$` (MUST)"}
	ruleTypeSpecifier  = &Rule{Code: "type-specifier", Sentinel: droplets.ErrSpecifier, Reading: Error, Writing: Error, Summary: "a droplet type that is not `protocol://path`, or a malformed `npm://[@namespace/]package/ClassName[@version]`"}
	ruleEnvironment    = &Rule{Code: "environment", Sentinel: ErrEnvironment, Reading: Error, Writing: Error, Summary: "an empty environment, one that is not `protocol://path`, or a malformed `aws://account/region`"}
	ruleUnknownProto   = &Rule{Code: "unknown-protocol", Sentinel: ErrUnknownProtocol, Reading: Warning, Writing: Warning, Summary: "a type (not `npm`) or environment (not `aws`) protocol this tool does not know: the droplet is not checked further"}
	ruleUnknownKind    = &Rule{Code: "unknown-kind", Sentinel: ErrUnknownKind, Reading: Warning, Writing: Warning, Summary: "an `npm://` type that is none of the known droplet kinds: its properties and attributes are not checked"}
	rulePropertyNeeded = &Rule{Code: "property-missing", Sentinel: ErrPropertyMissing, Reading: Warning, Writing: Error, Summary: "a property a known droplet kind's table requires is absent (the spec's tables are \"for illustration purpose only\")"}
	rulePropertyType   = &Rule{Code: "property-type", Sentinel: ErrPropertyType, Reading: Warning, Writing: Error, Summary: "a known droplet kind's property has the wrong JSON type (a number where a string belongs)"}
	ruleUnknownProp    = &Rule{Code: "unknown-property", Sentinel: droplets.ErrUnknownProperty, Reading: Warning, Writing: Error, Summary: "a property a known droplet kind does not document (with \"did you mean\" for near names)"}
	ruleRefSyntax      = &Rule{Code: "reference-syntax", Sentinel: ErrReferenceSyntax, Reading: Error, Writing: Error, Summary: "a lone backslash or other bad escape (only `\\\\` and `\\${`), or a malformed or unterminated `${...}` token"}
	ruleRefDroplet     = &Rule{Code: "reference-droplet", Sentinel: ErrReferenceDroplet, Reading: Error, Writing: Error, Summary: "a reference or `dependsOn` entry naming a droplet the assembly does not hold"}
	ruleRefAttribute   = &Rule{Code: "reference-attribute", Sentinel: ErrReferenceAttribute, Reading: Error, Writing: Error, Summary: "a reference to an attribute a known droplet kind does not output: it could never be resolved"}
	ruleTarget         = &Rule{Code: "target", Sentinel: ErrTarget, Reading: Error, Writing: Error, Summary: "a malformed `targets` entry (an extension of the spec: a name, its `environments` as real `aws://ACCOUNT/REGION` pairs, `values`, `tags`, `deployRole`), a droplet called `target` beside targets, or a `${target.NAME}` value some target does not define"}
	ruleCycle          = &Rule{Code: "cycle", Sentinel: ErrCycle, Reading: Error, Writing: Error, Summary: "droplets that depend on each other, through `dependsOn` or references (MUST NOT)"}
	rulePathUnsafe     = &Rule{Code: "path-unsafe", Sentinel: ErrPathUnsafe, Reading: Error, Writing: Error, Summary: "a path property (`template`, `stackPolicy`, `file`, `directory`, `savedImage`, `blueprint`, and `dockerFile` and `executables` below a droplet's `directory`) that is absolute, leaves the archive (or that folder) with `..`, or is not a plain archive path"}
	ruleMissingFile    = &Rule{Code: "missing-file", Sentinel: ErrMissingFile, Reading: Error, Writing: Error, Summary: "a path property naming a file the archive (or the droplet's folder) does not hold, or a folder holding no file: the assembly is not self-contained"}
	ruleStackName      = &Rule{Code: "stack-name", Sentinel: ErrStackName, Reading: Error, Writing: Error, Summary: "a stack droplet's `stackName` that CloudFormation refuses: it must match `^[A-Za-z][A-Za-z0-9-]{0,127}$` (a name made by a reference is checked when deployed)"}
	ruleDuplicateStack = &Rule{Code: "duplicate-stack", Sentinel: ErrDuplicateStack, Reading: Error, Writing: Error, Summary: "two stack droplets with one `stackName` in one environment (account and region): each would overwrite the other"}
	ruleMetadata       = &Rule{Code: "metadata", Reading: Note, Writing: Note, Summary: "a droplet's `warning` or `error` metadata message, shown as it is (the spec: SHOULD surface)"}
)

var rules = []*Rule{
	ruleContainer, ruleUnsafeName, ruleDuplicateName, ruleTooLarge,
	ruleNoManifest, ruleSyntax, ruleSchemaVersion, ruleSchema, ruleUnknownKey,
	ruleLogicalID, ruleTypeSpecifier, ruleEnvironment, ruleUnknownProto, ruleUnknownKind,
	rulePropertyNeeded, rulePropertyType, ruleUnknownProp,
	ruleRefSyntax, ruleRefDroplet, ruleRefAttribute, ruleTarget, ruleCycle,
	rulePathUnsafe, ruleMissingFile, ruleStackName, ruleDuplicateStack, ruleMetadata,
}

// Rules lists every rule, in the order of the README's table of findings.
func Rules() []Rule {
	out := make([]Rule, len(rules))
	for i, r := range rules {
		out[i] = *r
	}
	return out
}

// Severity is the rule's severity under opts.
func (r Rule) Severity(opts CheckOptions) Severity {
	s := r.Reading
	if opts.Writing {
		s = r.Writing
	}
	if opts.Strict && s == Warning {
		s = Error
	}
	return s
}
