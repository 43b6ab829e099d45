package assembly

import (
	"github.com/cloud-assembly/assemble/droplets"
	"github.com/cloud-assembly/assemble/errcode"
)

// Sentinel errors. Every error returned by this package wraps exactly one of
// them, so callers can test the class with errors.Is.
var (
	// ErrFormat: the archive is not a well-formed Cloud Assembly container
	// (bad ZIP structure, unsupported method, encryption, ...).
	ErrFormat = errcode.New("container", "not a valid cloud assembly",
		"the file is not a Cloud Assembly (.cloud); make one with 'assemble build'")
	// ErrInsecurePath: an entry name, or a path property of a droplet, is
	// unsafe (absolute, "..", backslash, ...).
	ErrInsecurePath = errcode.New("unsafe_name", "insecure file name",
		"an entry's name is unsafe to extract: rebuild the assembly with 'assemble build'")
	// ErrDuplicate: two entries share a name, or collide after Unicode NFC
	// normalization plus case folding.
	ErrDuplicate = errcode.New("duplicate_name", "duplicate file name",
		"two entries share a name (also after case folding): rebuild the assembly with 'assemble build'")
	// ErrCorrupt: an entry's data does not match its headers: its CRC-32 or
	// length differs, or its deflate stream is corrupt or ends before the
	// declared compressed size. Found while the content streams (File.Open).
	ErrCorrupt = errcode.New("corrupt", "corrupt file data",
		"the archive is damaged (its data does not match its own ZIP headers); rebuild it and sign it again")
	// ErrTooLarge: a limit (see the Max constants) is exceeded.
	ErrTooLarge = errcode.New("too_large", "limit exceeded",
		"the assembly exceeds a limit (see the README); split it")
	// ErrManifest: manifest.json is missing or invalid, or names what the
	// archive does not hold. Every finding of Check matches it.
	ErrManifest = errcode.New("manifest", "invalid manifest",
		"the assembly is invalid: every command refuses it (each finding names its rule); fix it and build it again")
)

// ErrTruncated: the file starts as a zip archive but ends before its end
// record: a download or copy cut short. It matches ErrFormat too.
var ErrTruncated error = errcode.Sub(ErrFormat, "truncated", "truncated archive",
	"the file was cut short (an interrupted download or copy): download or copy it again")

// Classes of invalid manifests, one per kind of finding (see Rules). Each
// also matches ErrManifest.
var (
	// ErrNoManifest: the archive holds no manifest.json.
	ErrNoManifest error = errcode.Sub(ErrManifest, "manifest_missing", "no manifest.json",
		"the archive has no manifest.json at its root: make a Cloud Assembly with 'assemble build'")
	// ErrSyntax: manifest.json is not one JSON object (bad JSON, invalid
	// UTF-8, a duplicate key, data after the object, nesting too deep).
	ErrSyntax error = errcode.Sub(ErrManifest, "manifest_json", "manifest.json is not valid JSON",
		"manifest.json is not one valid JSON object: fix it at the line and column shown, or build the assembly again")
	// ErrSchema: a key the spec requires is missing, a value has the wrong
	// JSON type, or the schema is not cloud-assembly/1.0.
	ErrSchema error = errcode.Sub(ErrManifest, "schema", "manifest does not follow the schema",
		"manifest.json lacks a key the spec requires, or a value has the wrong JSON type: fix what the finding names and build again")
	// ErrUnknownKey: a key the spec does not define (a warning when
	// reading someone else's assembly).
	ErrUnknownKey error = errcode.Sub(ErrManifest, "unknown_key", "unknown key",
		"remove the key the spec does not define (the spec's manifest schema lists the keys), then build again")
	// ErrLogicalID: a droplet's logical ID breaks the spec's rules.
	ErrLogicalID error = errcode.Sub(ErrManifest, "logical_id", "bad logical id",
		"rename the droplet: a logical ID is 1 to 256 of the characters A-Z a-z 0-9 + / _ -")
	// ErrEnvironment: an environment string is malformed.
	ErrEnvironment error = errcode.Sub(ErrManifest, "environment", "bad environment",
		"write the environment as protocol://path, such as aws://ACCOUNT/REGION")
	// ErrUnknownProtocol: a type specifier or environment uses a protocol
	// this package does not know (a warning when reading).
	ErrUnknownProtocol error = errcode.Sub(ErrManifest, "unknown_protocol", "unknown protocol",
		"this tool checks npm:// types and aws:// environments only: the droplet is not checked further")
	// ErrUnknownKind: a type specifier names a droplet kind this package
	// does not know (a warning when reading).
	ErrUnknownKind error = errcode.Sub(ErrManifest, "unknown_kind", "unknown droplet kind",
		"use a droplet kind this tool knows (the README lists them): this one's properties are not checked")
	// ErrReference: a ${LogicalId.attribute} token is malformed, names a
	// droplet that does not exist, or an attribute its kind does not output.
	ErrReference error = errcode.Sub(ErrManifest, "reference", "bad reference",
		"fix the ${LogicalId.attribute} reference the finding names")
	// ErrCycle: the droplets' dependencies form a cycle.
	ErrCycle error = errcode.Sub(ErrManifest, "cycle", "dependency cycle",
		"break the cycle of dependsOn entries and references the finding shows")
	// ErrMissingFile: a path property names a file or folder the archive
	// does not hold: the assembly is not self-contained.
	ErrMissingFile error = errcode.Sub(ErrManifest, "missing_file", "file not in the archive",
		"add the file to the project folder, or correct the path (relative to the project folder)")
	// ErrStackName: a stack droplet's stackName is one CloudFormation
	// refuses.
	ErrStackName error = errcode.Sub(ErrManifest, "stack_name", "bad stack name",
		"name the stack with a letter, then letters, digits and hyphens (at most 128 characters): CloudFormation refuses any other name")
	// ErrDuplicateStack: two stack droplets name one stack in one
	// environment.
	ErrDuplicateStack error = errcode.Sub(ErrManifest, "duplicate_stack", "duplicate stack name",
		"give each stack droplet its own stackName, or put them in other accounts or regions: one stack holds one droplet")
)

// Kinds of the classes above, one per rule that shares its class with
// another (see Rules): each matches its class, and carries the rule's code.
var (
	// ErrSchemaVersion: schema is not cloud-assembly/1.0.
	ErrSchemaVersion error = errcode.Sub(ErrSchema, "schema_version", "unsupported schema version",
		"set schema to cloud-assembly/1.0, the one version this tool reads")
	// ErrReferenceSyntax: a malformed ${...} token or a bad escape.
	ErrReferenceSyntax error = errcode.Sub(ErrReference, "reference_syntax", "malformed reference",
		"write a reference as ${LogicalId.attribute}; escape a literal ${ as \\${ and a backslash as \\\\")
	// ErrReferenceDroplet: a reference or dependsOn names no droplet.
	ErrReferenceDroplet error = errcode.Sub(ErrReference, "reference_droplet", "reference to a droplet the assembly does not hold",
		"name a droplet the assembly holds, in the reference or in dependsOn")
	// ErrReferenceAttribute: a reference names an attribute the droplet's
	// kind does not output.
	ErrReferenceAttribute error = errcode.Sub(ErrReference, "reference_attribute", "reference to an attribute the droplet does not output",
		"reference an attribute the droplet's kind outputs: this one could never be resolved")
	// ErrPropertyMissing: a property the kind requires is absent.
	ErrPropertyMissing error = errcode.Sub(droplets.ErrProperty, "property_missing", "required property missing",
		"add the property the droplet's kind requires (the README lists each kind's properties)")
	// ErrPropertyType: a property has the wrong JSON type.
	ErrPropertyType error = errcode.Sub(droplets.ErrProperty, "property_type", "property of the wrong type",
		"give the property a value of the JSON type its kind documents")
	// ErrPathUnsafe: a path property is absolute, leaves the archive (or
	// its folder) with "..", or is not a plain archive path.
	ErrPathUnsafe error = errcode.Sub(ErrInsecurePath, "path_unsafe", "path leaves the archive",
		"name a path inside the project folder (relative, no ..)")
)
